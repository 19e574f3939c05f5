import type { UpstreamClient } from '../../adapters/upstream-http/client';
import type { Logger } from '../../core/log';
import type { KeyPool, PooledKey } from '../../state/provider-keys/key-pool';
import type { KeyHealth } from '../key-health/key-health';
import type { KeyCircuits } from '../key-health/circuits';
import type { SwitchOver } from '../key-health/switch-over';
import type { ProviderKinds } from '../providers/registry';
import { isSkip, UpstreamSetupError, type Prepared } from '../providers/types';
import type { ProxyCall, ProxySettings } from '../call';
import { attempt, CLIENT_GONE, type ClientGone, type Delivered, type Failed } from './attempt';
import { upstreamBody } from './request-body';
import { geminiEventsAsArray, MalformedRequest, translation, Untranslatable, upstreamEndpoint, type Translation } from '../formats/index';
import { answerTokenEstimate, inputTokenEstimate } from './count-tokens';
import type { Tally } from './tally';
import { scrub } from './scrub';
import type { ProxyMetrics } from '../../core/telemetry';
import type { ResponseKeys } from '../../state/response-keys/response-keys';
import { attemptOutcome, forwardedTrace, genAiProvider } from '../observe';

export interface LevelDeps {
  settings: Pick<ProxySettings, 'maxAttemptsPerLevel' | 'upstreamTimeoutMs' | 'streamIdleTimeoutMs' | 'streamFirstByteTimeoutMs'>;
  pool: Pick<KeyPool, 'pick' | 'keys' | 'sleepingUntil'>;
  kinds: Pick<ProviderKinds, 'of'>;
  health: Pick<KeyHealth, 'refused' | 'rateLimited'> & { circuits: Pick<KeyCircuits, 'admit' | 'failed' | 'succeeded' | 'release'> };
  switchOver: Pick<SwitchOver, 'noteAbnormal'>;
  log: Pick<Logger, 'debug' | 'info' | 'warn'>;
  upstream: Pick<UpstreamClient, 'dispatch'>;
  /** Which key created each stored response, noted as a native Responses answer is delivered. */
  responseKeys?: Pick<ResponseKeys, 'remember'>;
  /** Per attempt: its outcome and time (absent with METRICS=off). */
  telemetry?: { metrics?: Pick<ProxyMetrics, 'attemptEnded'> };
}

/**
 * The attempt loop over one Level's keys: every key the circuit breakers let through, in
 * round-robin order, up to `maxAttemptsPerLevel` and while the call's failover budget lasts.
 * Each failure before the first byte is noted in the tally and in key health (429 puts the key
 * to sleep, 401/403 disables it, connection errors, timeouts and 5xx count towards opening its
 * circuit). Answers the delivered outcome (the served key, Level and model are set on the
 * call), CLIENT_GONE, or null when the Level is used up.
 */
export async function tryLevel(d: LevelDeps, c: ProxyCall, model: string, level: number, tally: Tally): Promise<Delivered | ClientGone | null> {
  const ownerId = c.row.ownerId;
  const circuits = d.health.circuits;
  // Keys already used (or passed over) at this Level; allocated only when a second key is needed.
  let exclude: Set<number> | undefined;
  let previous = -1;
  let renewed: Set<number> | undefined;
  let staleRetried = false;
  let attempts = 0;
  // A stream's headers come at once from a working upstream: waiting longer is waiting on a dead one.
  const firstByte = c.stream ? d.settings.streamFirstByteTimeoutMs : undefined;
  const headersTimeoutMs = firstByte !== undefined ? Math.min(firstByte, d.settings.upstreamTimeoutMs) : d.settings.upstreamTimeoutMs;
  while (attempts < d.settings.maxAttemptsPerLevel) {
    if (previous !== -1) (exclude ??= new Set()).add(previous);
    const key = d.pool.pick(ownerId, level, exclude);
    if (!key) {
      noteSleepers(d, c, level, exclude, tally);
      return null;
    }
    previous = key.id;
    const kind = d.kinds.of(key);
    // The client's endpoint when the key has it, else one the call can be translated to.
    const api = upstreamEndpoint(c.endpoint, kind.serves(key, model));
    if (api === null) {
      if (c.route.free) return answerTokenEstimate(c, key, level);
      tally.skips.add(`a ${kind.type} key cannot serve ${c.path}`);
      continue;
    }
    const now = Date.now();
    const gate = circuits.admit(key, model, now);
    if (gate !== true) {
      tally.noteOpen(gate.until);
      continue;
    }
    if (now >= tally.deadline) {
      circuits.release(key, model);
      tally.budgetSpent = true;
      return null;
    }
    let prepared: Prepared;
    try {
      prepared = await kind.prepare(key, { endpoint: api, model, headers: c.ex.headers, stream: c.stream, method: api === c.endpoint ? c.params?.method : undefined });
    } catch (err) {
      if (c.ex.aborted) {
        circuits.release(key, model);
        return CLIENT_GONE;
      }
      attempts++;
      c.attempts++;
      const e = err instanceof UpstreamSetupError ? err : new UpstreamSetupError('retryable', (err as Error).message);
      const cause = scrub(e.message, key);
      if (e.kind === 'auth') d.health.refused(key, e.status ?? 401, e.message);
      else {
        d.switchOver.noteAbnormal(ownerId, level, Date.now());
        circuits.failed(key, undefined, cause, Date.now());
      }
      tally.fail({ kind: 'failed', reason: e.message, status: e.status }, `key ${key.id}: ${cause}`);
      continue;
    }
    if (c.ex.aborted) {
      circuits.release(key, model);
      return CLIENT_GONE;
    }
    if (isSkip(prepared)) {
      circuits.release(key, model);
      tally.skips.add(prepared.skip);
      continue;
    }
    const tr: Translation | undefined = api === c.endpoint ? undefined : translation(c.endpoint, api);
    // A Gemini client's JSON-array stream on a `gemini` key: asked for events (their usage is read), re-framed as its array.
    const reframe = !tr && prepared.format === 'gemini' && c.params?.stream === 'array' ? geminiEventsAsArray : undefined;
    let body: Buffer;
    try {
      const sent = prepared.model ?? model;
      body = upstreamBody(c, sent, tr, prepared.edit);
    } catch (err) {
      circuits.release(key, model);
      if (err instanceof MalformedRequest) {
        tally.malformed = { status: 400, message: err.message, code: 'invalid_request' };
        tally.final = true;
        return null;
      }
      if (!(err instanceof Untranslatable)) throw err;
      tally.skips.add(err.message);
      continue;
    }
    attempts++;
    c.attempts++;
    const provider = genAiProvider(key, prepared.format);
    const span = c.trace ? c.trace.startAttempt({ provider, model: prepared.model ?? model, keyId: key.id, level }) : null;
    const startedAt = (c.attemptAt = performance.now());
    const outcome = await attempt({
      ex: c.ex,
      errorFormat: c.errorFormat,
      client: d.upstream,
      target: prepared,
      key,
      body,
      upload: c.upload ? { contentType: c.upload.contentType, stream: c.upload.body(prepared.model ?? model) } : undefined,
      translation: (tr ?? reframe) && { t: (tr ?? reframe)!, ctx: { includeUsage: !c.injectUsage, request: c.doc, estimateInput: () => inputTokenEstimate(c), jsonArray: c.params?.stream === 'array' }, keep: c.keepAnswer },
      onResponseId: c.endpoint === 'responses' && !tr && c.doc.store !== false && d.responseKeys
        ? (id: string) => d.responseKeys!.remember({ ownerId, accountId: c.row.id }, id, key.id)
        : undefined,
      headersTimeoutMs,
      idleTimeoutMs: d.settings.streamIdleTimeoutMs,
      firstByteTimeoutMs: firstByte,
      requestId: c.id,
      dropUsageOnly: c.injectUsage && prepared.format === 'openai',
      trace: span
        ? span.tracestate ? { traceparent: span.traceparent, tracestate: span.tracestate } : { traceparent: span.traceparent }
        : c.ex.headers.traceparent !== undefined ? forwardedTrace(c.ex.headers) : undefined,
    });
    const took = performance.now() - startedAt;
    c.upstreamMs += took;
    c.attemptAt = 0;
    if (span || d.telemetry?.metrics) {
      const label = attemptOutcome(outcome);
      span?.end(outcome.kind === 'client-gone' ? 0 : outcome.status ?? 0, label === 'ok' ? undefined : label);
      d.telemetry?.metrics?.attemptEnded(provider, label, took / 1000);
    }
    if (outcome.kind === 'client-gone') {
      circuits.release(key, model);
      return outcome;
    }
    if (outcome.kind === 'delivered') {
      c.provider = provider;
      c.servedBy = key;
      c.servedLevel = level;
      c.servedModel = model;
      c.servedPriceAs = kind.catalogue !== undefined && prepared.model !== undefined ? `${kind.catalogue}/${prepared.model}` : undefined;
      noteDelivered(d, c, key, model, outcome);
      return outcome;
    }
    if (c.upload && !c.upload.replayable) {
      // Part of the upload went upstream as it arrived and cannot be sent again: this failure is the answer.
      noteFailure(d, c, key, model, level, outcome, tally);
      tally.final = true;
      return null;
    }
    if (outcome.stale && !staleRetried) {
      // The upstream closed a kept connection as the request went out, unread: once per
      // call it is sent again, on another connection, without blaming the key.
      staleRetried = true;
      circuits.release(key, model);
      previous = -1;
      attempts--;
      continue;
    }
    if (outcome.status === 401 && !(renewed ??= new Set()).has(key.id) && d.kinds.of(key).renewCredentials?.(key)) {
      // Once per key and call: the same key again with fresh credentials.
      renewed.add(key.id);
      circuits.release(key, model);
      previous = -1;
      attempts--;
      continue;
    }
    noteFailure(d, c, key, model, level, outcome, tally);
  }
  return null;
}

/** The upstream answered: its circuits close (a cut stream counts against the model instead). */
function noteDelivered(d: LevelDeps, c: ProxyCall, key: PooledKey, model: string, o: Delivered): void {
  const circuits = d.health.circuits;
  const now = Date.now();
  if (o.interruption !== undefined) {
    const cause = scrub(o.interruption, key);
    // The transport answered; the model's stream broke off.
    circuits.succeeded(key, model, now, true);
    circuits.failed(key, model, `stream interrupted: ${cause}`, now);
    d.log.warn('upstream_stream_interrupted', { request: c.id, key: key.id, key_level: c.servedLevel, model, reason: cause });
    return;
  }
  // A 4xx passed through is the client's fault, not the model's: only the transport is proven.
  circuits.succeeded(key, model, now, o.status >= 300);
}

function noteFailure(d: LevelDeps, c: ProxyCall, key: PooledKey, model: string, level: number, f: Failed, tally: Tally): void {
  const cause = scrub(f.reason, key);
  tally.fail(f, `key ${key.id}: ${cause}`);
  const circuits = d.health.circuits;
  if (f.status === 401 || f.status === 403) {
    circuits.release(key, model);
    d.health.refused(key, f.status, f.detail ?? '');
    return;
  }
  const now = Date.now();
  if (f.status === 429) {
    // A rate limit is the provider working as it should: the key sleeps, its circuit is untouched.
    circuits.succeeded(key, model, now, true);
    tally.rateLimitWaitMs = Math.max(tally.rateLimitWaitMs, d.health.rateLimited(key, f.headers));
  } else if (f.status !== undefined) {
    // An error answer: the host is up, the model on it failed (it may be the only one failing).
    circuits.succeeded(key, model, now, true);
    circuits.failed(key, model, cause, now);
  } else {
    circuits.failed(key, undefined, cause, now);
  }
  d.switchOver.noteAbnormal(c.row.ownerId, level, now);
  d.log.debug('upstream_attempt_failed', { request: c.id, key: key.id, key_level: level, model, reason: cause });
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
