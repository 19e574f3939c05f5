/**
 * Real calls through the gateway and the mock upstream reach /dashboard/latency and the request
 * log under the kind of the provider key that served them (the key's provider_type, carried on
 * the usage event and kept in its record).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hello, nextLevel, secret, startProxyFixture, type ProxyFixture } from '../../gateway/test-fixture';
import { kindKey } from '../../testing/key-kinds';

let f: ProxyFixture;
beforeAll(async () => { f = await startProxyFixture(); });
afterAll(async () => { await f?.close(); });

describe('latency of real calls', () => {
  it('counts each call under its model and the kind of the key that served it', async () => {
    const level = nextLevel();
    const up = secret('latency-anthropic');
    const key = kindKey('anthropic', f.mock, up, 'latency-anthropic');
    await f.addKey(level, up, { config: key.config, provider: key.provider });
    const user = await f.account({ level });
    const client = f.openai(user.key);
    await client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: hello });
    const stream = await client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: hello, stream: true });
    for await (const _ of stream) { /* drained */ }
    await f.gw.gateway.usage.flush();
    const r = await f.gw.as(user.key).get('/dashboard/latency');
    expect(r.status, r.text).toBe(200);
    expect(r.body.by_key_kind.map((k: any) => [k.key_kind, k.requests])).toEqual([['anthropic', 2]]);
    expect(r.body.by_model).toEqual([expect.objectContaining({ model: 'claude-sonnet-4-5', requests: 2 })]);
    const [m] = r.body.by_model;
    expect(m.duration_ms.p50).toBeGreaterThanOrEqual(0);
    // The streamed call had its head out before its end.
    expect(m.first_byte_requests).toBeGreaterThanOrEqual(1);
    expect(m.first_byte_ms.p50).toBeLessThanOrEqual(m.duration_ms.p99);
    // Each record keeps the kind too: the request log shows it per call.
    const log = await f.gw.as(user.key).get('/dashboard/requests');
    expect(log.body.data.map((x: any) => x.key_kind)).toEqual(['anthropic', 'anthropic']);
  });
});
