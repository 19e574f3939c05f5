import type { Endpoint } from './providers/types';
import { errorFields } from '../core/log';
import { refuse, sendProxyError, type Refusal, type Verdict } from './errors';
import { ProxyCall, type ProxyDeps } from './call';
import type { ClientExchange } from './transport';
import { isDatabaseUnavailable } from '../adapters/storage/errors';
import { authenticate } from './stages/authenticate';
import { BODY_REQUIRED, readBody } from './stages/read-body';
import { readUpload } from './stages/read-upload';
import { mapModel } from './stages/map-model';
import { checkAccess, checkCaller } from './stages/access';
import { checkPrice } from './stages/price-policy';
import { continueConversation } from './stages/conversation';
import { admit } from './stages/admission';
import { dispatch } from './stages/dispatch';
import { releaseReservation, settle } from './stages/settle';
import { answerStoredResponse, type StoredResponseRequest } from './stages/stored-response';
import type { StoredResponseRoute } from './routes';
import { observeEnd } from './observe';
import type { ProxyTelemetry } from '../core/telemetry';

/** The client headers the proxy reads: credentials, the body's type and framing, and those forwarded to providers. */
export const PROXY_HEADERS: readonly string[] = [
  'authorization', 'x-api-key', 'content-type', 'content-length', 'transfer-encoding', 'anthropic-version', 'anthropic-beta', 'openai-beta',
  // The client's request ID and W3C trace context (observe.ts).
  'x-request-id', 'traceparent', 'tracestate',
];

const SHUTTING_DOWN: Refusal = { status: 503, message: 'The gateway is shutting down; retry', code: 'shutting_down', headers: { 'retry-after': '1' } };

/**
 * The AI proxy's request pipeline: a call goes through the stages below in order, and the
 * first refusal is the answer. Everything before dispatch reads memory after an account's
 * first call: a stage returns a promise only when it has to read the database, so the usual
 * call awaits nothing but its body and the upstream.
 */
export class ProxyPipeline {
  private inflight = 0;
  private closing = false;
  private drained: (() => void) | null = null;
  /** Undefined when metrics, traces and the access log are all off: nothing is measured then. */
  private readonly telemetry: ProxyTelemetry | undefined;

  constructor(private readonly d: ProxyDeps) {
    const t = d.telemetry;
    this.telemetry = t && (t.metrics || t.tracer || t.accessLog) ? t : undefined;
  }

  /** Serves one call on `endpoint`; `path` is its `/v1/...` form, whichever alias the client called. */
  serve(ex: ClientExchange, endpoint: Endpoint, path: string): void {
    const c = this.open(new ProxyCall(ex, endpoint, path));
    this.track(c, this.run(c));
  }

  /** Serves a stored response's read or deletion (`route`, the response ID and query in `r`). */
  serveStoredResponse(ex: ClientExchange, route: StoredResponseRoute, r: Omit<StoredResponseRequest, 'action'>): void {
    const c = new ProxyCall(ex, 'responses', route.canonical);
    c.method = route.method;
    this.track(this.open(c), this.runStoredResponse(c, { ...r, action: route.action }));
  }

  /** A call begins: its answers carry its stamp, its span starts, it counts as in flight. */
  private open(c: ProxyCall): ProxyCall {
    c.ex.stamp = c;
    if (this.telemetry?.tracer) c.trace = this.telemetry.tracer.startCall(c);
    this.inflight++;
    return c;
  }

  /** Until the call ends: what escapes it is answered 500 (or 503 without the database); then its telemetry, and it is no longer in flight. */
  private track(c: ProxyCall, running: Promise<void>): void {
    const { ex, path } = c;
    const t = this.telemetry;
    running
      .catch((err) => {
        this.d.log.error('proxy_request_failed', { path, request: c.id, ...errorFields(err) });
        const unavailable = isDatabaseUnavailable(err);
        if (unavailable) t?.metrics?.databaseUnavailable();
        // A response already ended must not be touched again.
        if (ex.finished) return;
        // Only a first request of an account or Owner reads the database on this path.
        if (unavailable) sendProxyError(ex, c.anthropic, 503, "The gateway's database is unavailable; retry shortly", 'database_unavailable', { 'retry-after': '5' }, c.id);
        else sendProxyError(ex, c.anthropic, 500, 'Internal server error', 'internal_error', undefined, c.id);
      })
      .finally(() => {
        // An upload not sent (refused, failed, client gone) frees its parser and spool now.
        c.upload?.dispose();
        if (t) observeEnd(t, this.d.log, c);
        if (--this.inflight === 0 && this.drained) this.drained();
      });
  }

  /** Refuses new calls and waits (up to the grace time) for those under way. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.inflight === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, this.d.settings.shutdownGraceMs);
      this.drained = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Calls under way (admitted or not yet answered). */
  get inFlight(): number {
    return this.inflight;
  }

  private async run(c: ProxyCall): Promise<void> {
    const d = this.d;
    if (this.closing) return refuse(c, SHUTTING_DOWN);
    // A stage answers null to go on; a promise only when it must wait for the database.
    let v: Verdict | Promise<Verdict>;
    if ((v = authenticate(d, c)) && (v = await v)) return refuse(c, v);
    const read = c.route.body === 'multipart' ? await readUpload(c) : readBody(c, await c.ex.readJsonObject(BODY_REQUIRED));
    if (read) return refuse(c, read);
    mapModel(c);
    if ((v = checkAccess(c))) return refuse(c, v);
    if ((v = checkPrice(d, c))) return refuse(c, v);
    // A continued conversation is whole before admission holds its cost.
    if ((v = continueConversation(d, c)) && (v = await v)) return refuse(c, v);
    const free = c.route.free;
    if (!free && (v = admit(d, c)) && (v = await v)) return refuse(c, v);
    try {
      if (c.ex.aborted) return;
      const delivered = await dispatch(d, c);
      if (delivered && !free) settle(d, c, delivered);
    } finally {
      // Failed, refused upstream, client gone, or thrown: what was reserved goes back.
      releaseReservation(d, c);
    }
  }

  /** A stored response's read or deletion: who calls, from where, then the answer; free, so nothing is admitted. */
  private async runStoredResponse(c: ProxyCall, r: StoredResponseRequest): Promise<void> {
    if (this.closing) return refuse(c, SHUTTING_DOWN);
    let v: Verdict | Promise<Verdict>;
    if ((v = authenticate(this.d, c)) && (v = await v)) return refuse(c, v);
    if ((v = checkCaller(c))) return refuse(c, v);
    await answerStoredResponse(this.d, c, r);
  }
}
