import type { AdminRequest } from './requests';
import type { Finding } from '../support/findings';
import { envelopeProblem } from '../support/envelope';
import { changedTables, type Fingerprint } from './fingerprint';
import { triggersOf } from '../support/triggers';

export interface Answer {
  status: number;
  text: string;
}

/** What each 2xx write must add to the operation log (any one of). */
const ACTIONS: Record<string, string[]> = {
  'accounts-create': ['add_user'],
  'accounts-update': ['update_user', 'update_self'],
  'accounts-updateByPost': ['update_user', 'update_self'],
  'accounts-remove': ['delete_user'],
  'accounts-rotateSelf': ['rotate_self'],
  'config-batch': ['update_conf'],
  'config-put': ['update_config'],
  'config-post': ['update_config'],
  'config-remove': ['delete_config'],
  'keys-create': ['add_key'],
  'keys-update': ['update_key'],
  'keys-updateByPost': ['update_key'],
  'keys-remove': ['delete_key'],
  'news-createSystem': ['add_news'],
  'news-createTargeted': ['add_news'],
  'news-removeSystem': ['delete_news'],
  'news-removeTargeted': ['delete_news'],
};

/**
 * uWS's own answers (an HTML page, before any code of ours ran) that docs/decisions.md
 * accepts, by the request ingredient that sets them off. Any other page of uWS is a finding.
 * Counted for the run's report.
 */
const UWS_ANSWERS: readonly { status: number; trigger: string }[] = [
  // The Node 20 binary's request-line parser stops at about 128 KiB; a head past
  // UWS_HTTP_MAX_HEADERS_SIZE that arrives in pieces (always, on the Node 22/24 binaries) is 431.
  { status: 505, trigger: 'request target over 64 KB' },
  { status: 431, trigger: 'request target over 64 KB' },
  { status: 431, trigger: 'request target over 16 KB' },
];
export const uwsAnswers = new Map<string, number>();

/** The intake refuses a path the database could not store (NUL, lone surrogate) before any route is matched. */
const refusedPath = (r: AdminRequest, a: Answer) => a.status === 400 && (r.method === 'HEAD' ? /%00/i.test(r.path.split('?')[0]) : a.text.includes('"message":"path: '));

/** The checks on one answer that need no database: it came, it is not a 5xx, errors are enveloped, access holds. */
export function judgeAnswer(r: AdminRequest, a: Answer | { error: string }): Finding[] {
  const at = `${r.method} ${r.shape}`;
  const triggers = triggersOf(r);
  // One defect seen on many routes is one finding, named by what set it off.
  // A dropped connection is most likely the transport's doing (method, size); a 5xx the content's.
  const transport = (t: string) => /^method |request target over|body over/.test(t);
  const cause = (what: string) => (what.startsWith('no answer') ? triggers[0] : triggers.find((t) => !transport(t)) ?? triggers[0]);
  const keyed = (what: string, byMethod = false) => (byMethod
    ? { key: `${r.method} ${what}`, where: at }
    : triggers.length ? { key: `${what} with ${cause(what)}`, where: at } : { key: `${at} → ${what}` });
  const also = triggers.length > 1 ? ` (the request had: ${triggers.join(', ')})` : '';
  if ('error' in a) return [{ ...keyed(`no answer (${a.error.replace(/:.*/, '')})`), detail: `connection ended without a response: ${a.error}${also}`, request: r }];
  const out: Finding[] = [];
  const f = (what: string, detail: string, byMethod = false) => out.push({ ...keyed(what, byMethod), detail: detail + also, request: r });
  // An error that is not JSON comes from the uWebSockets.js HTTP parser itself, before any
  // code of ours runs: accepted only where docs/decisions.md says so.
  // (A HEAD answer has no body to tell; our code never answers 505 or 431.)
  if (a.status >= 400 && (r.method === 'HEAD' ? a.status === 505 || a.status === 431 : !a.text.trimStart().startsWith('{'))) {
    const known = UWS_ANSWERS.find((u) => u.status === a.status && triggers.includes(u.trigger));
    if (!known) return [{ ...keyed(`${a.status} from the uWS parser, not JSON`), detail: `${a.text.slice(0, 120)}${also}`, request: r }];
    const key = `${a.status} (${known.trigger})`;
    uwsAnswers.set(key, (uwsAnswers.get(key) ?? 0) + 1);
    return [];
  }
  // A 5xx is the one finding of its answer.
  if (a.status >= 500) {
    f(String(a.status), `answered ${a.status}: ${a.text.slice(0, 200)}`);
    return out;
  }
  if (a.status >= 400 && r.method !== 'HEAD') {
    const problem = envelopeProblem(a.text);
    if (problem) f(`${a.status} without the error envelope`, problem);
  }
  // Unknown paths and methods are 404 (docs/decisions.md); a body may be judged (400/413/415) before the route.
  // So may the path, when it holds what the database cannot store.
  const bodyFirst = (r.body !== undefined && [400, 413, 415].includes(a.status)) || refusedPath(r, a);
  if (r.kind === 'unknown' && a.status !== 404 && !bodyFirst) f(`${a.status} for an unknown path (expected 404)`, `answered ${a.status}: ${a.text.slice(0, 120)}`, true);
  // A HEAD where the path has a GET is that GET, whatever it answers (401, 403, 200…).
  if (r.kind === 'method' && !r.headOfGet && a.status !== 404 && !bodyFirst) f(`${a.status} for a method the path does not have (expected 404)`, `answered ${a.status}: ${a.text.slice(0, 120)}`, true);
  if (r.kind === 'documented' && r.op && a.status >= 200 && a.status < 300) {
    const op = r.op;
    if (op.access !== 'public' && (r.actor === 'none' || r.actor === 'bad' || r.actor === 'malformed')) f(`${a.status} without a valid key`, `a ${r.actor} key got ${a.status}`);
    if (r.actor === 'sub' && (op.access === 'owner' || op.access === 'root')) f(`${a.status} for a subaccount on an ${op.access}-only route`, `answered ${a.status}`);
    if (!op.statuses.includes(a.status)) f(`undocumented ${a.status}`, `documented: ${op.statuses.join(', ')}`);
  }
  return out;
}

/**
 * Nothing half-written: a refused write leaves every table and the operation log as they
 * were; an accepted one adds exactly its own operation-log entry.
 */
export function judgeWrite(r: AdminRequest, a: Answer, before: Fingerprint, after: Fingerprint): Finding[] {
  const at = `${r.method} ${r.shape}`;
  const logged = after.oplog - before.oplog;
  const changed = changedTables(before, after);
  if (a.status >= 200 && a.status < 300 && r.kind === 'documented' && r.op) {
    const expected = ACTIONS[r.op.id];
    if (logged !== 1) return [{ key: `${at} → ${a.status} with ${logged} operation-log entries (expected 1)`, detail: `tables changed: ${changed.join(', ') || 'none'}`, request: r }];
    if (expected && !expected.includes(after.lastAction ?? '')) return [{ key: `${at} → ${a.status} logged ${after.lastAction}`, detail: `expected ${expected.join(' or ')}`, request: r }];
    return [];
  }
  if (a.status >= 200 && a.status < 300) return [];
  if (logged !== 0 || changed.length) {
    return [{ key: `${at} → ${a.status} but wrote to ${[...changed, ...(logged ? ['operation_logs'] : [])].join(', ')}`, detail: `a refused request changed the database (${logged} log entries)`, request: r }];
  }
  return [];
}
