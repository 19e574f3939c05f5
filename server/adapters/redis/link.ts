import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '../../core/log';

/**
 * The one Redis connection pair an instance holds when REDIS_URL is set: `client` for commands
 * (auto-pipelined, so the many small scripts of concurrent requests share round trips) and a
 * lazily opened subscriber for pub/sub. Both reconnect by themselves; `up` says whether commands
 * can be answered now, and listeners hear every change of it, so stores can switch to their
 * documented degraded mode and back without a restart.
 */
export interface RedisLink {
  readonly client: Redis;
  /** Prepended to every key and channel (REDIS_PREFIX), so several deployments can share a Redis. */
  readonly prefix: string;
  readonly up: boolean;
  /** Called with true when the connection (re)becomes ready, false when it is lost. */
  onStatus(listener: (up: boolean) => void): () => void;
  /** Resolves true once commands can be sent (at once if they can), false after `ms` without. */
  ready(ms: number): Promise<boolean>;
  /** Messages on `channel` (prefixed here); resubscribed after a reconnect. */
  subscribe(channel: string, listener: (message: string) => void): Promise<void>;
  publish(channel: string, message: string): void;
  close(): Promise<void>;
}

export interface RedisLinkOptions {
  prefix: string;
  log: Logger;
  /** How long a command waits for a connection that is away before failing (ms). */
  offlineTimeoutMs?: number;
}

/** Redis URLs carry a password; logs get the host and port only. */
export function describeRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '6379'}${u.pathname && u.pathname !== '/' ? u.pathname : ''}`;
  } catch {
    return 'redis';
  }
}

export function connectRedis(url: string, opts: RedisLinkOptions): RedisLink {
  const where = describeRedisUrl(url);
  const options: RedisOptions = {
    lazyConnect: false,
    enableAutoPipelining: true,
    // A request must not wait long on a Redis that is away: it fails fast and the caller
    // applies its degraded mode instead of queueing commands for minutes.
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    connectTimeout: 2_000,
    commandTimeout: opts.offlineTimeoutMs ?? 1_000,
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), 2_000),
  };
  const client = new Redis(url, options);
  let subscriber: Redis | undefined;
  const channels = new Map<string, Set<(message: string) => void>>();
  const listeners = new Set<(up: boolean) => void>();
  let up = false;
  let closing = false;

  const setUp = (value: boolean, reason?: string) => {
    if (value === up) return;
    up = value;
    if (value) opts.log.info('redis_up', { redis: where });
    else if (!closing) opts.log.warn('redis_down', { redis: where, reason });
    for (const l of listeners) l(value);
  };
  client.on('ready', () => setUp(true));
  client.on('close', () => setUp(false, 'connection closed'));
  client.on('end', () => setUp(false, 'connection ended'));
  // ioredis emits 'error' for every failed reconnect; the status line above is enough.
  client.on('error', (err) => opts.log.debug('redis_error', { redis: where, error: err.message }));

  const openSubscriber = () => {
    const s = client.duplicate({ enableAutoPipelining: false, commandTimeout: undefined, maxRetriesPerRequest: null });
    s.on('error', (err) => opts.log.debug('redis_error', { redis: where, error: err.message, connection: 'subscriber' }));
    s.on('messageBuffer', () => undefined);
    s.on('message', (channel: string, message: string) => {
      const set = channels.get(channel);
      if (set) for (const l of set) l(message);
    });
    return s;
  };

  return {
    client,
    prefix: opts.prefix,
    get up() { return up; },
    onStatus(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    ready(ms) {
      if (up) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => { listeners.delete(listener); resolve(false); }, ms);
        timer.unref();
        const listener = (value: boolean) => {
          if (!value) return;
          clearTimeout(timer);
          listeners.delete(listener);
          resolve(true);
        };
        listeners.add(listener);
      });
    },
    async subscribe(channel, listener) {
      const name = opts.prefix + channel;
      subscriber ??= openSubscriber();
      let set = channels.get(name);
      if (!set) {
        channels.set(name, (set = new Set()));
        // ioredis re-issues SUBSCRIBE for every channel after a reconnect (autoResubscribe).
        await subscriber.subscribe(name);
      }
      set.add(listener);
    },
    publish(channel, message) {
      client.publish(opts.prefix + channel, message).catch((err: Error) => opts.log.debug('redis_publish_failed', { channel, error: err.message }));
    },
    async close() {
      closing = true;
      await Promise.allSettled([client.quit(), subscriber?.quit()]);
      client.disconnect();
      subscriber?.disconnect();
    },
  };
}
