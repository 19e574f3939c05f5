import { formatInt } from './format';

export function Pager(props: { page: number; pages: number; total: number; busy?: boolean; onPage: (page: number) => void }) {
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" class="btn btn-small" disabled={props.busy || props.page <= 1} onClick={() => props.onPage(1)} aria-label="First page">«</button>
      <button type="button" class="btn btn-small" disabled={props.busy || props.page <= 1} onClick={() => props.onPage(props.page - 1)}>Previous</button>
      <span class="pager-status" data-testid="pager-status">
        Page {formatInt(props.page)} of {formatInt(Math.max(props.pages, 1))} · {formatInt(props.total)} entries
      </span>
      <button type="button" class="btn btn-small" disabled={props.busy || props.page >= props.pages} onClick={() => props.onPage(props.page + 1)}>Next</button>
      <button type="button" class="btn btn-small" disabled={props.busy || props.page >= props.pages} onClick={() => props.onPage(props.pages)} aria-label="Last page">»</button>
    </nav>
  );
}
