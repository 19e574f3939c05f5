import { createHash } from 'node:crypto';
import { Command, type Redis } from 'ioredis';

/** A Lua script sent by its SHA, its source only when Redis has not seen it yet. */
export class Script {
  readonly sha: string;
  /**
   * The connections (ioredis opens a new socket on every reconnect) this script's source has been
   * sent on. A NOSCRIPT answer runs nothing, but its EVAL retry goes out after whatever was sent
   * meanwhile: an invalidation retried that way would land behind the admission it must precede.
   * So the first use on each connection is an EVAL (Redis caches the script as it runs it, and
   * serves one connection's commands in order), and EVALSHA only follows it.
   */
  private readonly sentOn = new WeakSet<object>();

  constructor(readonly lua: string) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  /**
   * Written at once rather than auto-pipelined: the store batches its own calls, the wire order
   * is the call order, and an admission never waits behind a pipeline already in flight (ioredis
   * sends one auto-pipeline at a time, which cost a round trip at concurrency 1).
   */
  async run(client: Redis, keys: string[], args: (string | number | string[])[]): Promise<unknown> {
    const connection = client.stream as object | undefined;
    if (connection && !this.sentOn.has(connection)) {
      this.sentOn.add(connection);
      return this.evalSource(client, keys, args);
    }
    // Command flattens one level: the batch passes its argument arrays whole, uncopied.
    try {
      return await client.sendCommand(new Command('evalsha', [this.sha, keys.length, keys, ...args], { replyEncoding: 'utf8' }));
    } catch (err) {
      // Only a SCRIPT FLUSH behind our back gets here now.
      if (!(err instanceof Error) || !err.message.includes('NOSCRIPT')) throw err;
      return this.evalSource(client, keys, args);
    }
  }

  private evalSource(client: Redis, keys: string[], args: (string | number | string[])[]): Promise<unknown> {
    return client.sendCommand(new Command('eval', [this.lua, keys.length, keys, ...args], { replyEncoding: 'utf8' })) as Promise<unknown>;
  }
}
