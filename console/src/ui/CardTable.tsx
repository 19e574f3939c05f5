import { For, type JSX } from 'solid-js';

/** One column of a CardTable: its heading, and its cell of a row. */
export interface Column<T> {
  label: string;
  cell: (row: T) => JSX.Element;
  /** A figure: right-aligned. */
  num?: boolean;
  /** More classes for its cells: `break` for long names, `nowrap` for dates. */
  class?: string;
  /** A long heading that may wrap over two lines. */
  wrapHead?: boolean;
}

/**
 * The console's data table: a heading row and a row per item, each cell labelled with its
 * column, so that on a phone every row becomes a card (`table-cards`) instead of scrolling sideways.
 */
export function CardTable<T>(props: { columns: Column<T>[]; rows: readonly T[]; testId?: string; rowAttrs?: (row: T) => Record<string, string | number> }) {
  const cellClass = (c: Column<T>) => [c.num ? 'num' : '', c.class ?? ''].filter(Boolean).join(' ') || undefined;
  return (
    <table class="table table-compact table-cards" data-testid={props.testId}>
      <thead><tr><For each={props.columns}>{(c) => <th scope="col" class={[c.num ? 'num' : '', c.wrapHead ? 'wrap' : ''].filter(Boolean).join(' ') || undefined}>{c.label}</th>}</For></tr></thead>
      <tbody>
        <For each={props.rows}>
          {(row) => (
            <tr {...(props.rowAttrs?.(row) ?? {})}>
              <For each={props.columns}>{(c) => <td data-label={c.label} class={cellClass(c)}>{c.cell(row)}</td>}</For>
            </tr>
          )}
        </For>
      </tbody>
    </table>
  );
}
