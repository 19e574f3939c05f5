import { For, Show, createSignal, onCleanup, onMount } from 'solid-js';

export interface Point { label: string; value: number; title: string }

/** A round upper bound for the axis: 1, 2 or 5 times a power of ten. */
function niceMax(max: number): number {
  if (max <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  return ([1, 2, 5, 10].map((m) => m * p).find((v) => v >= max) ?? max);
}

const H = 200, LEFT = 56, RIGHT = 8, TOP = 10, BOTTOM = 26;

/** Daily bars in an SVG that scales with its container; each bar carries a tooltip. */
/** `integer`: counts, so the axis never shows half a request. */
export function BarChart(props: { points: Point[]; format: (n: number) => string; label: string; color?: string; integer?: boolean }) {
  // Drawn in real pixels of the container, so text keeps its size on a phone.
  let box!: HTMLDivElement;
  const [W, setW] = createSignal(640);
  onMount(() => {
    const measure = () => setW(Math.max(240, Math.floor(box.clientWidth)));
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(box);
    onCleanup(() => ro.disconnect());
  });
  const top = () => {
    const t = niceMax(Math.max(0, ...props.points.map((p) => p.value)));
    return props.integer ? Math.max(2, Math.ceil(t / 2) * 2) : t;
  };
  const slot = () => (W() - LEFT - RIGHT) / Math.max(props.points.length, 1);
  const y = (v: number) => TOP + (H - TOP - BOTTOM) * (1 - v / top());
  // Label about every fifth day so the axis stays readable on a phone.
  const every = () => Math.max(1, Math.ceil(props.points.length / Math.max(2, Math.floor(W() / 90))));
  return (
    <div class="chart-box" ref={box}>
    <svg class="chart" width={W()} height={H} viewBox={`0 0 ${W()} ${H}`} role="img" aria-label={props.label}>
      <For each={[0, 0.5, 1]}>
        {(f) => (
          <g>
            <line x1={LEFT} x2={W() - RIGHT} y1={y(top() * f)} y2={y(top() * f)} class="chart-grid" />
            <text x={LEFT - 6} y={y(top() * f) + 4} class="chart-axis" text-anchor="end">{props.format(top() * f)}</text>
          </g>
        )}
      </For>
      <For each={props.points}>
        {(p, i) => (
          <g>
            <rect
              x={LEFT + i() * slot() + slot() * 0.15}
              width={Math.max(slot() * 0.7, 1)}
              y={y(p.value)}
              height={Math.max(H - BOTTOM - y(p.value), p.value > 0 ? 1 : 0)}
              class="chart-bar"
              style={props.color ? { fill: props.color } : undefined}
            >
              <title>{p.title}</title>
            </rect>
            <Show when={i() % every() === 0}>
              <text x={LEFT + i() * slot() + slot() / 2} y={H - 8} class="chart-axis" text-anchor="middle">{p.label}</text>
            </Show>
          </g>
        )}
      </For>
    </svg>
    </div>
  );
}

export interface Share { name: string; value: number; detail: string }

/** Horizontal bars relative to the largest entry; plain HTML so long model names wrap. */
export function ShareBars(props: { items: Share[]; empty: string }) {
  const max = () => Math.max(0, ...props.items.map((i) => i.value));
  return (
    <Show when={props.items.length > 0} fallback={<p class="muted">{props.empty}</p>}>
      <ul class="share-bars">
        <For each={props.items}>
          {(item) => (
            <li>
              <div class="share-head">
                <span class="share-name">{item.name}</span>
                <span class="share-detail">{item.detail}</span>
              </div>
              <div class="share-track"><div class="share-fill" style={{ width: `${max() > 0 ? (item.value / max()) * 100 : 0}%` }} /></div>
            </li>
          )}
        </For>
      </ul>
    </Show>
  );
}
