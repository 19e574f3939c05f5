/**
 * Realtime sessions (`/v1/realtime`, a WebSocket): the client's upgrade goes through the same
 * stages as a call — authenticate (Authorization, or the `openai-insecure-api-key.<key>`
 * subprotocol browsers use), the model from `?model=`, mapping, access checks, the price
 * policy and admission of the first response — then a provider key is chosen and the upstream
 * WebSocket opened before the client's upgrade is accepted, so a refused upstream fails over
 * to the next key (Levels, SWITCH_OVER, MODEL_FAILOVER as for calls). The key is never echoed
 * back nor sent upstream; the `realtime` subprotocol is answered when offered.
 *
 * Frames are relayed both ways as they come. Towards the client, the upstream is paused while
 * more than CLIENT_HIGH_WATER waits in uWS's send buffer, resumed when it drained; towards the
 * upstream, a client that outruns it by more than UPSTREAM_BACKLOG is closed (uWS cannot stop
 * reading one WebSocket). Each response is its own reservation — opened when the client asks
 * for one (`response.create`) or the upstream starts one by itself (`response.created`) — and
 * is settled at its `response.done` from its usage (text, audio and cached tokens priced
 * apart), one usage record per response. When credit, a spend cap or a limit runs out, the
 * session is closed with 1008 and the refusal as reason. Idle and maximum session times close
 * it too. The session is one request-log line, metric and trace when it ends; each response
 * is logged (`realtime_response`) as it is billed.
 */
import { connectUpstream, sendableCloseCode, UpstreamWsError, type UpstreamSocket } from '../../adapters/upstream-ws/client';
import { errorFields } from '../../core/log';
import { unitUsage } from '../../domain/pricing/units';
import { isDatabaseUnavailable } from '../../adapters/storage/errors';
import { ProxyCall, type ProxyDeps } from '../call';
import { proxyErrorBody, type Refusal, type Verdict } from '../errors';
import type { ClientSocket, SocketPeer, SocketUpgrade } from '../transport';
import { authenticate } from '../stages/authenticate';
import { mapModel } from '../stages/map-model';
import { checkAccess } from '../stages/access';
import { checkPrice, mayServeModel } from '../stages/price-policy';
import { admit } from '../stages/admission';
import { releaseReservation } from '../stages/settle';
import { modelNameProblem } from '../stages/model-name';
import { levelPlan } from '../dispatch/levels';
import { finalError, Tally } from '../dispatch/tally';
import { scrub } from '../dispatch/scrub';
import { isSkip } from '../providers/types';
import { observeEnd, genAiProvider } from '../observe';
import type { PooledKey } from '../../state/provider-keys/key-pool';
import { protocols, UpgradeExchange } from './upgrade';
import { billResponse } from './bill-response';

/** Request headers a realtime upgrade reads. */
export const REALTIME_HEADERS = ['authorization', 'x-api-key', 'sec-websocket-protocol', 'openai-beta', 'x-request-id', 'traceparent', 'tracestate'];

/** Above this much waiting for the client, the upstream is paused; below CLIENT_LOW_WATER it reads again. */
export const CLIENT_HIGH_WATER = 1024 * 1024;
const CLIENT_LOW_WATER = 256 * 1024;
/** A client that has this much waiting for a slower upstream is closed. */
const UPSTREAM_BACKLOG = 8 * 1024 * 1024;
const MAX_MESSAGE = 16 * 1024 * 1024;

export interface RealtimeSettings {
  /** No frame either way for this long closes the session. */
  realtimeIdleMs: number;
  /** The longest a session may last (OpenAI's own cap is 60 minutes). */
  realtimeMaxSessionMs: number;
  upstreamConnectTimeoutMs: number;
}

const POLICY = 1008;

export class RealtimeSessions {
  private readonly open = new Set<Session>();
  private closing = false;

  constructor(private readonly d: ProxyDeps & { settings: RealtimeSettings }) {}

  get count(): number {
    return this.open.size;
  }

  serve(u: SocketUpgrade): void {
    if (this.closing) return u.refuse(503, { 'content-type': 'application/json', 'retry-after': '1' }, proxyErrorBody('openai', 503, 'The gateway is shutting down; retry', 'shutting_down'));
    const s = new Session(this.d, u, () => this.open.delete(s));
    this.open.add(s);
    s.start().catch((err) => {
      this.d.log.error('realtime_session_failed', { request: s.call.id, ...errorFields(err) });
      s.fail(isDatabaseUnavailable(err) ? 503 : 500);
    });
  }

  /** Closes every session (1001, going away): their responses under way are billed by what arrived. */
  close(): void {
    this.closing = true;
    for (const s of this.open) s.end(1001, 'the gateway is shutting down');
  }
}

class Session implements SocketPeer {
  readonly call: ProxyCall;
  private readonly ex: UpgradeExchange;
  private upstream: UpstreamSocket | null = null;
  private client: ClientSocket | null = null;
  private idle: NodeJS.Timeout | undefined;
  private maxTimer: NodeJS.Timeout | undefined;
  private ended = false;
  private finished = false;
  private paused = false;
  /** Responses settled so far; names each usage record. */
  private responses = 0;
  /** Input tokens of the last response: the next one reads the conversation again, so it is reserved at least that. */
  private lastInput = 0;
  private totals = { prompt: 0, completion: 0, reasoning: 0, cached: 0 };
  /** When the response under way was asked for or began, and when its first event reached the client (-1: not yet). */
  private responseAt = performance.now();
  private responseFirstAt = -1;

  constructor(private readonly d: ProxyDeps & { settings: RealtimeSettings }, private readonly u: SocketUpgrade, private readonly gone: () => void) {
    const { key, offered } = protocols(u.headers['sec-websocket-protocol']);
    const headers: Record<string, string> = { ...u.headers };
    if (key && !headers.authorization && !headers['x-api-key']) headers.authorization = `Bearer ${key}`;
    this.offered = offered;
    this.ex = new UpgradeExchange(u, headers);
    this.call = new ProxyCall(this.ex, 'realtime', '/v1/realtime');
    // A WebSocket upgrade: its access log line and span say GET.
    this.call.method = 'GET';
    this.ex.stamp = this.call;
    this.call.stream = true;
    const t = d.telemetry;
    if (t?.tracer) this.call.trace = t.tracer.startCall(this.call);
  }

  private readonly offered: string[];

  private refuse(v: Refusal): void {
    this.ex.send(v.status, { 'content-type': 'application/json', ...v.headers }, proxyErrorBody('openai', v.status, v.message, v.code, this.call.id));
    this.finish();
  }

  fail(status: number): void {
    if (!this.ex.finished && !this.client) this.refuse({ status, message: status === 503 ? "The gateway's database is unavailable; retry shortly" : 'Internal server error', code: status === 503 ? 'database_unavailable' : 'internal_error' });
    else this.end(1011, 'internal error');
  }

  async start(): Promise<void> {
    const d = this.d;
    const c = this.call;
    let v: Verdict | Promise<Verdict>;
    if ((v = authenticate(d, c)) && (v = await v)) return this.refuse(v);
    const model = new URLSearchParams(this.u.query).get('model') ?? '';
    const problem = modelNameProblem(model);
    if (problem) return this.refuse({ status: 400, message: problem.replace(/^model:/, 'model (query):'), code: 'invalid_model' });
    c.requestedModel = model;
    c.doc = { model };
    c.raw = Buffer.alloc(0);
    mapModel(c);
    if ((v = checkAccess(c))) return this.refuse(v);
    if ((v = checkPrice(d, c))) return this.refuse(v);
    if ((v = admit(d, c)) && (v = await v)) return this.refuse(v);
    const opened = await this.connect();
    if (!opened) return;
    if (this.u.aborted) {
      opened.close(1000, 'client gone');
      return this.finish();
    }
    this.upstream = opened;
    // The subprotocol answered must be one the client offered; the key's own never is.
    this.u.accept(this.offered.includes('realtime') ? 'realtime' : this.offered[0], this);
  }

  /** The upstream WebSocket on the first key that takes it: per model of the chain, per Level of the plan, per key. */
  private async connect(): Promise<UpstreamSocket | null> {
    const d = this.d;
    const c = this.call;
    const { owner, profile } = c;
    const tally = new Tally();
    const chain = owner.failover.size ? owner.failover.match(c.model) : undefined;
    const models = chain ? [c.model, ...chain.filter((m) => m !== c.model && profile.models.allows(m) && mayServeModel(m, owner.pricing, owner.unpricedPolicy, profile.exempt, 'realtime'))] : [c.model];
    for (let i = 0; i < models.length; i++) {
      const model = models[i];
      const start = i === 0 ? c.level : profile.levelMapper.match(model) ?? owner.levelMapper.match(model) ?? c.row.level;
      for (const level of levelPlan(start, owner.switchOver, c.row.ownerId, d.switchOver, profile.levels, Date.now())) {
        tally.lastLevel = level;
        const up = await this.tryLevel(model, level, tally);
        if (up) return up;
        if (this.u.aborted) return this.finish(), null;
      }
    }
    this.refuse(finalError(c, tally));
    return null;
  }

  private async tryLevel(model: string, level: number, tally: Tally): Promise<UpstreamSocket | null> {
    const d = this.d;
    const c = this.call;
    const circuits = d.health.circuits;
    const tried = new Set<number>();
    for (let n = 0; n < d.settings.maxAttemptsPerLevel; n++) {
      const key = d.pool.pick(c.row.ownerId, level, tried);
      if (!key) return null;
      tried.add(key.id);
      const now = Date.now();
      const gate = circuits.admit(key, model, now);
      if (gate !== true) {
        tally.noteOpen(gate.until);
        continue;
      }
      const prepared = await d.kinds.of(key).prepare(key, { endpoint: 'realtime', model, headers: this.ex.headers });
      if (isSkip(prepared)) {
        circuits.release(key, model);
        tally.skips.add(prepared.skip);
        continue;
      }
      const url = `${prepared.origin.replace(/^http/, 'ws')}${prepared.path}${prepared.path.includes('?') ? '&' : '?'}model=${encodeURIComponent(prepared.model ?? model)}`;
      const beta = this.ex.headers['openai-beta'];
      const headers = beta ? { ...prepared.headers, 'openai-beta': beta } : prepared.headers;
      c.attempts++;
      const startedAt = (c.attemptAt = performance.now());
      const provider = genAiProvider(key, prepared.format);
      try {
        const up = await connectUpstream(url, headers, d.settings.upstreamConnectTimeoutMs, MAX_MESSAGE);
        c.upstreamMs += performance.now() - startedAt;
        c.attemptAt = 0;
        d.telemetry?.metrics?.attemptEnded(provider, 'ok', (performance.now() - startedAt) / 1000);
        circuits.succeeded(key, model, Date.now());
        c.provider = provider;
        c.servedBy = key;
        c.servedLevel = level;
        c.servedModel = model;
        return up;
      } catch (err) {
        c.upstreamMs += performance.now() - startedAt;
        c.attemptAt = 0;
        this.noteFailure(key, model, level, err as UpstreamWsError, tally, provider, startedAt);
      }
    }
    return null;
  }

  private noteFailure(key: PooledKey, model: string, level: number, e: UpstreamWsError, tally: Tally, provider: string, startedAt: number): void {
    const d = this.d;
    const circuits = d.health.circuits;
    const cause = scrub(e.message, key);
    const status = e.status;
    tally.fail({ kind: 'failed', reason: e.message, status, timeout: e.timeout }, `key ${key.id}: ${cause}`);
    d.telemetry?.metrics?.attemptEnded(provider, status === 429 ? 'rate_limited' : status === 401 || status === 403 ? 'auth_error' : status ? 'server_error' : e.timeout ? 'timeout' : 'unreachable', (performance.now() - startedAt) / 1000);
    const now = Date.now();
    if (status === 401 || status === 403) {
      circuits.release(key, model);
      d.health.refused(key, status, cause);
      return;
    }
    if (status === 429) {
      circuits.succeeded(key, model, now, true);
      tally.rateLimitWaitMs = Math.max(tally.rateLimitWaitMs, d.health.rateLimited(key, e.headers as Record<string, string>));
    } else if (status !== undefined) {
      circuits.succeeded(key, model, now, true);
      circuits.failed(key, model, cause, now);
    } else circuits.failed(key, undefined, cause, now);
    d.switchOver.noteAbnormal(this.call.row.ownerId, level, now);
    d.log.debug('upstream_attempt_failed', { request: this.call.id, key: key.id, key_level: level, model, reason: cause });
  }

  // The client socket's events (SocketPeer).

  open(socket: ClientSocket): void {
    const c = this.call;
    this.client = socket;
    c.status = 101;
    c.firstByteMs = performance.now() - c.startedAt;
    const up = this.upstream!;
    up.onMessage((data, binary) => this.fromUpstream(data, binary));
    up.onClose((code, reason) => this.end(sendableCloseCode(code) ? code : 1011, reason || 'upstream closed'));
    this.touch();
    this.maxTimer = setTimeout(() => this.end(POLICY, 'maximum session time reached'), this.d.settings.realtimeMaxSessionMs);
  }

  message(data: Buffer, binary: boolean): void {
    const up = this.upstream;
    if (this.ended || !up) return;
    this.touch();
    if (up.bufferedAmount > UPSTREAM_BACKLOG) return this.end(POLICY, 'the client sends faster than the upstream takes');
    // A response the client asks for is reserved before it reaches the upstream.
    if (!binary && data.includes('"response.create"') && this.call.reservation === null && !this.reserve()) return;
    up.send(data, binary);
  }

  drain(): void {
    if (this.paused && this.client && this.client.bufferedAmount < CLIENT_LOW_WATER) {
      this.paused = false;
      this.upstream?.resume();
    }
  }

  closed(code: number, reason: string): void {
    this.client = null;
    this.end(code === 1005 || code === 1006 ? 1000 : code, reason);
  }

  private fromUpstream(data: Buffer, binary: boolean): void {
    if (this.ended) return;
    this.touch();
    // Only the events that start and end a response are parsed; audio deltas pass untouched (base64 holds no quote).
    let created = false;
    if (!binary) {
      if (data.includes('"response.done"')) this.settle(data);
      else if ((created = data.includes('"response.created"'))) {
        this.responseAt = performance.now();
        this.responseFirstAt = -1;
        if (this.call.reservation === null && !this.reserve()) return;
      }
    }
    const client = this.client;
    if (!client) return;
    // The response's first output after its start: its time to first byte in the request log.
    if (!created && this.responseFirstAt < 0) this.responseFirstAt = performance.now();
    client.send(data, binary);
    if (!this.paused && client.bufferedAmount > CLIENT_HIGH_WATER) {
      this.paused = true;
      this.upstream?.pause();
    }
  }

  /** Opens the next response's reservation; false (and the session closed) when it is refused. */
  private reserve(): boolean {
    const c = this.call;
    c.doc = { model: c.model, input_tokens: this.lastInput };
    const v = admit(this.d, c);
    // Counters are in memory after the session's start: admission answers at once.
    const refusal = v instanceof Promise ? { status: 503, code: 'shared_state_unavailable', message: 'Balances cannot be checked right now' } : v;
    if (refusal === null) return true;
    if (v instanceof Promise) void v.then(() => releaseReservation(this.d, c));
    this.client?.send(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', code: refusal.code, message: refusal.message } }), false);
    this.end(POLICY, `${refusal.code}: ${refusal.message}`);
    return false;
  }

  /** Bills one response from its `response.done` usage and closes its reservation. */
  private settle(data: Buffer): void {
    let response: { usage?: unknown; id?: unknown; status?: unknown } | undefined;
    try { response = JSON.parse(data.toString('utf8'))?.response; } catch { return; }
    const usage = response?.usage;
    const c = this.call;
    const key = c.servedBy;
    if (!key || !response || typeof usage !== 'object' || usage === null) return;
    this.responses++;
    const requestId = `${c.id}.${this.responses}`;
    const { usage: e, cost, audioSeconds } = billResponse(this.d, c, key, usage, {
      requestId, responseId: typeof response.id === 'string' ? response.id : '', status: typeof response.status === 'string' ? response.status : '',
      startedAt: this.responseAt, firstAt: this.responseFirstAt, endedAt: performance.now(),
    });
    this.lastInput = e.prompt;
    this.responseFirstAt = -1;
    this.totals.prompt += e.prompt;
    this.totals.completion += e.completion;
    this.totals.cached += e.cached;
    c.usage = { ...this.totals };
    c.units = unitUsage({ audioSeconds: (c.units?.audioSeconds ?? 0) + audioSeconds });
    c.credit += cost;
    this.d.log.info('realtime_response', { request: c.id, response: this.responses, model: c.servedModel, account: c.row.id, input_tokens: e.prompt, output_tokens: e.completion, cached_tokens: e.cached, credit: cost });
  }

  private touch(): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.end(1000, 'idle timeout'), this.d.settings.realtimeIdleMs);
  }

  /** Ends the session: both sockets closed with `code`, the open reservation released, the session observed. */
  end(code: number, reason: string): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.idle);
    clearTimeout(this.maxTimer);
    this.upstream?.close(code, reason);
    this.client?.close(sendableCloseCode(code) ? code : 1011, reason);
    this.finish();
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.ended = true;
    releaseReservation(this.d, this.call);
    const t = this.d.telemetry;
    const c = this.call;
    if (t && (t.metrics || t.tracer || t.accessLog)) {
      // The session's log line and span carry its totals; its metrics only count it, the responses were counted as they ended.
      observeEnd({ ...t, metrics: undefined }, this.d.log, c);
      t.metrics?.callEnded({
        path: c.path, status: c.status, metricModel: c.metricModel, metricLevel: c.metricLevel, stream: true, attempts: c.attempts,
        durationMs: c.durationMs, overheadMs: c.overheadMs, firstByteMs: c.firstByteMs, usage: null, credit: 0, billedUnits: null,
      });
    }
    this.gone();
  }
}
