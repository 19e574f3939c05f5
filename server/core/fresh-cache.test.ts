import { describe, expect, it } from 'vitest';
import { FreshCache } from './fresh-cache';

describe('FreshCache', () => {
  it('computes once for concurrent and repeated asks, again after the version moves or the TTL passes, and never keeps a failure', async () => {
    let version = 0;
    let computed = 0;
    const cache = new FreshCache<number>(() => version, 50);
    const compute = () => new Promise<number>((r) => setTimeout(() => r(++computed), 5));
    expect(await Promise.all([cache.get('a', compute), cache.get('a', compute), cache.get('a', compute)])).toEqual([1, 1, 1]);
    expect(await cache.get('a', compute)).toBe(1);
    expect(await cache.get('b', compute)).toBe(2);
    version++;
    expect(await cache.get('a', compute)).toBe(3);
    await new Promise((r) => setTimeout(r, 60));
    expect(await cache.get('a', compute)).toBe(4);
    await expect(cache.get('c', () => Promise.reject(new Error('database away')))).rejects.toThrow('database away');
    expect(await cache.get('c', compute)).toBe(5);
  });

  it('keeps at most `max` entries, dropping the oldest', async () => {
    let computed = 0;
    const cache = new FreshCache<number>(() => 0, 10_000, 2);
    const compute = async () => ++computed;
    await cache.get('a', compute);
    await cache.get('b', compute);
    await cache.get('c', compute);
    expect(await cache.get('b', compute)).toBe(2);
    expect(await cache.get('a', compute)).toBe(4);
  });
});
