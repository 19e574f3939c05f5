import type { Finding } from '../support/findings';
import { proxyErrorProblem } from '../support/envelope';
import type { RawOutcome, RawResponse } from '../support/raw-http';
import type { ProxyCase } from './cases';
import type { FramingCase } from './framing';

export interface HttpAnswer {
  status: number;
  contentType: string;
  text: string;
}

/** The checks on one body/header/auth case's answer. */
export function judgeCase(c: ProxyCase, a: HttpAnswer | { error: string }): Finding[] {
  const at = `POST ${c.path}`;
  const what = c.note ?? '';
  if ('error' in a) {
    const unusual = unusualPart(what) ?? c.why ?? mainIngredient(what);
    return [{ key: `no answer: ${a.error.replace(/:.*/, '')} (${unusual})`, detail: a.error, request: c, where: at }];
  }
  const out: Finding[] = [];
  // Grouped by the route's format (the aliases behave as their /v1 route) and the ingredient that matters.
  const cause = c.expect === 'ok' ? 'a valid call' : c.why ?? mainIngredient(what);
  const f = (key: string, detail: string) => out.push({ key: `${key} (${cause})`, detail, request: c, where: at });
  // A 5xx is the one finding of its answer: what else would be due does not matter then.
  if (a.status >= 500) {
    f(`${a.status}`, `answered ${a.status}: ${a.text.slice(0, 200)}`);
    return out;
  }
  if (a.status >= 400) {
    const problem = proxyErrorProblem(a.text, c.endpoint === 'messages');
    // A body that is not JSON at all comes from the HTTP layer, set off by the request's shape rather than its caller.
    if (problem?.startsWith('not JSON')) out.push({ key: `${a.status} from the HTTP layer, not JSON (${unusualPart(what) ?? cause})`, detail: problem, request: c, where: at });
    else if (problem) f(`${a.status} without the ${c.endpoint === 'messages' ? 'Anthropic error shape' : 'error envelope'}`, problem);
  }
  if (c.expect === 'ok' && a.status !== 200) f(`${a.status} for a valid call`, `answered ${a.status}: ${a.text.slice(0, 200)}`);
  if ((c.expect === 'refused' || c.expect === 'client-error') && (a.status < 400 || a.status >= 500)) f(`${a.status} where a 4xx is due`, `answered ${a.status}: ${a.text.slice(0, 160)}`);
  if (a.status === 200 && (c.expect === 'ok' || c.expect === 'any')) {
    if (c.stream && !/^text\/event-stream/i.test(a.contentType)) f('200 stream without text/event-stream', `content-type ${a.contentType}`);
    if (!c.stream && !/json/i.test(a.contentType)) f('200 answer that is not JSON', `content-type ${a.contentType}: ${a.text.slice(0, 100)}`);
  }
  return out;
}

/** The unusual headers of a case, if any (they, not the body, decide transport-level answers). */
function unusualPart(note: string): string | undefined {
  return note.split('; ').find((p) => p.startsWith('headers ') || p.startsWith('also '));
}

/** The first ingredient of a case's note that is not the caller, for grouping. */
function mainIngredient(note: string): string {
  const parts = note.split('; ');
  const caller = parts.find((p) => p.startsWith('caller '));
  const rest = parts.filter((p) => !p.startsWith('caller '));
  const pick = rest[0]?.replace(/ ".*$| \[.*$| \{.*$/, '') ?? '';
  return [caller && !/funded|root/.test(caller) ? caller : '', pick].filter(Boolean).join(', ') || 'valid body';
}

/** uWS's own answer (an HTML page naming it), given before any code of ours ran. */
export function fromUws(r: RawResponse): boolean {
  return !r.headers['content-type'] && r.body.includes('uWebSockets/');
}

/** The checks on a raw-socket framing case. Returns findings and whether it ended in a bounded wait. */
export function judgeFraming(c: FramingCase, o: RawOutcome): { findings: Finding[]; waited: boolean } {
  const out: Finding[] = [];
  const name = c.note ?? 'framing';
  const f = (what: string, detail: string) => out.push({ key: `framing: ${name} → ${what}`, detail: `${detail} (${o.ending} after ${o.ms} ms${c.detail ? `; ${c.detail}` : ''})`, request: c });
  const finals = o.responses.filter((r) => r.status >= 200);
  // A uWS page with a status documented for this case (docs/decisions.md) is its answer, 505 included.
  const documented = (r: RawResponse) => fromUws(r) && (c.uws ?? []).includes(r.status);
  const shown = (r: RawResponse) => `${r.status}${fromUws(r) ? ' (uWS page)' : ''}`;
  if (o.ending === 'refused') return { findings: [{ key: 'gateway refused connections', detail: 'connection refused', request: c }], waited: false };
  if (finals.some((r) => r.status >= 500 && !documented(r))) {
    for (const r of finals) if (r.status >= 500 && !documented(r)) f(shown(r), r.body.toString('utf8').slice(0, 200));
    return { findings: out, waited: false };
  }
  for (const r of finals) {
    if (r.status >= 400 && !fromUws(r)) {
      const problem = proxyErrorProblem(r.body.toString('utf8'), false);
      if (problem) f(`${r.status} without the error envelope`, problem);
    }
  }
  if (c.abandon) return { findings: out, waited: false };
  const noAnswer = o.ending === 'reset' ? 'connection reset without an answer' : 'connection closed without an answer';
  switch (c.expect) {
    case 'ok':
      if (finals.length < c.responses) f(finals.length ? `${finals.length} of ${c.responses} answers` : o.ending === 'waited' ? 'no answer (server kept waiting)' : noAnswer, `statuses: ${finals.map(shown).join(', ') || 'none'}`);
      else if (finals.some((r) => r.status !== 200)) f(`${finals.map(shown).join(', ')} instead of 200`, finals.map((r) => r.body.toString('utf8').slice(0, 120)).join(' | '));
      break;
    case 'answer':
      if (!finals.length) f(o.ending === 'waited' ? 'no answer (server kept waiting)' : noAnswer, 'an answer (any status below 500) was due');
      break;
    case 'refuse':
      if (!finals.length) f(o.ending === 'waited' ? 'no answer (server kept waiting)' : noAnswer, 'HTTP asks for a 4xx (400 for broken framing)');
      else if ((finals[0].status < 400 || finals[0].status >= 500) && !documented(finals[0])) f(`${shown(finals[0])} where a 4xx is due`, finals[0].body.toString('utf8').slice(0, 120));
      break;
    case 'may-wait':
      if (finals.length && (finals[0].status < 400 || finals[0].status >= 500) && !documented(finals[0])) f(`${shown(finals[0])} for an incomplete request`, finals[0].body.toString('utf8').slice(0, 120));
      break;
  }
  return { findings: out, waited: o.ending === 'waited' };
}
