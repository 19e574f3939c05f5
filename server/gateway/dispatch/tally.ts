import type { ProxyCall } from '../call';
import type { Refusal } from '../errors';
import type { Failed } from './attempt';

/** Why nothing was delivered, gathered over every key, Level and model tried. */
export class Tally {
  attempts = 0;
  onlyRateLimited = true;
  last: Failed | undefined;
  skips = new Set<string>();
  /** Earliest wake-up of a sleeping key that was passed over. */
  wakeAt: number | undefined;
  lastLevel: number | undefined;
  rateLimitWaitMs = 0;

  fail(f: Failed): void {
    this.attempts++;
    this.last = f;
    if (f.status !== 429) this.onlyRateLimited = false;
  }
}

/**
 * The answer when every key, Level and fallback model failed: 429 when every attempt was
 * rate limited upstream, 504 when the last one timed out, else 502; with no attempt at all,
 * 503 no_available_key (keys asleep), 400 unsupported_by_provider, 503 no_provider_key.
 */
export function finalError(c: Pick<ProxyCall, 'model' | 'path' | 'level'>, t: Tally, now = Date.now()): Refusal {
  const model = c.model;
  if (t.attempts > 0 && t.last) {
    if (t.onlyRateLimited) {
      const wait = Math.max(1, Math.ceil(t.rateLimitWaitMs / 1000));
      return { status: 429, message: `Every provider key for model ${model} is rate limited upstream; retry in ${wait}s`, code: 'upstream_rate_limited', headers: { 'retry-after': String(wait) } };
    }
    if (t.last.timeout) return { status: 504, message: `The upstream did not answer in time for model ${model}`, code: 'upstream_timeout' };
    return { status: 502, message: `Every provider key failed for model ${model} (last: ${t.last.reason})`, code: 'upstream_error' };
  }
  if (t.wakeAt !== undefined) {
    const wait = Math.max(1, Math.ceil((t.wakeAt - now) / 1000));
    return { status: 503, message: `Every provider key for model ${model} is cooling down; retry in ${wait}s`, code: 'no_available_key', headers: { 'retry-after': String(wait) } };
  }
  if (t.skips.size > 0) {
    return { status: 400, message: `No provider key can serve ${c.path} for model ${model}: ${[...t.skips].join('; ')}`, code: 'unsupported_by_provider' };
  }
  return { status: 503, message: `No enabled provider key at Level ${t.lastLevel ?? c.level} for model ${model}`, code: 'no_provider_key' };
}
