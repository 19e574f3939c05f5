import { For, Show } from 'solid-js';
import { Field } from '../ui/Field';
import { formatInt } from '../ui/format';
import { t } from '../i18n';
import { FIRST_DAY, LAST_DAY, MAX_RANGE_DAYS, problemField, RECENT_DAYS, withKind, type PeriodDraft, type PeriodKind, type PeriodProblem } from './usage-period';

const KINDS: PeriodKind[] = ['today', 'day', 'range', 'recent'];

export const problemText = (p: PeriodProblem) =>
  t(`usage.problems.${p}`, { days: formatInt(MAX_RANGE_DAYS), first: FIRST_DAY, last: LAST_DAY });

/**
 * The period picker: a kind, then the day or the two days of a range as date inputs (UTC days,
 * as the API counts them). A change applies at once; a draft that names no period says why under
 * the field it concerns, and the figures of the last good period stay shown.
 */
export function UsagePeriod(props: { value: PeriodDraft; problem: PeriodProblem | null; onChange: (d: PeriodDraft) => void }) {
  const set = (k: 'day' | 'start' | 'end', v: string) => props.onChange({ ...props.value, [k]: v });
  const error = (field: 'day' | 'start' | 'end') => (props.problem && problemField(props.problem) === field ? problemText(props.problem) : null);
  const dateInput = (id: string, field: 'day' | 'start' | 'end') => (
    <input id={id} type="date" min={FIRST_DAY} max={LAST_DAY} value={props.value[field]} aria-invalid={error(field) ? 'true' : undefined}
      aria-describedby={error(field) ? `${id}-error` : undefined} onChange={(e) => set(field, e.currentTarget.value)} />
  );
  return (
    <form class="card stack" onSubmit={(e) => e.preventDefault()} data-testid="usage-period">
      <div class="filters">
        <Field label={t('usage.period')} for="usage-period-kind">
          <select id="usage-period-kind" value={props.value.kind} onChange={(e) => props.onChange(withKind(props.value, e.currentTarget.value as PeriodKind, new Date()))}>
            <For each={KINDS}>{(k) => <option value={k}>{t(`usage.periods.${k}`, { days: formatInt(RECENT_DAYS) })}</option>}</For>
          </select>
        </Field>
        <Show when={props.value.kind === 'day'}>
          <Field label={t('usage.day')} for="usage-day" error={error('day')}>{dateInput('usage-day', 'day')}</Field>
        </Show>
        <Show when={props.value.kind === 'range'}>
          <Field label={t('usage.from')} for="usage-start" error={error('start')}>{dateInput('usage-start', 'start')}</Field>
          <Field label={t('usage.to')} for="usage-end" error={error('end')}>{dateInput('usage-end', 'end')}</Field>
        </Show>
      </div>
      <p class="muted small">
        {t('usage.utcNote')}
        <Show when={props.value.kind === 'range'}>{' '}{t('usage.rangeHint', { days: formatInt(MAX_RANGE_DAYS) })}</Show>
      </p>
    </form>
  );
}
