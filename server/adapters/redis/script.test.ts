import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { needs, testRedisUrl } from '../../testing/requirements';
import { Script } from './script';

const REDIS = testRedisUrl();
const client = new Redis(REDIS, { lazyConnect: true, maxRetriesPerRequest: 1 });
const key = `test:script:${randomUUID()}`;
afterAll(async () => {
  await client.del(key);
  client.disconnect();
});

describe('Script', needs('redis'), () => {
  it('keeps the call order on a script this Redis has never seen: a command sent after it sees its write', async () => {
    await client.connect();
    // A fresh source (hence SHA) Redis cannot have cached, without flushing the scripts of others.
    const script = new Script(`-- ${randomUUID()}\nredis.call('SET', KEYS[1], ARGV[1])\nreturn ARGV[1]`);
    const first = script.run(client, [key], ['one']);
    const seen = client.get(key);
    expect(await first).toBe('one');
    expect(await seen).toBe('one');
    // Known now: sent by its SHA, still in order.
    const second = script.run(client, [key], ['two']);
    expect(await client.get(key)).toBe('two');
    expect(await second).toBe('two');
    expect(await client.script('EXISTS', script.sha)).toEqual([1]);
  });
});
