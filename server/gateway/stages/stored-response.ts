/**
 * A stored response's reads and deletion (GET /v1/responses/{id}, GET …/input_items, DELETE
 * /v1/responses/{id}), after authenticate and the caller's AllowIPs and Resources: free,
 * neither admitted nor billed. A response the gateway wrote through translation (`resp_gw_…`)
 * is answered from its own store; any other goes to the provider key that created it
 * (state/response-keys), with that key's credentials, and the provider's answer is relayed
 * (its errors scrubbed, as every relayed error is). Only the account whose call created a
 * response reads or deletes it: for any other, an ID never seen, or a key no longer enabled the
 * answer is OpenAI's 404, and no other key is asked.
 */
import type { ProxyCall, ProxySettings } from '../call';
import { refuse, type Refusal } from '../errors';
import type { StoredResponseAction } from '../routes';
import { isGatewayResponseId } from '../formats/gateway-items';
import { inputItemsOf, itemPage, listQuery } from '../formats/input-items';
import type { ProviderKinds } from '../providers/registry';
import { isSkip } from '../providers/types';
import { dropped } from '../dispatch/relay';
import { scrub, scrubHeaders, scrubText } from '../dispatch/scrub';
import { enabledKey } from './dispatch';
import { requestWhole } from '../../adapters/upstream-http/whole';
import { TIMEOUT_CODES } from '../../adapters/upstream-http/types';
import type { UpstreamClient } from '../../adapters/upstream-http/client';
import type { KeyPool, PooledKey } from '../../state/provider-keys/key-pool';
import type { ResponseKeys } from '../../state/response-keys/response-keys';
import type { StoredResponses } from '../../state/stored-responses/stored-responses';
import type { Logger } from '../../core/log';
import { errorFields } from '../../core/log';

export interface StoredResponseRequest {
  action: StoredResponseAction;
  /** The `{id}` of the path, as the client sent it. */
  responseId: string;
  /** The query string (input_items: limit, order, after). */
  query: string;
}

export interface StoredResponseDeps {
  responseKeys: Pick<ResponseKeys, 'creatorOf'>;
  storedResponses?: Pick<StoredResponses, 'read' | 'forget'>;
  pool: Pick<KeyPool, 'levelsOf' | 'keys'>;
  kinds: Pick<ProviderKinds, 'of'>;
  upstream: UpstreamClient;
  settings: Pick<ProxySettings, 'upstreamTimeoutMs' | 'streamIdleTimeoutMs'>;
  log: Pick<Logger, 'warn'>;
}

/** As OpenAI answers an ID it does not know in the caller's organization. */
const notFound = (id: string): Refusal => ({ status: 404, code: 'not_found', message: `No response found with id '${id}'.` });

const UNREADABLE: Refusal = {
  status: 503,
  code: 'stored_response_unavailable',
  message: 'The stored response cannot be read right now; retry shortly',
  headers: { 'retry-after': '1' },
};

const REPLAY_UNSUPPORTED: Refusal = {
  status: 400,
  code: 'unsupported_parameter',
  message: "A response the gateway kept cannot be streamed again: retrieve it without 'stream'",
};

/** Response IDs as providers make them: anything else is no response, and never reaches a path upstream. */
const RESPONSE_ID = /^[A-Za-z0-9_-]{1,200}$/;

/** The largest provider answer relayed (a response with its output, or a page of input items). */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

const JSON_HEAD = { 'content-type': 'application/json' };

/** Answers the call; never rejects for a store or an upstream that fails (a 503 or 502 instead). */
export async function answerStoredResponse(d: StoredResponseDeps, c: ProxyCall, r: StoredResponseRequest): Promise<void> {
  const id = r.responseId;
  if (!RESPONSE_ID.test(id)) return refuse(c, notFound(id.slice(0, 200)));
  if (isGatewayResponseId(id)) return answerKept(d, c, r);
  const creator = await d.responseKeys.creatorOf(c.row.ownerId, id);
  // A pair noted before accounts were kept is the Owner's, as it was.
  if (!creator || (creator.accountId !== null && creator.accountId !== c.row.id)) return refuse(c, notFound(id));
  const key = enabledKey(d.pool, c.row.ownerId, creator.keyId);
  if (!key) return refuse(c, notFound(id));
  return forward(d, c, r, key);
}

/** A response the gateway keeps: read, listed or deleted in its own store. */
async function answerKept(d: StoredResponseDeps, c: ProxyCall, r: StoredResponseRequest): Promise<void> {
  const store = d.storedResponses;
  const id = r.responseId;
  if (!store) return refuse(c, notFound(id));
  const who = { ownerId: c.row.ownerId, accountId: c.row.id };
  const query = r.action === 'input_items' ? listQuery(r.query) : null;
  if (query && 'invalid' in query) return refuse(c, { status: 400, code: 'invalid_value', message: query.invalid });
  if (r.action === 'retrieve' && new URLSearchParams(r.query).get('stream') === 'true') return refuse(c, REPLAY_UNSUPPORTED);
  try {
    if (r.action === 'delete') {
      if (!(await store.forget(who, id))) return refuse(c, notFound(id));
      return c.ex.send(200, JSON_HEAD, JSON.stringify({ id, object: 'response.deleted', deleted: true }));
    }
    const kept = await store.read(who, id);
    // Kept before the Response object was kept beside it: its continuation alone is served.
    if (!kept?.response) return refuse(c, notFound(id));
    const body = query ? itemPage(inputItemsOf(kept.items, kept.response), query) : kept.response;
    c.ex.send(200, JSON_HEAD, JSON.stringify(body));
  } catch (err) {
    d.log.warn('stored_response_unreadable', { request: c.id, owner: who.ownerId, ...errorFields(err) });
    refuse(c, UNREADABLE);
  }
}

/** The upstream path of the action: the key's Responses path, then the ID, with the key's own query and the client's (GET). */
function upstreamPath(base: string, r: StoredResponseRequest): string {
  const [path, own] = base.split('?', 2);
  const sub = `${path}/${r.responseId}${r.action === 'input_items' ? '/input_items' : ''}`;
  const query = [own, r.action === 'delete' ? '' : r.query].filter(Boolean).join('&');
  return query ? `${sub}?${query}` : sub;
}

/** A provider's response: the call goes to the key that created it, and its answer is relayed. */
async function forward(d: StoredResponseDeps, c: ProxyCall, r: StoredResponseRequest, key: PooledKey): Promise<void> {
  const kind = d.kinds.of(key);
  // Only a kind with the Responses API created it; one that has lost it (reconfigured) no longer knows it.
  const prepared = kind.serves(key, '').has('responses') ? await kind.prepare(key, { endpoint: 'responses', model: '', headers: c.ex.headers }) : null;
  if (!prepared || isSkip(prepared)) return refuse(c, notFound(r.responseId));
  c.servedBy = key;
  c.servedLevel = key.level;
  c.attempts = 1;
  const startedAt = (c.attemptAt = performance.now());
  try {
    const answer = await requestWhole(d.upstream, {
      origin: prepared.origin,
      path: upstreamPath(prepared.path, r),
      method: r.action === 'delete' ? 'DELETE' : 'GET',
      headers: prepared.headers,
      body: null,
      headersTimeout: d.settings.upstreamTimeoutMs,
      bodyTimeout: d.settings.streamIdleTimeoutMs,
    }, MAX_ANSWER_BYTES);
    c.upstreamMs += performance.now() - startedAt;
    c.attemptAt = 0;
    if (answer.status < 400) return c.ex.relay(answer.status, answer.headers, dropped, answer.body);
    const text = answer.body.toString('utf8');
    const clean = scrubText(text, key, prepared.headers);
    c.ex.relay(answer.status, scrubHeaders(answer.headers, key, prepared.headers), dropped, clean === text ? answer.body : Buffer.from(clean));
  } catch (err) {
    c.upstreamMs += performance.now() - startedAt;
    c.attemptAt = 0;
    const timeout = TIMEOUT_CODES.has((err as { code?: string }).code ?? '');
    d.log.warn('stored_response_upstream_failed', { request: c.id, owner: c.row.ownerId, key: key.id, cause: scrub((err as Error).message, key, 300, prepared.headers) });
    refuse(c, timeout
      ? { status: 504, code: 'upstream_timeout', message: `The upstream provider did not answer in time (request ${c.id})` }
      : { status: 502, code: 'upstream_error', message: `The upstream provider could not be reached (request ${c.id})` });
  }
}
