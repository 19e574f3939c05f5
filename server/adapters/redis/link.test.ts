import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log';
import { needs, testRedisUrl } from '../../testing/requirements';
import { connectRedis, describeRedisUrl, type RedisLink } from './link';

const REDIS = testRedisUrl();
const lines: string[] = [];
const log = createLogger((l) => lines.push(l), 'debug');
let links: RedisLink[] = [];

afterEach(async () => {
  await Promise.all(links.map((l) => l.close()));
  links = [];
});

const open = (prefix: string) => {
  const l = connectRedis(REDIS, { prefix, log });
  links.push(l);
  return l;
};

describe('RedisLink', () => {
  it('reports ready and carries pub/sub between two links under one prefix', needs('redis'), async () => {
    const prefix = `test:link:${process.pid}:${Date.now()}:`;
    const a = open(prefix);
    const b = open(prefix);
    expect(await a.ready(2_000)).toBe(true);
    expect(await a.ready(0)).toBe(true);
    const got = new Promise<string>((resolve) => void b.subscribe('events', resolve));
    await new Promise((r) => setTimeout(r, 100));
    a.publish('events', 'hello');
    expect(await got).toBe('hello');
  });

  it('ready(ms) answers false after ms when Redis cannot be reached', async () => {
    const away = connectRedis('redis://127.0.0.1:1/0', { prefix: 'test:away:', log });
    links.push(away);
    const started = Date.now();
    expect(await away.ready(200)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });

  it('never logs the password of the URL', () => {
    expect(describeRedisUrl('redis://user:s3cret@cache.internal:6380/2')).toBe('cache.internal:6380/2');
    expect(describeRedisUrl('not a url')).toBe('redis');
  });
});
