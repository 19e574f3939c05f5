import { AUDIO_TOKENS_PER_SECOND, NO_TOKENS, unitUsage } from '../../domain/pricing/units';
import { costOf, type TokenUsage } from '../../domain/pricing/cost';
import { policyPrice } from '../../domain/pricing/unpriced-policy';
import { usageUnitsOf } from '../../domain/usage/units';
import type { ProxyCall, ProxyDeps } from '../call';
import { keyKindOf, type PooledKey } from '../../state/provider-keys/key-pool';
import { realtimeUsage } from './usage';

/** One response of a session as it ended: its request ID (`<session>.<n>`), the provider's ID and status, its times. */
export interface ResponseEnd {
  requestId: string;
  responseId: string;
  status: string;
  /** performance.now() when it was asked for (or began), when its first event came (-1: none), when it ended. */
  startedAt: number;
  firstAt: number;
  endedAt: number;
}

/**
 * Bills one realtime response from its `response.done` usage, as a chat answer is billed (class
 * by class, costOf), its audio also counted as the route's units: the usage record, the
 * metrics, the response's span, and its reservation settled. Returns what the session adds to
 * its totals.
 */
export function billResponse(d: Pick<ProxyDeps, 'usage' | 'telemetry' | 'admission'>, c: ProxyCall, key: PooledKey, usage: unknown, end: ResponseEnd): { usage: TokenUsage; cost: number; audioSeconds: number } {
  const e = realtimeUsage(usage);
  const heard = e.audioIn ?? 0;
  const units = unitUsage({ audioSeconds: Math.round(heard / AUDIO_TOKENS_PER_SECOND), tokens: { ...NO_TOKENS, audioIn: heard, cachedAudio: e.cachedAudio ?? 0, audioOut: e.audioOut ?? 0 } });
  const row = c.row;
  const cost = costOf(e, policyPrice(c.servedModel, c.owner.pricing, c.owner.unpricedPolicy), row.rates, row.factor);
  const now = Date.now();
  const durationMs = end.endedAt - end.startedAt;
  const firstByteMs = end.firstAt >= 0 ? end.firstAt - end.startedAt : -1;
  const billedUnits = usageUnitsOf('realtime', units);
  d.usage.record({
    accountId: row.id, ownerId: row.ownerId, dna: row.dna, model: c.servedModel, level: c.servedLevel, keyId: key.id, keyKind: keyKindOf(key),
    endpoint: c.path, prompt: e.prompt, completion: e.completion, reasoning: 0, cached: e.cached, creditUsed: cost,
    status: 'ok', at: new Date(now), requestId: end.requestId,
    // A response's own times: from when it was asked for (or began) to its end, and to its first event.
    durationMs, firstByteMs: firstByteMs >= 0 ? firstByteMs : undefined, units: billedUnits,
  });
  // Each response is a call in the metrics (its tokens, credit and units); the session's end adds none again.
  d.telemetry?.metrics?.callEnded({
    path: c.path, status: 200, metricModel: c.servedModel, metricLevel: c.servedLevel, stream: true, attempts: 0,
    durationMs, overheadMs: 0, firstByteMs, usage: e, credit: cost, billedUnits,
  });
  c.trace?.response({
    requestId: end.requestId, responseId: end.responseId, status: end.status,
    provider: c.provider, requestedModel: c.requestedModel, model: c.servedModel, keyId: key.id, level: c.servedLevel,
    startTime: performance.timeOrigin + end.startedAt, endTime: performance.timeOrigin + end.endedAt, firstByteMs, usage: e,
  });
  const r = c.reservation;
  if (r) {
    c.reservation = null;
    d.admission.settle(r, { cost, tokens: e.prompt + e.completion }, now);
  }
  return { usage: e, cost, audioSeconds: units.audioSeconds };
}
