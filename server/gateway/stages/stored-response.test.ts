import { describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log';
import type { UpstreamClient } from '../../adapters/upstream-http/client';
import type { UpstreamRequest } from '../../adapters/upstream-http/types';
import { UpstreamHttpError } from '../../adapters/upstream-http/types';
import type { PooledKey } from '../../state/provider-keys/key-pool';
import type { ResponseCreator } from '../../state/response-keys/response-keys';
import type { KeptResponse, StoredResponses } from '../../state/stored-responses/stored-responses';
import { createProviderKinds } from '../providers/registry';
import { answerStoredResponse, type StoredResponseDeps, type StoredResponseRequest } from './stored-response';
import { accountRow, callFor } from './test-support';

const SECRET = 'sk-stage-secret-0123456789abcdef';
const key: PooledKey = { id: 5, ownerId: 1, name: 'k', level: 3, provider: 'https://api.example.test/base', secret: SECRET, config: {} };
const GW = `resp_gw_${'b'.repeat(48)}`;
const response = { id: GW, object: 'response', status: 'completed', output: [{ type: 'message', id: 'msg_1', role: 'assistant', content: [{ type: 'output_text', text: 'Hi.' }] }] };
const kept: KeptResponse = { items: [{ role: 'user', content: 'Start' }, ...response.output], response };

type Answer = { status: number; headers?: Record<string, string>; body: string } | Error;

/** An upstream client that answers every request with `answer`, recording what it was sent. */
function upstream(answer: Answer) {
  const sent: UpstreamRequest[] = [];
  const client = {
    dispatch(req: UpstreamRequest, h: Parameters<UpstreamClient['dispatch']>[1]) {
      sent.push(req);
      const ctl = { pause() {}, resume() {}, abort() {} };
      h.onRequestStart(ctl);
      if (answer instanceof Error) return h.onResponseError(ctl, answer);
      h.onResponseStart(ctl, answer.status, { 'content-type': 'application/json', ...answer.headers });
      h.onResponseData(ctl, Buffer.from(answer.body));
      h.onResponseEnd(ctl);
    },
  } as unknown as UpstreamClient;
  return { client, sent };
}

function deps(opts: { creator?: ResponseCreator | null; store?: Partial<Pick<StoredResponses, 'read' | 'forget'>>; answer?: Answer; keys?: PooledKey[] } = {}) {
  const up = upstream(opts.answer ?? { status: 200, body: '{"id":"resp_1","object":"response"}' });
  const keys = opts.keys ?? [key];
  const d: StoredResponseDeps = {
    responseKeys: { creatorOf: () => (opts.creator === undefined ? { keyId: 5, accountId: 42 } : opts.creator) },
    storedResponses: { read: async () => kept, forget: async () => true, ...opts.store },
    pool: { levelsOf: () => [3], keys: () => keys },
    kinds: createProviderKinds({ client: up.client, azureApiVersion: '2024-10-21', tokenTimeoutMs: 1000 }),
    upstream: up.client,
    settings: { upstreamTimeoutMs: 1000, streamIdleTimeoutMs: 1000 },
    log: createLogger(() => {}, 'error'),
  };
  return { d, sent: up.sent };
}

async function answer(d: StoredResponseDeps, r: Partial<StoredResponseRequest> & { responseId: string }, accountId = 42) {
  const c = callFor({ endpoint: 'responses', path: '/v1/responses/{id}', row: accountRow({ id: accountId, ownerId: 1 }) });
  await answerStoredResponse(d, c, { action: 'retrieve', query: '', ...r });
  const [sent] = c.ex.sent;
  return { status: sent.status, body: JSON.parse(sent.body), headers: sent.headers };
}

describe('a stored response the gateway keeps', () => {
  it('is read, listed and deleted from the store', async () => {
    const { d } = deps();
    expect(await answer(d, { responseId: GW })).toMatchObject({ status: 200, body: response });
    const page = await answer(d, { responseId: GW, action: 'input_items', query: 'order=asc' });
    expect(page.body).toMatchObject({ object: 'list', first_id: 'item_gw_0', last_id: 'item_gw_0', has_more: false });
    expect(await answer(d, { responseId: GW, action: 'delete' })).toMatchObject({ status: 200, body: { id: GW, object: 'response.deleted', deleted: true } });
  });

  it('is 404 when not kept for this account (or kept before its Response object was), 400 for a bad query or a replay, 503 when the store fails', async () => {
    const gone = deps({ store: { read: async () => null, forget: async () => false } }).d;
    for (const action of ['retrieve', 'input_items', 'delete'] as const) {
      expect(await answer(gone, { responseId: GW, action })).toMatchObject({ status: 404, body: { error: { code: 'not_found', message: `No response found with id '${GW}'.` } } });
    }
    expect((await answer(deps({ store: { read: async () => ({ items: kept.items, response: null }) } }).d, { responseId: GW })).status).toBe(404);
    const { d } = deps();
    expect((await answer(d, { responseId: GW, action: 'input_items', query: 'limit=500' })).body.error.code).toBe('invalid_value');
    expect((await answer(d, { responseId: GW, query: 'stream=true' })).body.error.code).toBe('unsupported_parameter');
    const down = deps({ store: { read: async () => { throw new Error('down'); } } }).d;
    expect(await answer(down, { responseId: GW })).toMatchObject({ status: 503, body: { error: { code: 'stored_response_unavailable' } } });
  });
});

describe('a provider\'s stored response', () => {
  it('goes to the key that created it, with its credentials and the client\'s query, and its answer is relayed', async () => {
    const { d, sent } = deps();
    expect(await answer(d, { responseId: 'resp_1' })).toMatchObject({ status: 200, body: { id: 'resp_1' } });
    await answer(d, { responseId: 'resp_1', action: 'input_items', query: 'limit=2&after=msg_1' });
    await answer(d, { responseId: 'resp_1', action: 'delete', query: 'ignored=1' });
    expect(sent.map((r) => [r.method, r.origin, r.path, r.headers.authorization])).toEqual([
      ['GET', 'https://api.example.test', '/base/v1/responses/resp_1', `Bearer ${SECRET}`],
      ['GET', 'https://api.example.test', '/base/v1/responses/resp_1/input_items?limit=2&after=msg_1', `Bearer ${SECRET}`],
      ['DELETE', 'https://api.example.test', '/base/v1/responses/resp_1', `Bearer ${SECRET}`],
    ]);
    // A pair noted before accounts were is the Owner's, as it was.
    expect((await answer(deps({ creator: { keyId: 5, accountId: null } }).d, { responseId: 'resp_1' }, 77)).status).toBe(200);
  });

  it('is 404, asking no key, for another account, an unknown ID, a key no longer enabled or without the Responses API, or an ID no provider makes', async () => {
    const cases = [
      { d: deps({ creator: { keyId: 5, accountId: 43 } }), id: 'resp_1' },
      { d: deps({ creator: null }), id: 'resp_1' },
      { d: deps({ keys: [] }), id: 'resp_1' },
      { d: deps({ keys: [{ ...key, config: { responses: false } }] }), id: 'resp_1' },
      { d: deps(), id: 'resp_1/../../admin' },
    ];
    for (const { d, id } of cases) {
      expect(await answer(d.d, { responseId: id }), id).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
      expect(d.sent).toEqual([]);
    }
  });

  it('relays an upstream error scrubbed; an unreachable or silent upstream is 502 or 504', async () => {
    const echo = `No such response: you sent Bearer ${SECRET} to https://api.example.test/base`;
    const refused = await answer(deps({ answer: { status: 404, headers: { 'x-echo': SECRET }, body: JSON.stringify({ error: { message: echo } }) } }).d, { responseId: 'resp_1' });
    expect(refused.status).toBe(404);
    expect(JSON.stringify(refused)).not.toContain(SECRET);
    expect(JSON.stringify(refused)).not.toContain('api.example.test');
    expect(refused.headers['x-echo']).toBe('[key]');
    expect((await answer(deps({ answer: new UpstreamHttpError('UPSTREAM_SOCKET', 'connect ECONNREFUSED api.example.test') }).d, { responseId: 'resp_1' })).body.error.code).toBe('upstream_error');
    expect((await answer(deps({ answer: new UpstreamHttpError('UPSTREAM_HEADERS_TIMEOUT', 'no head') }).d, { responseId: 'resp_1' })).status).toBe(504);
  });
});
