import type { PooledKey } from '../../state/provider-keys/key-pool';
import { isSkip, UpstreamSetupError, type Prepared } from '../providers/types';
import type { ProxyCall, ProxyDeps } from '../call';
import { attempt, type Delivered, type Failed } from './attempt';
import { levelPlan, switchScope } from './levels';
import { sendProxyError } from '../errors';

/** Why nothing was delivered, gathered over every key, Level and model tried. */
class Tally {
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

/** The request body for a model: the client's bytes unless the model or stream options change. */
function bodyFor(c: ProxyCall, model: string): Buffer {
  if (c.body && c.bodyModel === model) return c.body;
  let body = c.raw;
  if (model !== c.requestedModel || c.injectUsage) {
    c.doc.model = model;
    if (c.injectUsage) {
      const so = c.doc.stream_options;
      c.doc.stream_options = { ...(typeof so === 'object' && so !== null ? so : {}), include_usage: true };
    }
    body = Buffer.from(JSON.stringify(c.doc));
  }
  c.body = body;
  c.bodyModel = model;
  return body;
}

/**
 * Serves an admitted call: the mapped model, then its MODEL_FAILOVER chain; per model the
 * Levels of `levelPlan`; per Level up to `maxAttemptsPerLevel` keys in round-robin order.
 * Only failures before the first byte move on (connection errors, timeouts, 408, 429, 5xx,
 * and 401/403 which also disable the key); any other upstream answer is the client's.
 */
export async function dispatch(d: ProxyDeps, c: ProxyCall): Promise<Delivered | null> {
  const tally = new Tally();
  const ownerId = c.row.ownerId;
  const chain = c.owner.failover.size ? c.owner.failover.match(c.model) : undefined;
  const models = chain ? [c.model, ...chain.filter((m) => m !== c.model && c.profile.models.allows(m))] : [c.model];
  for (let i = 0; i < models.length; i++) {
    const model = models[i];
    const start = i === 0 ? c.level : c.profile.levelMapper.match(model) ?? c.owner.levelMapper.match(model) ?? c.row.level;
    for (const level of levelPlan(start, c.owner.switchOver, ownerId, d.limits, c.profile.levels, Date.now())) {
      tally.lastLevel = level;
      const done = await tryLevel(d, c, model, level, tally);
      if (done) return done === true ? null : done;
      if (c.ex.aborted) return null;
    }
  }
  finalError(d, c, tally);
  return null;
}

/** The delivered answer, true when the client left, false to try the next Level. */
async function tryLevel(d: ProxyDeps, c: ProxyCall, model: string, level: number, tally: Tally): Promise<Delivered | boolean> {
  const ownerId = c.row.ownerId;
  // Keys already used at this Level; allocated only when a second key is needed.
  let exclude: Set<number> | undefined;
  let previous = -1;
  let renewed: Set<number> | undefined;
  let staleRetried = false;
  let attempts = 0;
  while (attempts < d.settings.maxAttemptsPerLevel) {
    if (previous !== -1) (exclude ??= new Set()).add(previous);
    const key = d.pool.pick(ownerId, level, exclude);
    if (!key) {
      noteSleepers(d, c, level, exclude, tally);
      return false;
    }
    previous = key.id;
    let prepared: Prepared;
    try {
      prepared = await d.kinds.of(key).prepare(key, { endpoint: c.endpoint, model, headers: c.ex.headers });
    } catch (err) {
      if (c.ex.aborted) return true;
      attempts++;
      const e = err instanceof UpstreamSetupError ? err : new UpstreamSetupError('retryable', (err as Error).message);
      if (e.kind === 'auth') d.health.refused(key, e.status ?? 401, e.message);
      else d.limits.noteAbnormal(switchScope(ownerId, level), Date.now());
      tally.fail({ kind: 'failed', reason: e.message, status: e.status });
      continue;
    }
    if (c.ex.aborted) return true;
    if (isSkip(prepared)) {
      tally.skips.add(prepared.skip);
      continue;
    }
    attempts++;
    const outcome = await attempt({
      ex: c.ex,
      anthropicClient: c.anthropic,
      client: d.upstream,
      target: prepared,
      body: bodyFor(c, prepared.model ?? model),
      headersTimeoutMs: d.settings.upstreamTimeoutMs,
      idleTimeoutMs: d.settings.streamIdleTimeoutMs,
      dropUsageOnly: c.injectUsage && prepared.format === 'openai',
    });
    if (outcome.kind === 'client-gone') return true;
    if (outcome.kind === 'delivered') {
      c.servedBy = key;
      c.servedLevel = level;
      c.servedModel = model;
      return outcome;
    }
    if (outcome.stale && !staleRetried) {
      // The upstream closed a kept connection as the request went out, unread: once per
      // call it is sent again, on another connection, without blaming the key.
      staleRetried = true;
      previous = -1;
      attempts--;
      continue;
    }
    if (outcome.status === 401 && !(renewed ??= new Set()).has(key.id) && d.kinds.of(key).renewCredentials?.(key)) {
      // Once per key and call: the same key again with fresh credentials.
      renewed.add(key.id);
      previous = -1;
      attempts--;
      continue;
    }
    onFailure(d, c, key, level, outcome, tally);
  }
  return false;
}

function onFailure(d: ProxyDeps, c: ProxyCall, key: PooledKey, level: number, f: Failed, tally: Tally): void {
  tally.fail(f);
  if (f.status === 401 || f.status === 403) {
    d.health.refused(key, f.status, f.detail ?? '');
    return;
  }
  if (f.status === 429) tally.rateLimitWaitMs = Math.max(tally.rateLimitWaitMs, d.health.rateLimited(key, f.headers));
  d.limits.noteAbnormal(switchScope(c.row.ownerId, level), Date.now());
  d.log.debug('upstream_attempt_failed', { key: key.id, level, model: c.model, reason: f.reason });
}

function noteSleepers(d: ProxyDeps, c: ProxyCall, level: number, exclude: Set<number> | undefined, tally: Tally): void {
  const now = Date.now();
  for (const k of d.pool.keys(c.row.ownerId, level)) {
    if (exclude?.has(k.id)) continue;
    const until = d.pool.sleepingUntil(k.id, now);
    if (until !== null && (tally.wakeAt === undefined || until < tally.wakeAt)) tally.wakeAt = until;
  }
}

function finalError(d: ProxyDeps, c: ProxyCall, t: Tally): void {
  const model = c.model;
  if (t.attempts > 0 && t.last) {
    if (t.onlyRateLimited) {
      const wait = Math.max(1, Math.ceil(t.rateLimitWaitMs / 1000));
      return sendProxyError(c.ex, c.anthropic, 429, `Every provider key for model ${model} is rate limited upstream; retry in ${wait}s`, 'upstream_rate_limited', { 'retry-after': String(wait) });
    }
    if (t.last.timeout) return sendProxyError(c.ex, c.anthropic, 504, `The upstream did not answer in time for model ${model}`, 'upstream_timeout');
    return sendProxyError(c.ex, c.anthropic, 502, `Every provider key failed for model ${model} (last: ${t.last.reason})`, 'upstream_error');
  }
  if (t.wakeAt !== undefined) {
    const wait = Math.max(1, Math.ceil((t.wakeAt - Date.now()) / 1000));
    return sendProxyError(c.ex, c.anthropic, 503, `Every provider key for model ${model} is cooling down; retry in ${wait}s`, 'no_available_key', { 'retry-after': String(wait) });
  }
  if (t.skips.size > 0) {
    return sendProxyError(c.ex, c.anthropic, 400, `No provider key can serve ${c.path} for model ${model}: ${[...t.skips].join('; ')}`, 'unsupported_by_provider');
  }
  return sendProxyError(c.ex, c.anthropic, 503, `No enabled provider key at Level ${t.lastLevel ?? c.level} for model ${model}`, 'no_provider_key');
}
