import { createEffect, For, on, onCleanup, onMount } from 'solid-js';
// Before uPlot, which reads navigator.language as it loads (see locale.ts).
import '../locale';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { language, t } from '../i18n';
import { formatAxisTime } from './format';

export interface TimeSeries {
  label: string;
  /** One value per x; null leaves a gap. */
  values: (number | null)[];
  color: string;
  /** Bars for counts per period, a line (with points) for rates and per-request values. */
  style: 'bars' | 'line';
  format: (n: number) => string;
  /** Counts: axis ticks at whole numbers only. */
  integer?: boolean;
  /** A second y axis on the right for this series (its own unit). */
  right?: boolean;
}

const bars = uPlot.paths.bars!({ size: [0.6, 48], align: 0 });
const INTEGER_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000, 1e6, 1e7, 1e8];
/** Ticks of a chart of days: whole days only, so a one-day chart reads its day, not the hours around it. */
const DAY_STEPS = [1, 2, 3, 7, 14, 28, 56, 91, 182, 364].map((n) => n * 86_400);

/**
 * A time chart drawn by uPlot on a canvas sized to its container. The numbers are also in a
 * table read by screen readers (and by the browser tests), since a canvas says nothing.
 */
export function TimeChart(props: {
  label: string;
  /** Seconds since the epoch, ascending. */
  x: number[];
  series: TimeSeries[];
  /** How an x value reads in the table. */
  formatX: (sec: number) => string;
  height?: number;
  testId?: string;
  /** Seconds between points (a day, an hour): the x axis spans half a step beyond the ends, so one point is a bar, not a year. */
  step: number;
}) {
  let box!: HTMLDivElement;
  let chart: uPlot | undefined;
  const height = () => props.height ?? 220;
  const left = () => props.series.find((s) => !s.right) ?? props.series[0];

  const options = (width: number): uPlot.Options => ({
    width,
    height: height(),
    // Days and hours are UTC, as bills and the usage records count them.
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    legend: { show: true, live: true },
    cursor: { drag: { x: false, y: false } },
    scales: {
      // From the points themselves: with one point uPlot widens the axis by 86400 / ms (1000 days in seconds).
      x: { time: true, range: (_u, min, max) => (props.x.length ? [props.x[0] - props.step / 2, props.x[props.x.length - 1] + props.step / 2] : [min, max]) },
      y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] }, r: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
    axes: [
      // Ticks in the console's language (uPlot's own names are English), as UTC like the rest.
      // A day reads `10月30日` or `Oct 30`: ticks at least 72 px apart keep them from running together on a phone.
      { stroke: '#667085', grid: { stroke: '#eef0f3' }, space: 72, values: (_u, ticks, _axis, _space, incr) => ticks.map((s, i) => formatAxisTime(s, incr, i === 0)), ...(props.step >= 86_400 ? { incrs: DAY_STEPS } : {}) },
      { stroke: '#667085', grid: { stroke: '#eef0f3' }, size: 80, values: (_u, ticks) => ticks.map((tick) => left().format(tick)), ...(left().integer ? { incrs: INTEGER_STEPS } : {}) },
      ...(props.series.some((s) => s.right)
        ? [{ scale: 'r', side: 1 as const, stroke: '#667085', grid: { show: false }, size: 64, values: (_u: uPlot, ticks: number[]) => ticks.map((tick) => props.series.find((s) => s.right)!.format(tick)) }]
        : []),
    ],
    series: [
      { label: t('chart.time'), value: (_u, v) => (v === null ? '' : props.formatX(v)) },
      ...props.series.map((s): uPlot.Series => ({
        label: s.label,
        scale: s.right ? 'r' : 'y',
        stroke: s.color,
        fill: s.style === 'bars' ? `${s.color}cc` : undefined,
        width: s.style === 'bars' ? 0 : 2,
        paths: s.style === 'bars' ? bars : undefined,
        points: { show: s.style === 'line', size: 5, fill: s.color },
        spanGaps: false,
        value: (_u, v) => (v === null || v === undefined ? '–' : s.format(v)),
      })),
    ],
  });

  const data = (): uPlot.AlignedData => [props.x, ...props.series.map((s) => s.values)];

  const width = () => Math.max(240, Math.floor(box.clientWidth));
  onMount(() => {
    chart = new uPlot(options(width()), data(), box);
    const ro = new ResizeObserver(() => chart?.setSize({ width: width(), height: height() }));
    ro.observe(box);
    onCleanup(() => {
      ro.disconnect();
      chart?.destroy();
    });
  });
  // The legend's labels are fixed when uPlot draws a chart: another language draws it anew.
  createEffect(on(language, () => {
    chart?.destroy();
    chart = new uPlot(options(width()), data(), box);
  }, { defer: true }));
  // New numbers (another scope, a refetch) redraw the same chart.
  createEffect(() => {
    const d = data();
    chart?.setData(d);
  });

  return (
    <figure class="time-chart" data-testid={props.testId}>
      <div class="chart-box" ref={box} role="img" aria-label={props.label} />
      {/* The wrapper clips: a table never gets shorter than its rows. */}
      <div class="sr-only">
      <table>
        <caption>{props.label}</caption>
        <thead><tr><th>{t('chart.time')}</th><For each={props.series}>{(s) => <th>{s.label}</th>}</For></tr></thead>
        <tbody>
          <For each={props.x}>
            {(x, i) => (
              <tr data-x={x}>
                <td>{props.formatX(x)}</td>
                <For each={props.series}>{(s) => <td>{s.values[i()] === null ? '–' : s.format(s.values[i()]!)}</td>}</For>
              </tr>
            )}
          </For>
        </tbody>
      </table>
      </div>
    </figure>
  );
}
