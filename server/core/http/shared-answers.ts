import type { AnyRouter } from '@trpc/server';
import type { Access, RequestContext } from '../../../contract/trpc';
import { FreshCache } from '../fresh-cache';
import type { Exchange } from './exchange';

/** A whole REST answer, as the transport sends it. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string | Uint8Array;
}

/** Which answers may be shared, and while what stays true. */
export interface Sharing {
  /** GET paths (as the contract names them) whose 200 answers one caller may be given again. */
  paths: readonly string[];
  /** Moves whenever the data behind those answers changes on this instance. */
  version: () => number;
  ttlMs?: number;
  /** Entries kept; an answer larger than `maxBytes` is never kept. */
  maxEntries?: number;
  maxBytes?: number;
}

/** Not a shareable answer (an error, or too large): given to the callers waiting on it, then forgotten. */
class Unshared extends Error {
  constructor(readonly answer: Answer) { super('unshared answer'); }
}

/**
 * The same caller asking the same GET URL within a second gets the same bytes: a console
 * polling a bill or a billing job's burst costs one computation, output check and
 * serialization per second instead of one per call (a 1,000-account bill is ~400 KB of JSON).
 * The freshness rule is the services' own (FreshCache: this instance's writes end an entry at
 * once, another instance's show within the TTL). Every call is still authorized as its route
 * says before anything kept is given; a call that is not (no key, a disabled account, no
 * manage permission) takes the normal path and gets its own error.
 */
export class SharedAnswers {
  private readonly access = new Map<string, Access>();
  private readonly answers: FreshCache<Answer>;
  private readonly maxBytes: number;

  constructor(router: AnyRouter, sharing: Sharing, private readonly makeContext: (ex: Exchange) => RequestContext) {
    for (const procedure of Object.values(router._def.procedures) as { _def: { meta?: { access?: Access; openapi?: { method: string; path: string } } } }[]) {
      const meta = procedure._def.meta;
      if (meta?.openapi?.method === 'GET' && sharing.paths.includes(meta.openapi.path)) this.access.set(meta.openapi.path, meta.access ?? 'account');
    }
    const unknown = sharing.paths.filter((p) => !this.access.has(p));
    if (unknown.length) throw new Error(`shared answers: not GET routes of the contract: ${unknown.join(', ')}`);
    this.answers = new FreshCache(sharing.version, sharing.ttlMs ?? 1000, sharing.maxEntries ?? 16);
    this.maxBytes = sharing.maxBytes ?? 2 * 1024 * 1024;
  }

  /** The answer for this call when its route shares answers and its caller is authorized; else undefined. */
  async answer(ex: Exchange, compute: () => Promise<Answer>): Promise<Answer | undefined> {
    if (ex.method !== 'GET' && ex.method !== 'HEAD') return undefined;
    const access = this.access.get(ex.path);
    if (!access) return undefined;
    const ctx = this.makeContext(ex);
    let caller: { id: number };
    try {
      caller = await ctx.services.auth.authorize(ctx, access);
    } catch {
      return undefined;
    }
    // The UTC day is in the key: a bill asked for by days moves at midnight.
    const key = `${caller.id} ${Math.floor(Date.now() / 86_400_000)} ${ex.url}`;
    try {
      return await this.answers.get(key, async () => {
        const a = await compute();
        const body = typeof a.body === 'string' ? Buffer.from(a.body) : a.body;
        if (a.status !== 200 || body.byteLength > this.maxBytes) throw new Unshared(a);
        return { ...a, body };
      });
    } catch (err) {
      if (err instanceof Unshared) return err.answer;
      throw err;
    }
  }
}
