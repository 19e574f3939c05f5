import type { AdminRequest } from './requests';
import type { Answer } from './judge';

type Send = (r: AdminRequest) => Promise<Answer | { error: string }>;

const bad = (a: Answer | { error: string }) => 'error' in a || a.status >= 500;

/**
 * Shrinks a failing read to the smallest request that still fails the same way: the path
 * alone, or the path with one of its query parameters. (Reads only: a write's failure may
 * depend on the state earlier writes left, and resending it would change that state.)
 */
export async function reduceRead(r: AdminRequest, send: Send): Promise<string | null> {
  if (r.write) return null;
  const q = r.path.indexOf('?');
  const candidates: AdminRequest[] = [];
  const path = q < 0 ? r.path : r.path.slice(0, q);
  if (q >= 0) {
    candidates.push({ ...r, path, body: undefined });
    for (const part of r.path.slice(q + 1).split('&')) candidates.push({ ...r, path: `${path}?${part}`, body: undefined });
  }
  if (r.body !== undefined) candidates.push({ ...r, body: undefined, headers: withoutContentType(r.headers) });
  for (const c of candidates) {
    const a = await send(c);
    if (bad(a)) return `reduced: ${c.method} ${c.path.slice(0, 300)}${c.body ? ' (with the body)' : ''} → ${'error' in a ? a.error : a.status}`;
  }
  return null;
}

function withoutContentType(h: Record<string, string>): Record<string, string> {
  const { 'content-type': _, ...rest } = h;
  return rest;
}
