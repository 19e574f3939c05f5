import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { needs, testRedisUrl } from '../requirements';

describe('with Redis', needs('redis'), () => {
  it.each([1, 2])('answers PING (%i)', async () => {
    const client = new Redis(testRedisUrl(), { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await client.connect();
      expect(await client.ping()).toBe('PONG');
    } finally {
      client.disconnect();
    }
  });
});

it('needs nothing', () => {
  expect(1 + 1).toBe(2);
});
