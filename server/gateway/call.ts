import type { UpstreamClient } from '../adapters/upstream-http/client';
import type { ClientExchange, HeadWriter, ResponseStamp } from './transport';
import type { AccountCache, AccountRow } from '../state/accounts/account-cache';
import type { OwnerConfigStore, OwnerRouting } from '../state/owner-config/store';
import type { KeyPool, PooledKey } from '../state/provider-keys/key-pool';
import type { UsageSink } from '../domain/usage/types';
import type { Logger } from '../core/log';
import type { Endpoint } from './providers/types';
import type { ProviderKinds } from './providers/registry';
import type { AccountProfile, AccountProfiles } from './admission/profile';
import type { OwnerRules } from './admission/owner-rules';
import type { AdmissionRequest, AdmissionStore } from './admission/store';
import { clientRequestId, nextRequestId } from './request-id';
import type { CallSpan, ObservedUsage, ProxyTelemetry, TracedCallEnd, TracedCallStart } from '../core/telemetry';
import type { KeyHealth } from './key-health/key-health';
import type { SwitchOver } from './key-health/switch-over';
import type { UnpricedModels } from './stages/price-policy';
import type { ResponseKeys } from '../state/response-keys/response-keys';
import type { StoredResponses } from '../state/stored-responses/stored-responses';
import type { Json } from './formats/types';
import { ROUTES, type PathParams, type RouteSpec } from './routes';
import { errorFormatOf, type ErrorFormat } from './errors';
import type { UnitUsage } from '../domain/pricing/units';
import type { UsageUnits } from '../domain/usage/units';
import type { UploadForm } from './upload/form';
import type { FileBook } from './files/file-book';
import type { BatchRouteDeps } from './batches/index';

/** The proxy's tunables (from Settings). */
export interface ProxySettings {
  maxBodyBytes: number;
  userMinBalance: number;
  /** Low-balance alert threshold (USER_API_BALANCE). */
  userApiBalance: number;
  upstreamTimeoutMs: number;
  streamIdleTimeoutMs: number;
  streamFirstByteTimeoutMs: number;
  failoverBudgetMs: number;
  maxAttemptsPerLevel: number;
  shutdownGraceMs: number;
  /** Largest file uploaded to /v1/files (MAX_FILE_BYTES; the transport enforces it, the refusal names it). */
  maxFileBytes?: number;
}

/** What the proxy is built from: in-memory snapshots and the shared upstream connection pool. */
export interface ProxyDeps {
  settings: ProxySettings;
  log: Logger;
  accounts: AccountCache;
  config: OwnerConfigStore;
  pool: KeyPool;
  profiles: AccountProfiles;
  /** Credit, spend caps and rate limits: checked and reserved at admission, settled at the end. */
  admission: AdmissionStore;
  usage: Pick<UsageSink, 'record'>;
  kinds: ProviderKinds;
  health: KeyHealth;
  switchOver: SwitchOver;
  upstream: UpstreamClient;
  /** Requested models without a price, noted for the Owner. */
  unpriced: Pick<UnpricedModels, 'note'>;
  /** Which provider key created each stored response (previous_response_id goes back to it). */
  responseKeys: Pick<ResponseKeys, 'remember' | 'keyOf' | 'creatorOf'>;
  /** The conversations of Responses calls answered through translation (previous_response_id on keys without the Responses API; their reads and deletion). */
  storedResponses?: Pick<StoredResponses, 'keep' | 'recall' | 'read' | 'forget'>;
  /** Metrics, traces and the access log; nothing is measured without it. */
  telemetry?: ProxyTelemetry;
  /** The files uploaded through the gateway and the keys holding them (files/); no Files API without it. */
  files?: FileBook;
  /** What the batch routes need beyond the proxy's own (batches/): no Batch APIs without it. */
  batches?: BatchRouteDeps;
}

/**
 * One client request on its way through the stages, and what each stage found out. It is
 * the only object the pipeline allocates per call; every field exists from the start, so
 * its shape never changes as the stages fill it in.
 */
export class ProxyCall implements ResponseStamp, TracedCallStart, TracedCallEnd {
  /** The envelope of the client's format its errors go in: Anthropic's on `/v1/messages` and its token count, Google's on the Gemini routes. */
  readonly errorFormat: ErrorFormat;
  /** How the endpoint's body arrives and what it is billed by. */
  readonly route: RouteSpec;
  /** This gateway's own ID for the call, unique across instances: names the reservation. */
  readonly serial: string = nextRequestId();
  /**
   * Request ID: the client's `x-request-id` when it sent a usable one, else `serial`. Every
   * answer carries it, and it names the usage record and the log lines about the call.
   */
  readonly id: string;

  /** The HTTP method: POST but for a stored response's reads and deletion (stages/stored-response.ts). */
  method: 'POST' | 'GET' | 'DELETE' = 'POST';

  // observation (see observe.ts): times in ms from performance.now()
  readonly startedAt: number = performance.now();
  /** The status the client was answered with (set as the head goes out); 499 when it left first. */
  status = 0;
  attempts = 0;
  /** Time spent in finished upstream attempts. */
  upstreamMs = 0;
  /** When the attempt under way began; 0 when none is. */
  attemptAt = 0;
  overheadMs = -1;
  firstByteMs = -1;
  /** When the answer's head went out, whole or streamed (the request log's time to first byte); -1 before. */
  headMs = -1;
  durationMs = 0;
  /** What settle billed (equivalent tokens for a unit-billed route). */
  usage: ObservedUsage | null = null;
  /** The units a unit-billed route was charged for (images, seconds, characters, calls), for the log. */
  units: UnitUsage | null = null;
  /** The same units by kind as the usage record keeps them (domain/usage/units.ts), for metrics. */
  billedUnits: UsageUnits | null = null;
  credit = 0;
  /** GenAI provider name of the attempt that served the call. */
  provider = '';
  /** The call's span, when tracing is on. */
  trace: CallSpan | null = null;

  // authenticate
  row: AccountRow = undefined!;
  profile: AccountProfile = undefined!;
  owner: OwnerRouting = undefined!;
  /** The Owner's RESOURCES and MODEL_LIMITS, parsed once per Owner configuration. */
  ownerRules: OwnerRules = undefined!;

  // read body
  raw: Buffer = undefined!;
  /** The request JSON, parsed once; re-serialized only when the model or stream options change. */
  doc: Record<string, unknown> = undefined!;
  /** The model the client asked for (the one in `raw`). */
  requestedModel = '';
  stream = false;
  /** The proxy adds `stream_options.include_usage` and hides the extra usage chunk. */
  injectUsage = false;
  /** A multipart upload's form fields read before the first file (model, n, size, quality, response_format). */
  form: Record<string, string> | null = null;
  /** The upload's declared size in bytes (Content-Length), else the size limit: what a reservation assumes. */
  uploadBytes = 0;
  /** The multipart upload on its way upstream (upload routes only); disposed when the call ends. */
  upload: UploadForm | null = null;

  // map model
  /** The model after mapping: routed and billed. */
  model = '';
  level = 0;

  // conversation
  /** A Responses call to keep (not `store: false`): a completed translated answer is handed here. */
  keepAnswer: ((completed: Json) => Promise<void>) | undefined = undefined;

  // admission
  /** What admission reserved, until settle or release closes it. */
  reservation: AdmissionRequest | null = null;

  // dispatch
  /** The last body sent upstream and its model, reused by the next attempt. */
  body: Buffer | undefined = undefined;
  bodyModel: string | undefined = undefined;
  /** The tools the last body built left out (UNSUPPORTED_TOOLS=drop), and those of the body the answer came from. */
  bodyDropped: string[] = [];
  droppedTools: string[] = [];
  /** The key, Level and model that delivered the answer: what settle bills. */
  servedBy: PooledKey | undefined = undefined;
  servedLevel = 0;
  servedModel = '';
  /**
   * The catalogue name of the model ID the serving upstream was sent (`aws/us.anthropic.…`), on
   * a kind whose own IDs the catalogue prices (ProviderKind.catalogue): settle bills at its price
   * where the catalogue has one, else at the client-facing model's.
   */
  servedPriceAs: string | undefined = undefined;

  constructor(
    readonly ex: ClientExchange,
    readonly endpoint: Endpoint,
    /** The `/v1/...` path of the endpoint, whichever alias the client called. */
    readonly path: string,
    /** What the path and query say on the routes that carry the model there (Gemini's); null on the others. */
    readonly params: PathParams | null = null,
  ) {
    this.errorFormat = errorFormatOf(endpoint);
    this.route = ROUTES[endpoint];
    this.id = clientRequestId(ex.headers['x-request-id']) ?? this.serial;
  }

  /**
   * The request ID and the gateway's own time so far, in the head of whatever answer goes
   * out. During an attempt everything since it began is the upstream's time.
   */
  stampHead(status: number, head: HeadWriter): void {
    const now = performance.now();
    this.status = status;
    if (this.headMs < 0) this.headMs = now - this.startedAt;
    const own = (this.attemptAt !== 0 ? this.attemptAt : now) - this.startedAt - this.upstreamMs;
    this.overheadMs = own;
    if (this.stream && status < 300) this.firstByteMs = now - this.startedAt;
    head.writeHeader('x-request-id', this.id);
    head.writeHeader('server-timing', `gateway;dur=${own.toFixed(2)}`);
    if (this.droppedTools.length) head.writeHeader('x-switchyard-dropped', this.droppedTools.join(','));
  }

  /** The model for metrics and logs: the one billed, else the mapped one ('' before the body was read). */
  get metricModel(): string {
    return this.servedModel || this.model;
  }

  /** The Level that served the call, else the start Level; -1 before mapping. */
  get metricLevel(): number {
    return this.servedBy ? this.servedLevel : this.model ? this.level : -1;
  }

  get keyId(): number {
    return this.servedBy?.id ?? 0;
  }

  get traceparent(): string | undefined {
    return this.ex.headers.traceparent;
  }

  get tracestate(): string | undefined {
    return this.ex.headers.tracestate;
  }
}

