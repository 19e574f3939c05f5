import type { ProxyCall } from '../call';
import type { Refusal } from '../errors';
import type { Failed } from './attempt';

/** Most failure causes kept per call for its log line. */
const MAX_CAUSES = 12;

/** Why nothing was delivered, gathered over every key, Level and model tried. */
export class Tally {
  attempts = 0;
  onlyRateLimited = true;
  last: Failed | undefined;
  skips = new Set<string>();
  /** Earliest wake-up of a sleeping key that was passed over. */
  wakeAt: number | undefined;
  /** Earliest end of a cool-down of a key passed over because its circuit was open. */
  openUntil: number | undefined;
  lastLevel: number | undefined;
  rateLimitWaitMs = 0;
  /** No further key is tried after this time (FAILOVER_BUDGET_MS from the first attempt). */
  deadline = Infinity;
  /** The budget ran out with keys still untried. */
  budgetSpent = false;
  /** No other key may be tried: an upload already partly sent cannot be sent again. */
  final = false;
  /** The client's body is malformed (formats/shape.ts): its 400 is the answer, whatever key comes next. */
  malformed: Refusal | undefined;
  /** `key <id>: <reason>` of each failed attempt, scrubbed of hosts and secrets: the log line's causes. */
  causes: string[] = [];

  fail(f: Failed, cause?: string): void {
    this.attempts++;
    this.last = f;
    if (f.status !== 429) this.onlyRateLimited = false;
    if (cause !== undefined && this.causes.length < MAX_CAUSES) this.causes.push(cause);
  }

  noteOpen(until: number): void {
    if (this.openUntil === undefined || until < this.openUntil) this.openUntil = until;
  }
}

const retryIn = (at: number, now: number) => String(Math.max(1, Math.ceil((at - now) / 1000)));

/**
 * The answer when every key, Level and fallback model failed. Its message names the model and
 * the request ID, never an upstream host, URL, key or the upstream's own error text (those go
 * to the log under the same request ID): 429 upstream_rate_limited when every attempt was rate
 * limited upstream, 504 upstream_timeout when the last one timed out, 502 upstream_error when
 * the last upstream answered with an error, 503 upstream_unavailable when it could not be
 * reached; with no attempt at all, 503 upstream_unavailable (every key out of rotation after
 * failures), 503 no_available_key (keys asleep after 429s), 400 unsupported_by_provider,
 * 503 no_provider_key.
 */
export function finalError(c: Pick<ProxyCall, 'model' | 'path' | 'level'> & { id?: string }, t: Tally, now = Date.now()): Refusal {
  const model = c.model;
  const ref = c.id ? ` (request ${c.id})` : '';
  if (t.attempts > 0 && t.last) {
    if (t.onlyRateLimited) {
      const wait = Math.max(1, Math.ceil(t.rateLimitWaitMs / 1000));
      return { status: 429, message: `Every provider key for model ${model} is rate limited upstream; retry in ${wait}s${ref}`, code: 'upstream_rate_limited', headers: { 'retry-after': String(wait) } };
    }
    if (t.last.timeout) return { status: 504, message: `The upstream provider did not answer in time for model ${model}${ref}`, code: 'upstream_timeout' };
    if (t.last.status !== undefined) return { status: 502, message: `The upstream provider answered with an error for model ${model}, on every key tried${ref}`, code: 'upstream_error' };
    return { status: 503, message: `The upstream provider could not be reached for model ${model}, on every key tried${ref}`, code: 'upstream_unavailable', headers: { 'retry-after': '1' } };
  }
  // Keys out of rotation after failures, and perhaps others asleep: the earliest return counts.
  if (t.openUntil !== undefined) {
    const at = t.wakeAt !== undefined ? Math.min(t.wakeAt, t.openUntil) : t.openUntil;
    return { status: 503, message: `Every provider key for model ${model} is out of rotation after upstream failures; retry in ${retryIn(at, now)}s${ref}`, code: 'upstream_unavailable', headers: { 'retry-after': retryIn(at, now) } };
  }
  if (t.wakeAt !== undefined) {
    const wait = retryIn(t.wakeAt, now);
    return { status: 503, message: `Every provider key for model ${model} is cooling down; retry in ${wait}s${ref}`, code: 'no_available_key', headers: { 'retry-after': wait } };
  }
  if (t.skips.size > 0) {
    return { status: 400, message: `No provider key can serve ${c.path} for model ${model}: ${[...t.skips].join('; ')}`, code: 'unsupported_by_provider' };
  }
  return { status: 503, message: `No enabled provider key at Level ${t.lastLevel ?? c.level} for model ${model}`, code: 'no_provider_key' };
}
