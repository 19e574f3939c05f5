import type { Logger } from '../../core/log';
import { LOCAL_BOARD, type HealthBoard, type HealthMark } from './board';
import type { KeyHealthEvents } from './events';

/**
 * A provider key's health (or one model's on that key): answering (`healthy`), failing but
 * still in rotation (`failing`), out of rotation for a cool-down (`open`), or let through for
 * one probe request after the cool-down (`half-open`).
 */
export type CircuitState = 'healthy' | 'failing' | 'open' | 'half-open';

/** KEY_FAILURE_THRESHOLD, KEY_OPEN_MS, KEY_OPEN_MAX_MS. */
export interface CircuitRule {
  /** Consecutive failures (connection errors, timeouts, 5xx) that open a circuit. */
  failureThreshold: number;
  /** The first cool-down; each time the circuit opens again without closing in between it doubles. */
  openMs: number;
  openMaxMs: number;
  /** A half-open probe still unanswered after this long lets the next request probe. */
  probeTimeoutMs: number;
}

/**
 * The model of a mark that concerns the whole key. Model names cannot contain `*` (the proxy
 * refuses them), and a whole-key mark under its own field keeps the 429 sleep mark of the
 * same key (field without a model) intact in the shared hash.
 */
export const WHOLE_KEY = '*';

/** The shared mark state of an open circuit; its clear (ms 0) closes it everywhere. */
export const OPEN_STATE = 'open';

/** Most models with a circuit of their own per key: model names come from clients. */
const MAX_MODELS_PER_KEY = 64;

interface Circuit {
  ownerId: number;
  keyId: number;
  /** undefined: the whole key (transport failures). */
  model: string | undefined;
  state: CircuitState;
  since: number;
  /** Consecutive failures. */
  failures: number;
  /** Times opened since the last close: the cool-down grows with it. */
  opens: number;
  /** Open until (ms since epoch, this instance's clock). */
  until: number;
  /** When the half-open probe was let through; 0 when none is under way. */
  probeAt: number;
  lastError: string | null;
  lastErrorAt: number | null;
  /** When it left rotation (first open since the last close); 0 while in rotation. */
  outSince: number;
}

interface KeyEntry {
  whole: Circuit | undefined;
  models: Map<string, Circuit> | undefined;
}

/** One circuit as `/x-conf` shows it. */
export interface CircuitReport {
  keyId: number;
  model: string | null;
  state: CircuitState;
  since: number;
  /** End of the cool-down of an open circuit. */
  until: number | null;
  failures: number;
  lastError: string | null;
  lastErrorAt: number | null;
}

/** The key as circuits need it (a PooledKey fits). */
export interface CircuitKey {
  id: number;
  ownerId: number;
  level: number;
}

/** `admit`'s answer: go ahead (possibly as the half-open probe), or out of rotation until then. */
export type Admission = true | { until: number };

/**
 * The circuit breakers of provider keys, per key (transport failures: the host cannot be
 * reached or does not answer) and per key and model (5xx answers, which an upstream may give
 * for one model only). Everything answers from memory, synchronously; a key without any
 * failure costs one map lookup per request.
 *
 * Opening and closing are logged at `warn` and announced on the board, so with REDIS_URL the
 * other instances take the key out of rotation too (and back in when it closes). Each instance
 * probes a half-open key itself; the probe's success closes it everywhere.
 */
export class KeyCircuits {
  private owners = new Map<number, Map<number, KeyEntry>>();
  /** A mark being applied from the board is not announced back. */
  private hearing = false;

  constructor(
    private readonly rule: CircuitRule,
    private readonly log: Pick<Logger, 'warn' | 'debug'>,
    private readonly board: HealthBoard = LOCAL_BOARD,
    private readonly events?: KeyHealthEvents,
  ) {
    board.onMark((m) => this.hear(m));
  }

  /**
   * Whether a request may use this key for this model now. An open circuit whose cool-down is
   * over turns half-open and lets this request through as its one probe.
   */
  admit(key: CircuitKey, model: string, now: number): Admission {
    const k = this.owners.get(key.ownerId)?.get(key.id);
    if (!k) return true;
    const whole = k.whole;
    const one = k.models?.get(model);
    const a = whole ? this.blockedUntil(whole, now) : 0;
    const b = one ? this.blockedUntil(one, now) : 0;
    if (a > 0 || b > 0) return { until: Math.max(a, b) };
    if (whole) this.letThrough(whole, now);
    if (one) this.letThrough(one, now);
    return true;
  }

  /** The request went away before the probe could say anything: the next one may probe. */
  release(key: CircuitKey, model: string): void {
    const k = this.owners.get(key.ownerId)?.get(key.id);
    if (!k) return;
    if (k.whole) k.whole.probeAt = 0;
    const one = k.models?.get(model);
    if (one) one.probeAt = 0;
  }

  /** The key answered (any HTTP answer on the transport, a 2xx for the model). */
  succeeded(key: CircuitKey, model: string, now: number, wholeOnly = false): void {
    const k = this.owners.get(key.ownerId)?.get(key.id);
    if (!k) return;
    if (k.whole) this.close(key, k.whole, now);
    const one = wholeOnly ? undefined : k.models?.get(model);
    if (one) this.close(key, one, now);
  }

  /**
   * One failure of the key: a transport failure (`model` undefined: connection error,
   * timeout) or a failed answer for one model (5xx, 408, a stream cut).
   */
  failed(key: CircuitKey, model: string | undefined, reason: string, now: number): void {
    const c = this.circuit(key, model, true);
    if (!c) return;
    c.lastError = reason;
    c.lastErrorAt = now;
    c.failures++;
    if (c.state === 'half-open') return this.open(key, c, now, reason);
    // Opened meanwhile (by another request or instance): the cool-down already runs.
    if (c.state === 'open') return;
    if (c.failures >= this.rule.failureThreshold) return this.open(key, c, now, reason);
    if (c.state === 'healthy') {
      c.state = 'failing';
      c.since = now;
    }
  }

  /** Every circuit of the Owner that failed at least once since this instance started. */
  report(ownerId: number, now = Date.now()): CircuitReport[] {
    const out: CircuitReport[] = [];
    for (const k of this.owners.get(ownerId)?.values() ?? []) {
      for (const c of [k.whole, ...(k.models?.values() ?? [])]) {
        if (!c) continue;
        // A cool-down that ended turns half-open only when a request asks; say so here already.
        const state = c.state === 'open' && c.until <= now ? 'half-open' : c.state;
        out.push({
          keyId: c.keyId, model: c.model ?? null, state, since: c.since,
          until: c.state === 'open' && c.until > now ? c.until : null,
          failures: c.failures, lastError: c.lastError, lastErrorAt: c.lastErrorAt,
        });
      }
    }
    return out.sort((x, y) => x.keyId - y.keyId || (x.model ?? '').localeCompare(y.model ?? ''));
  }

  /** The state of the key's whole-key circuit, or of one model's. */
  stateOf(ownerId: number, keyId: number, model?: string): CircuitState {
    const k = this.owners.get(ownerId)?.get(keyId);
    const c = model === undefined ? k?.whole : k?.models?.get(model);
    return c?.state ?? 'healthy';
  }

  /** 0 when the circuit lets a request through now, else until when it does not. */
  private blockedUntil(c: Circuit, now: number): number {
    if (c.state === 'open') return c.until > now ? c.until : 0;
    if (c.state === 'half-open' && c.probeAt !== 0) {
      const free = c.probeAt + this.rule.probeTimeoutMs;
      return free > now ? free : 0;
    }
    return 0;
  }

  private letThrough(c: Circuit, now: number): void {
    if (c.state === 'open') {
      c.state = 'half-open';
      c.since = now;
    }
    if (c.state === 'half-open') c.probeAt = now;
  }

  private circuit(key: CircuitKey, model: string | undefined, create: boolean): Circuit | undefined {
    let keys = this.owners.get(key.ownerId);
    if (!keys) {
      if (!create) return undefined;
      this.owners.set(key.ownerId, (keys = new Map()));
    }
    let k = keys.get(key.id);
    if (!k) {
      if (!create) return undefined;
      keys.set(key.id, (k = { whole: undefined, models: undefined }));
    }
    if (model === undefined) return (k.whole ??= create ? fresh(key, undefined) : undefined);
    let c = k.models?.get(model);
    if (!c && create) {
      const models = (k.models ??= new Map());
      if (models.size >= MAX_MODELS_PER_KEY) {
        // Forget the healthiest to make room; an open one is never forgotten.
        for (const [name, old] of models) if (old.state === 'healthy' || old.state === 'failing') { models.delete(name); break; }
        if (models.size >= MAX_MODELS_PER_KEY) return undefined;
      }
      models.set(model, (c = fresh(key, model)));
    }
    return c;
  }

  private open(key: CircuitKey, c: Circuit, now: number, reason: string): void {
    const ms = Math.min(this.rule.openMaxMs, this.rule.openMs * 2 ** Math.min(c.opens, 30));
    if (c.outSince === 0) c.outSince = now;
    c.opens++;
    c.state = 'open';
    c.since = now;
    c.until = now + ms;
    c.probeAt = 0;
    this.log.warn('provider_key_opened', {
      key: c.keyId, key_level: key.level, owner: c.ownerId, ...(c.model !== undefined ? { model: c.model } : {}),
      failures: c.failures, cooldown_ms: ms, reason,
    });
    if (!this.hearing) this.board.announce(markOf(c, ms));
    this.events?.emit({ type: 'key_opened', ownerId: c.ownerId, keyId: c.keyId, level: key.level, model: c.model ?? null, outMs: now - c.outSince, reason, at: now });
  }

  private close(key: CircuitKey, c: Circuit, now: number): void {
    if (c.state === 'healthy') return;
    const wasOut = c.state === 'open' || c.state === 'half-open';
    const since = c.since;
    c.state = 'healthy';
    c.since = now;
    c.failures = 0;
    c.opens = 0;
    c.until = 0;
    c.probeAt = 0;
    c.outSince = 0;
    if (!wasOut) return;
    const fields = { key: c.keyId, owner: c.ownerId, ...(c.model !== undefined ? { model: c.model } : {}), out_ms: now - since };
    // The instance whose probe closed it says so at warn; the others heard it.
    if (this.hearing) return this.log.debug('provider_key_closed_elsewhere', fields);
    this.log.warn('provider_key_closed', { ...fields, key_level: key.level });
    this.board.announce(markOf(c, 0));
  }

  /** A circuit opened or closed by another instance (or read from the shared store). */
  private hear(m: HealthMark): void {
    if (m.scope !== 'key' || m.state !== OPEN_STATE || m.model === undefined) return;
    const model = m.model === WHOLE_KEY ? undefined : m.model;
    const key: CircuitKey = { id: m.id, ownerId: m.ownerId, level: -1 };
    const now = Date.now();
    if (m.ms <= 0) {
      const c = this.circuit(key, model, false);
      if (!c || (c.state !== 'open' && c.state !== 'half-open')) return;
      this.hearing = true;
      try {
        this.close(key, c, now);
      } finally {
        this.hearing = false;
      }
      return;
    }
    const c = this.circuit(key, model, true);
    if (!c) return;
    if (c.state !== 'open') {
      if (c.state !== 'half-open') c.outSince = now;
      c.state = 'open';
      c.since = now;
      c.probeAt = 0;
      c.lastError ??= 'opened by another instance';
      c.lastErrorAt ??= now;
    }
    c.until = Math.max(c.until, now + m.ms);
    this.log.debug('provider_key_opened_elsewhere', { key: m.id, owner: m.ownerId, ...(model !== undefined ? { model } : {}), ms: m.ms });
  }
}

function fresh(key: CircuitKey, model: string | undefined): Circuit {
  return {
    ownerId: key.ownerId, keyId: key.id, model, state: 'healthy', since: Date.now(), failures: 0, opens: 0,
    until: 0, probeAt: 0, lastError: null, lastErrorAt: null, outSince: 0,
  };
}

function markOf(c: Circuit, ms: number): HealthMark {
  return { scope: 'key', ownerId: c.ownerId, id: c.keyId, model: c.model ?? WHOLE_KEY, state: OPEN_STATE, ms };
}
