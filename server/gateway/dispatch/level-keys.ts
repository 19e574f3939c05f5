import type { UpstreamClient } from '../../adapters/upstream-http/client';
import type { Logger } from '../../core/log';
import type { KeyPool, PooledKey } from '../../state/provider-keys/key-pool';
import type { KeyHealth } from '../key-health/key-health';
import type { LimitStore } from '../limits/counters';
import type { ProviderKinds } from '../providers/registry';
import { isSkip, UpstreamSetupError, type Prepared } from '../providers/types';
import type { ProxyCall, ProxySettings } from '../call';
import { attempt, CLIENT_GONE, type ClientGone, type Delivered, type Failed } from './attempt';
import { switchScope } from './levels';
import { bodyFor } from './request-body';
import type { Tally } from './tally';

export interface LevelDeps {
  settings: Pick<ProxySettings, 'maxAttemptsPerLevel' | 'upstreamTimeoutMs' | 'streamIdleTimeoutMs'>;
  pool: Pick<KeyPool, 'pick' | 'keys' | 'sleepingUntil'>;
  kinds: Pick<ProviderKinds, 'of'>;
  health: Pick<KeyHealth, 'refused' | 'rateLimited'>;
  limits: Pick<LimitStore, 'noteAbnormal'>;
  log: Pick<Logger, 'debug'>;
  upstream: Pick<UpstreamClient, 'dispatch'>;
}

/**
 * The attempt loop over one Level's keys: up to `maxAttemptsPerLevel` keys in round-robin
 * order, each failure before the first byte noted in the tally (and in key health: 429 puts
 * the key to sleep, 401/403 disables it). Answers the delivered outcome (the served key, Level
 * and model are set on the call), CLIENT_GONE, or null when the Level is used up.
 */
export async function tryLevel(d: LevelDeps, c: ProxyCall, model: string, level: number, tally: Tally): Promise<Delivered | ClientGone | null> {
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
      return null;
    }
    previous = key.id;
    let prepared: Prepared;
    try {
      prepared = await d.kinds.of(key).prepare(key, { endpoint: c.endpoint, model, headers: c.ex.headers });
    } catch (err) {
      if (c.ex.aborted) return CLIENT_GONE;
      attempts++;
      const e = err instanceof UpstreamSetupError ? err : new UpstreamSetupError('retryable', (err as Error).message);
      if (e.kind === 'auth') d.health.refused(key, e.status ?? 401, e.message);
      else d.limits.noteAbnormal(switchScope(ownerId, level), Date.now());
      tally.fail({ kind: 'failed', reason: e.message, status: e.status });
      continue;
    }
    if (c.ex.aborted) return CLIENT_GONE;
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
    if (outcome.kind === 'client-gone') return outcome;
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
    noteFailure(d, c, key, level, outcome, tally);
  }
  return null;
}

function noteFailure(d: LevelDeps, c: ProxyCall, key: PooledKey, level: number, f: Failed, tally: Tally): void {
  tally.fail(f);
  if (f.status === 401 || f.status === 403) {
    d.health.refused(key, f.status, f.detail ?? '');
    return;
  }
  if (f.status === 429) tally.rateLimitWaitMs = Math.max(tally.rateLimitWaitMs, d.health.rateLimited(key, f.headers));
  d.limits.noteAbnormal(switchScope(c.row.ownerId, level), Date.now());
  d.log.debug('upstream_attempt_failed', { key: key.id, level, model: c.model, reason: f.reason });
}

/** When no key is left to pick, the earliest wake-up of those asleep (for Retry-After). */
function noteSleepers(d: LevelDeps, c: ProxyCall, level: number, exclude: Set<number> | undefined, tally: Tally): void {
  const now = Date.now();
  for (const k of d.pool.keys(c.row.ownerId, level)) {
    if (exclude?.has(k.id)) continue;
    const until = d.pool.sleepingUntil(k.id, now);
    if (until !== null && (tally.wakeAt === undefined || until < tally.wakeAt)) tally.wakeAt = until;
  }
}
