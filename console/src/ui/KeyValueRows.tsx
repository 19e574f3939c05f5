import { Index, Show } from 'solid-js';
import { t } from '../i18n';

export interface Row { key: string; value: string }

/** Editable rows of a string→string map (model → deployment, model → api-version). */
export function KeyValueRows(props: {
  id: string;
  rows: Row[];
  onChange: (rows: Row[]) => void;
  keyLabel: string;
  valueLabel: string;
  keyPlaceholder?: string;
  valuePlaceholder?: string;
}) {
  const set = (i: number, patch: Partial<Row>) => props.onChange(props.rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <div class="kv" id={props.id}>
      <Show when={props.rows.length > 0}>
        <div class="kv-row kv-head" aria-hidden="true">
          <span>{props.keyLabel}</span><span>{props.valueLabel}</span><span />
        </div>
      </Show>
      {/* Index, not For: rows are replaced on every keystroke and the inputs must keep focus. */}
      <Index each={props.rows}>
        {(row, i) => (
          <div class="kv-row">
            <input aria-label={t('kv.row', { label: props.keyLabel, n: String(i + 1) })} placeholder={props.keyPlaceholder} value={row().key} onInput={(e) => set(i, { key: e.currentTarget.value })} />
            <input aria-label={t('kv.row', { label: props.valueLabel, n: String(i + 1) })} placeholder={props.valuePlaceholder} value={row().value} onInput={(e) => set(i, { value: e.currentTarget.value })} />
            <button type="button" class="btn btn-small btn-ghost" aria-label={t('kv.removeRow', { n: String(i + 1) })} onClick={() => props.onChange(props.rows.filter((_, j) => j !== i))}>{t('common.remove')}</button>
          </div>
        )}
      </Index>
      <button type="button" class="btn btn-small" onClick={() => props.onChange([...props.rows, { key: '', value: '' }])}>{t('kv.addRow')}</button>
    </div>
  );
}

export const toRows = (map: Record<string, string> | undefined): Row[] => Object.entries(map ?? {}).map(([key, value]) => ({ key, value }));

export function fromRows(rows: Row[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of rows) if (r.key.trim()) out[r.key.trim()] = r.value.trim();
  return out;
}
