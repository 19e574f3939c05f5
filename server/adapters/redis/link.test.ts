import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log';
import { connectRedis, describeRedisUrl, type RedisLink } from './link';

const REDIS = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';
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
  it('reports ready and carries pub/sub between two links under one prefix', async () => {
    const prefix = `test:link:${process.pid}:${Date.now()}:`;
    const a = open(prefix);
    const b = open(prefix);
    await new Promise<void>((resolve) => (a.up ? resolve() : a.onStatus((up) => up && resolve())));
    const got = new Promise<string>((resolve) => void b.subscribe('events', resolve));
    await new Promise((r) => setTimeout(r, 100));
    a.publish('events', 'hello');
    expect(await got).toBe('hello');
  });

  it('never logs the password of the URL', () => {
    expect(describeRedisUrl('redis://user:s3cret@cache.internal:6380/2')).toBe('cache.internal:6380/2');
    expect(describeRedisUrl('not a url')).toBe('redis');
  });
});
