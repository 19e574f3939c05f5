import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { sendJson, sleep, type Behaviour } from './mock-upstream/common';
import { chatCompletions, openaiError, storedResponse, type Call } from './mock-upstream/openai';
import { anthropicError, anthropicPreconditions } from './mock-upstream/anthropic';
import { readMultipart } from './mock-upstream/uploads';
import { attachRealtime, type RealtimeRecord } from './mock-upstream/realtime';
import { TokenIssuer, type TokenBehaviour } from './mock-upstream/oauth';
import { BEDROCK_PATH, bedrockAuth, bedrockCall, awsError, behaviourError } from './mock-upstream/bedrock';
import { GEMINI_PATH, geminiBehaviourError, geminiCall, geminiError, geminiKeyOf } from './mock-upstream/gemini';
import { FileStore, FILES_PATH, filesCall } from './mock-upstream/files';
import { routeOf, vertexClaudeProblem } from './mock-upstream/routes';
import { BatchClock, type BatchPace } from './mock-upstream/batch-clock';
import { BATCHES_PATH, OpenAIBatches } from './mock-upstream/batches';
import { MESSAGE_BATCHES_PATH, MessageBatches } from './mock-upstream/message-batches';

export type { Behaviour, Usage } from './mock-upstream/common';
export type { TokenBehaviour } from './mock-upstream/oauth';
export type { BatchPace } from './mock-upstream/batch-clock';
export { FAIL_LINE_MARKER } from './mock-upstream/batch-clock';
export { estimateTokens } from './mock-upstream/common';
export { startBlackHole, refusedOrigin, UNRESOLVABLE_ORIGIN, type BlackHole } from './mock-upstream/unreachable';

export interface RecordedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: Record<string, string>;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** Parsed JSON, or the raw text when it is not JSON (e.g. the token endpoint's form). */
  body: unknown;
  /** The upstream credential: Bearer token, `x-api-key`, `api-key`, or the JWT `iss` on `/token`. */
  credential: string | null;
  /** Date.now() when the request body had arrived. */
  at: number;
  /** Azure-style paths only. */
  deployment?: string;
  apiVersion?: string;
  /** Vertex-style paths only. */
  project?: string;
  location?: string;
}

export interface MockUpstream {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Every request, in arrival order. */
  requests: RecordedRequest[];
  /** Realtime WebSocket sessions, in arrival order (refused upgrades too). */
  realtime: RealtimeRecord[];
  /** Token exchanges at `/token` (accepted or refused). */
  readonly tokenRequests: number;
  /**
   * How requests with this upstream credential are answered from now on (replaces an earlier
   * behaviour for it). For Vertex-style calls the credential is the issued access token; a
   * behaviour registered under the service account's client email applies to all its tokens.
   */
  behave(credential: string, b: Behaviour): void;
  /** How `/token` answers assertions issued by this service account. */
  behaveToken(clientEmail: string, b: TokenBehaviour): void;
  /** Makes `/token` verify this service account's RS256 signatures (otherwise only shape and claims are checked). */
  trustServiceAccount(clientEmail: string, publicKeyPem: string): void;
  /** Lets SigV4-signed Bedrock calls with this access key ID in, verified against its secret (any other is UnrecognizedClientException). */
  trustAwsKey(accessKeyId: string, secretAccessKey: string): void;
  /** Invalidates every issued access token: Vertex-style calls with them get 401 until a new exchange. */
  revokeTokens(): void;
  /**
   * Paces the batch APIs (OpenAI batches, Anthropic message batches): every open batch moves one
   * stage per `stepMs` (null: only on stepBatches()), answering `linesPerStep` requests per step.
   */
  batchClock(pace: BatchPace): void;
  /** Moves every open batch one stage now (resolves when the step is done). */
  stepBatches(): Promise<void>;
  /** Ends this batch's completion window now (OpenAI `batch_…` or Anthropic `msgbatch_…`): done requests kept, the rest expired. */
  expireBatch(id: string): Promise<void>;
  /** Clears requests, behaviours and the token-request count (issued tokens, trusted keys, files and batches stay). */
  reset(): void;
  close(): Promise<void>;
}

/** The behaviour as it applies to this request: its time window, flapping period and models. */
function inForce(b: (Behaviour & { setAt?: number }) | undefined, model: string): Behaviour {
  if (!b) return {};
  const now = Date.now();
  if (b.activeUntil !== undefined && now >= b.activeUntil) return {};
  if (b.flapMs !== undefined && Math.floor((now - (b.setAt ?? now)) / b.flapMs) % 2 === 1) return {};
  if (b.onlyModels !== undefined && !b.onlyModels.includes(model)) return {};
  return b;
}

function credentialOf(req: IncomingMessage): string | null {
  const h = req.headers;
  const bearer = /^Bearer\s+(\S+)$/i.exec(h.authorization ?? '');
  return (h['x-api-key'] as string | undefined) || (h['api-key'] as string | undefined) || bearer?.[1] || null;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export interface MockUpstreamOptions {
  /** Milliseconds per batch stage (default 50); null holds batches until stepBatches(). */
  batchStepMs?: number | null;
  /** Requests a running batch answers per stage (default: all). */
  batchLinesPerStep?: number;
}

/**
 * A fake set of AI providers (OpenAI, Anthropic, Azure-style deployments, a Vertex-style
 * cloud platform with its token exchange) on a loopback port, answering in each provider's
 * real wire format, recording every request, and misbehaving per credential on demand.
 */
export async function startMockUpstream(options: MockUpstreamOptions = {}): Promise<MockUpstream> {
  const requests: RecordedRequest[] = [];
  const behaviours = new Map<string, Behaviour & { left?: number; setAt?: number }>();
  const tokenBehaviours = new Map<string, TokenBehaviour & { left?: number }>();
  const issuer = new TokenIssuer();
  const sockets = new Set<Socket>();
  const awsKeys = new Map<string, string>();
  const files = new FileStore();
  const clock = new BatchClock({ stepMs: options.batchStepMs, linesPerStep: options.batchLinesPerStep });
  /** The behaviour in force for a batch's requests, without using up its `times` (they are not calls). */
  const behaviourFor = (credential: string, model: string): Behaviour => {
    const b = behaviours.get(credential);
    return b && (b.left === undefined || b.left > 0) ? inForce(b, model) : {};
  };
  const openaiBatches = new OpenAIBatches({ files, behaviourFor }, clock);
  /** Made once the port is known: results_url points at the mock's own origin. */
  let messageBatches: MessageBatches | null = null;

  /** The behaviour in force for this request, consuming one of its `times`. */
  function take<B extends { times?: number; left?: number }>(map: Map<string, B>, ...ids: (string | null)[]): B | undefined {
    for (const id of ids) {
      if (id === null) continue;
      const b = map.get(id);
      if (!b) continue;
      if (b.left !== undefined) {
        if (b.left <= 0) continue;
        b.left -= 1;
      }
      return b;
    }
    return undefined;
  }

  async function tokenEndpoint(req: IncomingMessage, res: ServerResponse, raw: string, rec: RecordedRequest): Promise<void> {
    const iss = TokenIssuer.issuerOf(raw);
    rec.credential = iss;
    const tb = take(tokenBehaviours, iss) ?? {};
    if (tb.delayMs) await sleep(tb.delayMs);
    if (tb.status && tb.status >= 400) {
      issuer.requests += 1;
      sendJson(res, tb.status, { error: tb.status === 401 || tb.status === 400 ? 'invalid_grant' : 'internal_failure', error_description: `mock refusal (${tb.status})` });
      return;
    }
    const answer = issuer.exchange(raw, rec.path, tb.expiresIn);
    sendJson(res, answer.status, answer.body);
  }

  /**
   * The stored-object APIs (files, batches) as any call: a credential, then the behaviour in
   * force for it (failures, delays; its answer fields shape the batch lines instead). False
   * when the request has been answered.
   */
  async function storedApiAdmits(req: IncomingMessage, res: ServerResponse, rec: RecordedRequest, headers: Record<string, string>, fail: typeof openaiError): Promise<boolean> {
    if (!rec.credential) {
      fail(res, 401, fail === anthropicError ? 'x-api-key header is required' : 'No API key provided.');
      return false;
    }
    const b = inForce(take(behaviours, rec.credential), '');
    if (b.dropConnection) {
      req.socket.destroy();
      return false;
    }
    if (b.blackHole) return false;
    if (b.delayMs) await sleep(b.delayMs);
    if (res.destroyed) return false;
    const status = b.status ?? (b.retryAfter !== undefined || b.retryAfterMs !== undefined ? 429 : undefined);
    if (status === undefined || status < 400) return true;
    const extra: Record<string, string> = {};
    if (status === 429 && b.retryAfter !== undefined) extra['retry-after'] = String(b.retryAfter);
    if (status === 429 && b.retryAfterMs !== undefined) extra['retry-after-ms'] = String(b.retryAfterMs);
    const echo = b.echoCredentials ? `: you sent ${headers.authorization ?? `x-api-key ${rec.credential}`} to http://${headers.host}${req.url}` : '';
    fail(res, status, `mock upstream failure (${status})${echo}`, extra);
    return false;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const u = new URL(req.url ?? '/', 'http://mock');
    // Uploads are parsed as they arrive, their files measured and hashed, never kept (but the Files API's).
    const multipart = /^multipart\/form-data/i.test(req.headers['content-type'] ?? '');
    // The Files API keeps its uploads: streamed to disk as they arrive (the gateway's tests send 200 MB).
    const form = multipart ? await readMultipart(req, FILES_PATH.test(u.pathname) ? files.dir : undefined).catch(() => null) : null;
    const raw = multipart ? '' : await readBody(req);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    let body: unknown = form ?? raw;
    let json = form !== null;
    if (raw && /json/i.test(headers['content-type'] ?? '')) {
      try { body = JSON.parse(raw); json = true; } catch { /* recorded raw; answered 400 below */ }
    }
    const rec: RecordedRequest = {
      method: req.method ?? 'GET', path: u.pathname, query: Object.fromEntries(u.searchParams), headers, body,
      credential: credentialOf(req), at: Date.now(),
    };
    requests.push(rec);

    if (req.method === 'POST' && u.pathname.endsWith('/token')) return tokenEndpoint(req, res, raw, rec);
    if (FILES_PATH.test(u.pathname)) {
      if (!(await storedApiAdmits(req, res, rec, headers, openaiError))) return;
      return filesCall(res, files, rec.credential!, rec.method, u.pathname, u.searchParams, form);
    }
    if (MESSAGE_BATCHES_PATH.test(u.pathname)) {
      if (!(await storedApiAdmits(req, res, rec, headers, anthropicError))) return;
      return messageBatches!.call(req, res, rec.credential!, rec.method, u.pathname, json ? body : null, u.searchParams);
    }
    if (BATCHES_PATH.test(u.pathname)) {
      if (!(await storedApiAdmits(req, res, rec, headers, openaiError))) return;
      return openaiBatches.call(res, rec.credential!, rec.method, u.pathname, u.searchParams, json ? body : null);
    }
    const bedrock = req.method === 'POST' ? BEDROCK_PATH.exec(u.pathname) : null;
    if (bedrock) {
      // The signature covers the path as sent (still percent-encoded) and the body's bytes.
      const auth = await bedrockAuth(req, res, req.url?.split('?')[0] ?? u.pathname, Buffer.from(raw, 'utf8'), awsKeys);
      if (!auth) return;
      rec.credential = auth.credential;
      if (!json || typeof body !== 'object' || body === null || Array.isArray(body)) return awsError(res, 400, 'ValidationException', 'Malformed input request, please reformat your input and try again.');
      const modelId = decodeURIComponent(bedrock[1]);
      const b = inForce(take(behaviours, auth.credential), modelId);
      if (b.dropConnection) return void req.socket.destroy();
      if (b.blackHole) return;
      if (b.delayMs) await sleep(b.delayMs);
      if (b.status !== undefined && b.status >= 400) {
        const echo = b.echoCredentials ? `: you sent ${headers.authorization} to http://${headers.host}${req.url}` : '';
        return behaviourError(res, b.status, echo);
      }
      return bedrockCall(req, res, modelId, bedrock[2], body as Record<string, unknown>, b);
    }
    const gemini = req.method === 'POST' ? GEMINI_PATH.exec(u.pathname) : null;
    if (gemini) {
      const key = geminiKeyOf(res, headers, u.searchParams);
      if (!key) return;
      rec.credential = key;
      // Google's answer to a body that is not JSON.
      if (!json || typeof body !== 'object' || body === null || Array.isArray(body)) return geminiError(res, 400, 'Invalid JSON payload received. Unexpected token.');
      const model = decodeURIComponent(gemini[1]);
      const b = inForce(take(behaviours, key), model);
      if (b.dropConnection) return void req.socket.destroy();
      if (b.blackHole) return;
      if (b.delayMs) await sleep(b.delayMs);
      const status = b.status ?? (b.retryAfter !== undefined ? 429 : undefined);
      if (status !== undefined && status >= 400) {
        const echo = b.echoCredentials ? `: you sent x-goog-api-key ${key} to http://${headers.host}${req.url}` : '';
        return geminiBehaviourError(res, status, echo, b.retryAfter);
      }
      return geminiCall(req, res, model, gemini[2], u.searchParams, body as Record<string, any>, b);
    }
    const stored = /\/v1\/responses\/([^/]+)(\/input_items)?$/.exec(u.pathname);
    if (stored && (req.method === 'GET' || req.method === 'DELETE')) {
      return storedResponse(res, rec.credential, req.method, decodeURIComponent(stored[1]), stored[2] !== undefined, u.searchParams);
    }
    const route = req.method === 'POST' ? routeOf(u.pathname) : null;
    if (!route) return openaiError(res, 404, `Invalid URL (${req.method} ${u.pathname})`, {}, 'unknown_url');
    const fail = route.family === 'anthropic' ? anthropicError : openaiError;
    if (route.deployment !== undefined) {
      rec.deployment = route.deployment;
      rec.apiVersion = u.searchParams.get('api-version') ?? undefined;
    }
    if (route.project !== undefined) {
      rec.project = route.project;
      rec.location = route.location;
    }
    if (!rec.credential) return fail(res, 401, 'No API key provided.');
    let holder: string | null = null;
    if (route.vertex) {
      holder = issuer.holder(rec.credential);
      if (!holder) return fail(res, 401, 'Request had invalid authentication credentials. Expected OAuth 2 access token.');
    }
    if (route.deployment !== undefined && !rec.apiVersion) return fail(res, 404, 'Resource not found: api-version query parameter is required');
    if (!json || typeof body !== 'object' || body === null || Array.isArray(body)) return fail(res, 400, 'The request body is not a JSON object.');

    const fields = body as Record<string, unknown>;
    if (route.vertex && route.family === 'anthropic') {
      const problem = vertexClaudeProblem(fields, route.rawPredict);
      if (problem) return fail(res, 400, problem);
    }
    const model = route.rawPredict?.model ?? (typeof fields.model === 'string' ? fields.model : route.deployment ?? 'unknown-model');
    const b = inForce(take(behaviours, rec.credential, holder), model);
    if (b.dropConnection) return void req.socket.destroy();
    // Never answered; close() (or the client giving up) ends the socket.
    if (b.blackHole) return;
    if (b.delayMs) await sleep(b.delayMs);
    if (res.destroyed) return;
    const status = b.status ?? (b.retryAfter !== undefined || b.retryAfterMs !== undefined ? 429 : undefined);
    if (status !== undefined && status >= 400) {
      const extra: Record<string, string> = {};
      if (status === 429 && b.retryAfter !== undefined) extra['retry-after'] = String(b.retryAfter);
      if (status === 429 && b.retryAfterMs !== undefined) extra['retry-after-ms'] = String(b.retryAfterMs);
      const echo = b.echoCredentials
        ? `: you sent ${headers.authorization ?? `x-api-key ${rec.credential}`} to http://${headers.host}${req.url}`
          + ` (key=${encodeURIComponent(rec.credential)}, base64 ${Buffer.from(rec.credential).toString('base64')})`
        : '';
      return fail(res, status, `mock upstream failure (${status})${echo}`, extra);
    }
    const call: Call = { req, res, body: fields, behaviour: b, model };
    if (route.family === 'anthropic' && !anthropicPreconditions(call, route.vertex)) return;
    if (route.handle === chatCompletions && !Array.isArray(fields.messages)) {
      return fail(res, 400, "'messages' is a required property");
    }
    await route.handle(call);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: Error) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: `mock upstream crashed: ${err.message}`, type: 'server_error', param: null, code: 'mock_crash' } });
      else res.destroy();
    });
  });
  const realtime: RealtimeRecord[] = [];
  attachRealtime(server, (credential, model) => inForce(take(behaviours, credential), model), realtime);
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  messageBatches = new MessageBatches({ files, behaviourFor }, clock, `http://127.0.0.1:${port}`);

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    realtime,
    get tokenRequests() { return issuer.requests; },
    behave(credential, b) {
      behaviours.set(credential, { ...b, left: b.times, setAt: Date.now() });
    },
    behaveToken(clientEmail, b) {
      tokenBehaviours.set(clientEmail, { ...b, left: b.times });
    },
    trustServiceAccount(clientEmail, publicKeyPem) {
      issuer.trust(clientEmail, publicKeyPem);
    },
    trustAwsKey(accessKeyId, secretAccessKey) {
      awsKeys.set(accessKeyId, secretAccessKey);
    },
    batchClock(pace) {
      clock.pace(pace);
    },
    stepBatches() {
      return clock.step();
    },
    async expireBatch(id) {
      if (!(await clock.expire(id))) throw new Error(`mock upstream: no batch ${id}`);
    },
    revokeTokens() {
      issuer.revoke();
    },
    reset() {
      requests.length = 0;
      realtime.length = 0;
      behaviours.clear();
      tokenBehaviours.clear();
      issuer.resetCount();
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        clock.close();
        files.close();
        // Stalled streams and keep-alive sockets would otherwise hold close() forever.
        for (const s of sockets) s.destroy();
      });
    },
  };
}
