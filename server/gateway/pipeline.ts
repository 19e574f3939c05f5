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
import type { PathParams, StoredResponseRoute } from './routes';
import { observeEnd } from './observe';
import type { FileRoute } from './files/routes';
import { uploadFile } from './files/upload';
import { answerFile } from './files/reads';
import type { ProxyTelemetry } from '../core/telemetry';
import { answerBatch, type BatchRoute } from './batches/index';

/** The client headers the proxy reads: credentials, the body's type and framing, and those forwarded to providers. */
export const PROXY_HEADERS: readonly string[] = [
  'authorization', 'x-api-key', 'x-goog-api-key', 'content-type', 'content-length', 'transfer-encoding', 'anthropic-version', 'anthropic-beta', 'openai-beta',
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

  /** Serves one call on `endpoint`; `path` is its `/v1/...` form, whichever alias the client called; `params` what its path says (Gemini's routes). */
  serve(ex: ClientExchange, endpoint: Endpoint, path: string, params?: PathParams): void {
    const c = this.open(new ProxyCall(ex, endpoint, path, params));
    this.track(c, this.run(c));
  }

  /** Serves a stored response's read or deletion (`route`, the response ID and query in `r`). */
  serveStoredResponse(ex: ClientExchange, route: StoredResponseRoute, r: Omit<StoredResponseRequest, 'action'>): void {
    const c = new ProxyCall(ex, 'responses', route.canonical);
    c.method = route.method;
    this.track(this.open(c), this.runStoredResponse(c, { ...r, action: route.action }));
  }

  /** Serves a Files API route (files/): the path's file ID ('' on the list and upload) and the query string. */
  serveFile(ex: ClientExchange, route: FileRoute, fileId: string, query: string): void {
    const c = new ProxyCall(ex, 'chat', route.canonical);
    c.method = route.method;
    this.track(this.open(c), this.runFile(c, route, fileId, query));
  }

  /** Serves a batch route (batches/): the path's batch ID ('' on the list and create) and the query string. */
  serveBatch(ex: ClientExchange, route: BatchRoute, batchId: string, query: string): void {
    // Anthropic's routes answer errors in its envelope, as /v1/messages does.
    const c = new ProxyCall(ex, route.api === 'anthropic' ? 'messages' : 'chat', route.canonical);
    c.method = route.method;
    this.track(this.open(c), this.runBatch(c, route, batchId, query));
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
        if (unavailable) sendProxyError(ex, c.errorFormat, 503, "The gateway's database is unavailable; retry shortly", 'database_unavailable', { 'retry-after': '5' }, c.id);
        else sendProxyError(ex, c.errorFormat, 500, 'Internal server error', 'internal_error', undefined, c.id);
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
    // The answer ends once what the call held is given back where every instance sees it: the
    // client may call again at once, through any instance (issue #30).
    // A store that applies settles as they are made (one process) has no `applied`: nothing to hold.
    const held = c.reservation;
    const open = held && d.admission.applied ? c.ex.holdEnd?.() : undefined;
    try {
      if (c.ex.aborted) return;
      const delivered = await dispatch(d, c);
      if (delivered && !free) settle(d, c, delivered);
    } finally {
      // Failed, refused upstream, client gone, or thrown: what was reserved goes back.
      releaseReservation(d, c);
      if (open) {
        const applied = d.admission.applied?.(held!);
        if (applied) await applied;
        open();
      }
    }
  }

  /** A Files API call: who calls, from where, then the answer (an upload is also checked as a call to its lines' model); free. */
  private async runFile(c: ProxyCall, route: FileRoute, fileId: string, query: string): Promise<void> {
    if (this.closing) return refuse(c, SHUTTING_DOWN);
    const files = this.d.files;
    let v: Verdict | Promise<Verdict>;
    if ((v = authenticate(this.d, c)) && (v = await v)) return refuse(c, v);
    if ((v = checkCaller(c))) return refuse(c, v);
    if (!files) return refuse(c, { status: 404, code: 'not_found', message: 'Files are not served here' });
    const d = { ...this.d, files };
    if (route.action === 'upload') return uploadFile(d, c);
    await answerFile(d, c, { action: route.action, fileId, query });
  }

  /** A batch route: who calls, from where (AllowIPs, Resources), then the route; creating one reserves its worst case (batches/reserve.ts). */
  private async runBatch(c: ProxyCall, route: BatchRoute, batchId: string, query: string): Promise<void> {
    if (this.closing) return refuse(c, SHUTTING_DOWN);
    let v: Verdict | Promise<Verdict>;
    if ((v = authenticate(this.d, c)) && (v = await v)) return refuse(c, v);
    if ((v = checkCaller(c))) return refuse(c, v);
    if (!this.d.batches) return refuse(c, { status: 404, code: 'not_found', message: `${route.canonical} is not served here` });
    await answerBatch(this.d.batches, c, route, batchId, query);
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
