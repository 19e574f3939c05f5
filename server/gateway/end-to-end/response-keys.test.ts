/**
 * Calls that stay on their key: a Responses call continuing a stored response
 * (`previous_response_id`) reaches the provider key that created it — over several keys of a
 * Level, and across instances sharing the pairs through Redis or the database. The mock, as
 * OpenAI does, knows a response only on the key that created it and refuses it elsewhere.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drain, secret, startInstancePair, startProxyFixture, type InstancePair, type ProxyFixture } from '../test-fixture';
import { insertAccount } from '../../testing/accounts';
import { needs } from '../../testing/requirements';
import { until } from '../../testing/until';
import OpenAI from 'openai';

const MODEL = 'gpt-4o-mini';

describe('previous_response_id on one instance', () => {
  let f: ProxyFixture;
  beforeAll(async () => { f = await startProxyFixture(); });
  afterAll(async () => { await f?.close(); });

  it('reaches the key that created the response, over three keys, whole and streamed, or fails clearly when that key is gone', async () => {
    const keys = [secret('pin-a'), secret('pin-b'), secret('pin-c')];
    const ids: number[] = [];
    for (const k of keys) ids.push(await f.addKey(301, k));
    const user = await f.account({ level: 301 });
    const client = f.openai(user.key);
    for (let conversation = 0; conversation < 3; conversation++) {
      const first = await client.responses.create({ model: MODEL, input: 'Start' });
      const owner = f.mock.requests.at(-1)!.credential;
      let previous = first.id;
      for (let turn = 0; turn < 4; turn++) {
        const streamed = turn % 2 === 1;
        if (streamed) {
          const { items, error } = await drain(await client.responses.create({ model: MODEL, input: `Turn ${turn}`, previous_response_id: previous, stream: true }));
          expect(error).toBeUndefined();
          previous = (items.at(-1) as any).response.id;
        } else previous = (await client.responses.create({ model: MODEL, input: `Turn ${turn}`, previous_response_id: previous })).id;
        expect(f.mock.requests.at(-1)!.credential).toBe(owner);
      }
    }
    // Round robin still spreads the conversations' first calls.
    expect(new Set(f.mock.requests.filter((r) => !(r.body as any).previous_response_id).map((r) => r.credential)).size).toBe(3);
    expect((await f.usage(user.id)).every((r) => r.status === 'ok')).toBe(true);

    const start = await client.responses.create({ model: MODEL, input: 'Again' });
    const creator = ids[keys.indexOf(f.mock.requests.at(-1)!.credential!)];
    expect((await f.gw.root.delete(`/x-keys/${creator}`)).status).toBe(200);
    const n = f.mock.requests.length;
    const err: any = await client.responses.create({ model: MODEL, input: 'More', previous_response_id: start.id }).catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({ code: 'previous_response_unavailable', message: expect.stringContaining(start.id) });
    expect(f.mock.requests.length).toBe(n);
    // A response no key is known for is routed as any call; the provider answers for it.
    const unknown: any = await client.responses.create({ model: MODEL, input: 'x', previous_response_id: 'resp_never_made' }).catch((e) => e);
    expect(unknown.status).toBe(400);
    expect(unknown.error.code).toBe('previous_response_not_found');
  });
});

/** Two gateways on one PostgreSQL database: with Redis, or with the database alone, sharing the pairs. */
for (const shared of ['Redis', 'the database'] as const) {
  describe.runIf(process.env.TEST_DATABASE_URL)(`previous_response_id across two instances sharing ${shared}`, shared === 'Redis' ? needs('redis') : {}, () => {
    let pair: InstancePair;
    beforeAll(async () => { pair = await startInstancePair('response-keys', shared === 'Redis'); });
    afterAll(async () => { await pair?.close(); });

    it('sends each continuation to the creating key, whichever instance serves it', async () => {
      const { gws, mock } = pair;
      const keys = [secret('multi-a'), secret('multi-b'), secret('multi-c')];
      for (const k of keys) {
        const r = await gws[0].root.post('/x-keys', { Level: 302, Provider: mock.url, SecretKey: k, Status: true });
        expect(r.status).toBe(201);
      }
      const user = await insertAccount(gws[0], { credit: 50, level: 302 });
      const clients = gws.map((g) => new OpenAI({ apiKey: user.key, baseURL: `${g.url}/v1`, maxRetries: 0 }));
      // The second instance hears of the keys through the change feed.
      await until(async () => (await clients[1].responses.create({ model: MODEL, input: 'ready?' }).then(() => true, () => false)));
      for (let conversation = 0; conversation < 3; conversation++) {
        let previous = (await clients[0].responses.create({ model: MODEL, input: 'Start' })).id;
        const owner = mock.requests.at(-1)!.credential;
        for (let turn = 0; turn < 4; turn++) {
          // Alternate instances: the one that did not see the response must look the pair up.
          const r = await clients[(turn + 1) % 2].responses.create({ model: MODEL, input: `Turn ${turn}`, previous_response_id: previous });
          expect(mock.requests.at(-1)!.credential).toBe(owner);
          previous = r.id;
        }
      }
    });
  });
}
