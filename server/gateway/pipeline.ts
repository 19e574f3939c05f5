import { BodyTooLargeError, Exchange } from '../core/http/exchange';
import type { HttpRequest, HttpResponse } from '../core/http/uws';
import { credentialFrom } from '../core/http/credentials';
import type { OwnerRouting } from '../state/owner-config/store';
import type { PatternTable } from '../domain/mapping/mappers';
import { modelChecks, refusalHeaders, refusalMessage } from './limits/account-limits';
import type { Endpoint } from './providers/types';
import { errorFields } from '../core/log';
import { ANY, parseResourceList, type AllowList } from '../domain/access/allow-lists';
import { limitTable } from './admission/profile';
import { sendProxyError } from './errors';
import type { ProxyCall, ProxyDeps } from './call';
import { dispatch } from './dispatch/dispatch';
import { isDatabaseUnavailable } from '../adapters/storage/errors';

/** The client headers the proxy reads: credentials, body framing, and those forwarded to providers. */
const PROXY_HEADERS = ['authorization', 'x-api-key', 'content-length', 'transfer-encoding', 'anthropic-version', 'anthropic-beta', 'openai-beta'] as const;

type OwnerExtras = { resources: AllowList<string>; modelLimits: PatternTable<{ rpm?: number; tpm?: number }> };
const ownerExtras = new WeakMap<OwnerRouting, OwnerExtras>();

/** Parsed once per Owner configuration: the store builds a new routing object on every change. */
function extras(owner: OwnerRouting): OwnerExtras {
  let e = ownerExtras.get(owner);
  if (!e) ownerExtras.set(owner, (e = { resources: parseResourceList(owner.resources), modelLimits: limitTable(owner.modelLimits) }));
  return e;
}

/**
 * The AI proxy's request pipeline: authenticate (in-memory account cache), parse the body
 * once, map the model, check the ACL (AllowIPs, Resources, AllowModels, AllowLevels), the
 * balance and the rate limits — all from memory after the first request of an account —
 * then hand the call to `dispatch`.
 */
export class ProxyPipeline {
  private inflight = 0;
  private closing = false;
  private drained: (() => void) | null = null;

  constructor(private readonly d: ProxyDeps) {}

  /** A uWS route handler for one endpoint; `path` is its `/v1/...` form. */
  route(endpoint: Endpoint, path: string) {
    return (res: HttpResponse, req: HttpRequest) => {
      const ex = new Exchange(res, req, this.d.settings.maxBodyBytes, PROXY_HEADERS);
      this.inflight++;
      this.serve(ex, endpoint, path)
        .catch((err) => {
          this.d.log.error('proxy_request_failed', { path, ...errorFields(err) });
          // A response already ended must not be touched again (uWS forbids it).
          if (ex.finished) return;
          // Only a first request of an account or Owner reads the database on this path.
          if (isDatabaseUnavailable(err)) sendProxyError(ex, endpoint === 'messages', 503, "The gateway's database is unavailable; retry shortly", 'database_unavailable', { 'retry-after': '5' });
          else sendProxyError(ex, endpoint === 'messages', 500, 'Internal server error', 'internal_error');
        })
        .finally(() => {
          if (--this.inflight === 0 && this.drained) this.drained();
        });
    };
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

  private async serve(ex: Exchange, endpoint: Endpoint, path: string): Promise<void> {
    const d = this.d;
    const anthropic = endpoint === 'messages';
    const refuse = (status: number, message: string, code: string, headers?: Record<string, string>) => sendProxyError(ex, anthropic, status, message, code, headers);
    if (this.closing) return refuse(503, 'The gateway is shutting down; retry', 'shutting_down', { 'retry-after': '1' });

    const apiKey = credentialFrom(ex.headers);
    if (!apiKey) return refuse(401, 'Missing API key: send "Authorization: Bearer <key>" or "x-api-key"', 'missing_api_key');
    const row = d.accounts.peek(apiKey) ?? (await d.accounts.resolve(apiKey));
    if (!row) return refuse(401, 'Invalid API key', 'invalid_api_key');
    if (!row.status) return refuse(401, 'This account is disabled', 'account_disabled');
    if (row.suspended) return refuse(403, 'This account is suspended', 'account_suspended');

    let raw: Buffer;
    try {
      raw = await ex.body();
    } catch (err) {
      if (err instanceof BodyTooLargeError) return refuse(413, `Request body exceeds ${ex.maxBodyBytes} bytes`, 'body_too_large');
      throw err;
    }
    let doc: unknown;
    try {
      doc = JSON.parse(raw.toString('utf8'));
    } catch (err) {
      return refuse(400, `Malformed JSON body: ${(err as Error).message}`, 'invalid_json');
    }
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return refuse(400, 'body: must be a JSON object', 'invalid_request');
    const body = doc as Record<string, unknown>;
    const requested = body.model;
    if (typeof requested !== 'string' || requested === '' || requested.length > 200) return refuse(400, 'model: required, a model name', 'invalid_model');

    const owner = d.config.peekRouting(row.ownerId) ?? (await d.config.routing(row.ownerId));
    const profile = d.profiles.peek(row) ?? (await d.profiles.load(row));
    const ownerX = extras(owner);
    if (profile.ips !== ANY && !profile.ips.allows(ex.ip)) return refuse(403, `This account may not call from ${ex.ip} (AllowIPs)`, 'ip_not_allowed');
    if (!ownerX.resources.allows(path) || !profile.resources.allows(path)) return refuse(403, `This account may not use ${path} (Resources)`, 'resource_not_allowed');

    // The account's ModelMapper, its ancestors' nearest first, then the Owner's; one step only.
    let model: string | undefined;
    for (let i = 0; model === undefined && i < profile.modelMappers.length; i++) model = profile.modelMappers[i].match(requested);
    model ??= owner.modelMapper.match(requested) ?? requested;
    if (!profile.models.allows(model)) return refuse(403, `This account may not use model ${model} (AllowModels)`, 'model_not_allowed');
    const level = profile.levelMapper.match(model) ?? owner.levelMapper.match(model) ?? row.level;
    if (!profile.levels.allows(level)) return refuse(403, `This account may not use Level ${level} (AllowLevels)`, 'level_not_allowed');

    if (!profile.exempt) {
      const balance = d.balances.peek(row.id) ?? (await d.balances.load(row.id));
      if (balance < d.settings.userMinBalance) {
        return refuse(402, `Insufficient balance: ${balance.toFixed(4)} is below the minimum of ${d.settings.userMinBalance}`, 'insufficient_balance');
      }
    }

    const limit = profile.modelLimits.size ? profile.modelLimits.match(model) ?? ownerX.modelLimits.match(model) : ownerX.modelLimits.match(model);
    const checks = limit ? profile.checks.concat(modelChecks(row.id, model, limit)) : profile.checks;
    if (checks.length) {
      const now = Date.now();
      const refusal = d.limits.admit(checks, now);
      if (refusal) return refuse(429, refusalMessage(refusal), 'rate_limit_exceeded', refusalHeaders(refusal, now));
    }
    if (ex.aborted) return;

    const stream = body.stream === true && endpoint !== 'embeddings';
    const so = body.stream_options as { include_usage?: unknown } | undefined;
    const call: ProxyCall = {
      ex, endpoint, path, anthropic, stream, doc: body, raw, requestedModel: requested, model, level, row, profile, owner, checks,
      injectUsage: stream && endpoint === 'chat' && so?.include_usage !== true,
    };
    await dispatch(d, call);
  }
}
