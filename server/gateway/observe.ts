/**
 * What the proxy reports about its calls through the telemetry port (core/telemetry.ts): the
 * end of a call (metrics, the call span, the access log line), the outcome of each upstream
 * attempt, the W3C trace context passed upstream, and the gauges read at scrape time.
 */
import type { AttemptOutcome, ProxyTelemetry } from '../core/telemetry';
import type { Logger } from '../core/log';
import type { PooledKey } from '../state/provider-keys/key-pool';
import type { KeyPool } from '../state/provider-keys/key-pool';
import type { ProxyCall } from './call';
import type { Outcome } from './dispatch/attempt';
import type { KeyCircuits } from './key-health/circuits';
import type { SwitchOver } from './key-health/switch-over';
import type { WireFormat } from './providers/types';
import type { UnitUsage } from '../domain/pricing/units';

/** Closes the books of a call: metrics, its span, its access log line. */
export function observeEnd(t: ProxyTelemetry, log: Pick<Logger, 'info'>, c: ProxyCall): void {
  const now = performance.now();
  c.durationMs = now - c.startedAt;
  // No head went out: the client left before any answer.
  if (c.status === 0) c.status = 499;
  if (c.overheadMs < 0) c.overheadMs = c.durationMs - c.upstreamMs;
  t.metrics?.callEnded(c);
  c.trace?.end(c);
  if (t.accessLog) {
    const u = c.usage;
    // Facts only: never the API key, a provider key's secret or a body.
    log.info('proxy_request', {
      request: c.id, method: c.method, path: c.path, status: c.status, model: c.metricModel || undefined,
      // `level` is the line's severity: the Level is `key_level`, as in the other proxy lines.
      key_level: c.metricLevel >= 0 ? c.metricLevel : undefined, account: c.row?.id, key: c.keyId || undefined,
      attempts: c.attempts, input_tokens: u ? u.prompt : 0, output_tokens: u ? u.completion : 0,
      credit: c.credit, duration_ms: round(c.durationMs), overhead_ms: round(c.overheadMs),
      ...(c.firstByteMs >= 0 ? { first_byte_ms: round(c.firstByteMs) } : {}),
      ...(c.units ? unitFields(c.units) : {}),
    });
  }
}

const round = (ms: number) => Math.round(ms * 100) / 100;

/** The units a unit-billed call was charged for, only those it used. */
function unitFields(u: UnitUsage): Record<string, number | string> {
  const out: Record<string, number | string> = {};
  if (u.calls) out.units_calls = u.calls;
  if (u.images) out.units_images = u.images;
  if (u.size) out.units_size = u.size;
  if (u.quality) out.units_quality = u.quality;
  if (u.audioSeconds) out.units_audio_seconds = u.audioSeconds;
  if (u.characters) out.units_characters = u.characters;
  return out;
}

/** The outcome of an attempt as a bounded label. */
export function attemptOutcome(o: Outcome): AttemptOutcome {
  if (o.kind === 'client-gone') return 'client_gone';
  if (o.kind === 'delivered') return o.status < 400 ? 'ok' : 'client_error';
  if (o.timeout) return 'timeout';
  const s = o.status;
  if (s === undefined) return 'unreachable';
  if (s === 429) return 'rate_limited';
  if (s === 401 || s === 403) return 'auth_error';
  return 'server_error';
}

/** The GenAI semantic conventions' provider name of a key's upstream. */
export function genAiProvider(key: PooledKey, format: WireFormat): string {
  const type = key.config.provider_type;
  if (type === 'azure') return 'azure.ai.openai';
  if (type === 'vertex') return 'gcp.vertex_ai';
  if (type === 'gemini') return 'gcp.gemini';
  if (type === 'bedrock') return 'aws.bedrock';
  return format === 'anthropic' ? 'anthropic' : 'openai';
}

const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
/** W3C caps tracestate at 32 members; 512 characters is what propagators must keep. */
const MAX_TRACESTATE = 512;

/**
 * With tracing off the client's W3C trace context goes upstream as it came (a well-formed
 * traceparent only), so the client's trace still reaches the provider.
 */
export function forwardedTrace(headers: Readonly<Record<string, string>>): Record<string, string> | undefined {
  const parent = headers.traceparent;
  if (parent === undefined || !TRACEPARENT.test(parent)) return undefined;
  const state = headers.tracestate;
  return state !== undefined && state.length <= MAX_TRACESTATE && !/[\r\n]/.test(state) ? { traceparent: parent, tracestate: state } : { traceparent: parent };
}

/** Key states for the `switchyard_provider_keys` gauge. */
export const KEY_STATES = ['healthy', 'failing', 'open', 'half-open', 'sleeping'] as const;
export type KeyState = (typeof KEY_STATES)[number];

/**
 * Enabled provider keys by state, over every Owner: asleep after a 429, else the state of the
 * key's own circuit (disabled keys are not in the pool). Read at scrape time, from memory.
 */
export function keyStates(pool: Pick<KeyPool, 'owners' | 'levelsOf' | 'keys' | 'isSleeping'>, circuits: Pick<KeyCircuits, 'stateOf'>, now = Date.now()): Record<KeyState, number> {
  const out: Record<KeyState, number> = { healthy: 0, failing: 0, open: 0, 'half-open': 0, sleeping: 0 };
  for (const owner of pool.owners()) {
    for (const level of pool.levelsOf(owner)) {
      for (const k of pool.keys(owner, level)) out[pool.isSleeping(k.id, now) ? 'sleeping' : circuits.stateOf(owner, k.id)]++;
    }
  }
  return out;
}

/** Per Level, how many Owners have it switched over (SWITCH_OVER) now. */
export function switchedLevels(pool: Pick<KeyPool, 'owners' | 'levelsOf'>, switchOver: Pick<SwitchOver, 'isSwitched'>, now = Date.now()): Map<number, number> {
  const out = new Map<number, number>();
  for (const owner of pool.owners()) {
    for (const level of pool.levelsOf(owner)) {
      const n = out.get(level) ?? 0;
      out.set(level, switchOver.isSwitched(owner, level, now) ? n + 1 : n);
    }
  }
  return out;
}
