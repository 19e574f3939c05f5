import type { AdminRequest } from './requests';
import type { Answer } from './judge';

type Send = (r: AdminRequest) => Promise<Answer | { error: string }>;

/** The failure's kind: the status of a 5xx, or that no answer came. */
const kind = (a: Answer | { error: string }) => ('error' in a ? 'no answer' : a.status >= 500 ? String(a.status) : null);

/**
 * Shrinks a failing read to the smallest request that still fails the same way: the path
 * alone, or the path with one of its query parameters. (Reads only: a write's failure may
 * depend on the state earlier writes left, and resending it would change that state.)
 */
export async function reduceRead(r: AdminRequest, send: Send, failure: Answer | { error: string }): Promise<string | null> {
  const want = kind(failure);
  if (r.write || want === null) return null;
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
    if (kind(a) === want) return `reduced: ${c.method} ${middleClip(c.path)}${c.body ? ' (with the body)' : ''} → ${'error' in a ? a.error : a.status}`;
  }
  return null;
}

function withoutContentType(h: Record<string, string>): Record<string, string> {
  const { 'content-type': _, ...rest } = h;
  return rest;
}

/** Head and tail of a long path, so a suffix that matters still shows. */
function middleClip(p: string): string {
  return p.length <= 300 ? p : `${p.slice(0, 160)}…(${p.length} chars)…${p.slice(-100)}`;
}
