import { PROTOTYPE_NAMES } from './hostile';

/**
 * The hostile ingredients of a request, named, so that a 500 seen on twenty routes reads as
 * one defect ("500 with a prototype-named query parameter") instead of twenty. Most telling first.
 */
export function triggersOf(r: { method: string; path: string; body?: string | Buffer; note?: string }): string[] {
  const out: string[] = [];
  if (!['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'].includes(r.method)) out.push(`method ${r.method}`);
  if (r.path.length > 64 * 1024) out.push('request target over 64 KB');
  const body = r.body === undefined ? '' : typeof r.body === 'string' ? r.body : r.body.toString('latin1');
  if (body.length > 4 * 1024 * 1024) out.push('body over MAX_BODY_BYTES');
  const q = r.path.indexOf('?');
  const path = q < 0 ? r.path : r.path.slice(0, q);
  const query = q < 0 ? '' : r.path.slice(q + 1);
  const names = query.split('&').map((p) => safeDecode(p.split('=')[0]));
  if (names.some((n) => (PROTOTYPE_NAMES as readonly string[]).includes(n))) out.push('prototype-named query parameter');
  if (/%00/i.test(path)) out.push('NUL (%00) in the path');
  if (/%00/i.test(query)) out.push('NUL (%00) in the query');
  if (body.length <= 4 * 1024 * 1024) {
    if (/"[^"]*\\u0000[^"]*"\s*:/.test(body)) out.push('NUL in a JSON key');
    if (/\\u0000/.test(body)) out.push('NUL (\\u0000) in a JSON string');
    if (/\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])|(?<!\\ud[89ab][0-9a-f]{2})\\ud[c-f][0-9a-f]{2}/i.test(body)) out.push('lone surrogate in JSON');
  }
  const broken = /%(?![0-9A-F]{2})/i.test(r.path);
  if (broken) out.push('broken percent-encoding');
  else if (safeDecode(r.path) === r.path && /%[89A-F][0-9A-F]/i.test(r.path)) out.push('invalid UTF-8 in path or query');
  if (/nested/.test(r.note ?? '')) out.push('deeply nested JSON');
  if (/"(__proto__|constructor|prototype)"\s*:/.test(body)) out.push('prototype-named JSON key');
  if (r.path.length > 16 * 1024 && r.path.length <= 64 * 1024) out.push('request target over 16 KB');
  return out;
}

/** The decoded text, or the input itself when it is not valid percent-encoded UTF-8. */
function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
