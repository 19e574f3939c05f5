import { Pool } from 'undici';
import type { AdminRequest } from './requests';
import type { Answer } from './judge';

const RETRYABLE = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE', 'UND_ERR_CLOSED']);

/** Thrown when undici itself will not send a request: a fuzzer bug, not a server finding. */
export class UnsendableRequest extends Error {}

/**
 * Keep-alive connections to the gateway. A request that meets a connection the server
 * closed a moment before (after an earlier answer) is sent once more on a fresh one; a
 * server that drops the request itself drops it again, and that is reported.
 */
export function adminClient(url: string, connections: number) {
  const pool = new Pool(url, { connections, pipelining: 1, headersTimeout: 20_000, bodyTimeout: 20_000, keepAliveTimeout: 4_000 });
  return {
    async send(r: AdminRequest): Promise<Answer | { error: string }> {
      for (let attempt = 0; ; attempt++) {
        const t0 = Date.now();
        try {
          const res = await pool.request({ method: r.method as any, path: r.path, headers: r.headers, body: r.body });
          const text = await res.body.text();
          return { status: res.statusCode, text };
        } catch (err) {
          const e = err as NodeJS.ErrnoException & { code?: string };
          if (e.code === 'UND_ERR_INVALID_ARG' || e.name === 'InvalidArgumentError') throw new UnsendableRequest(`#${r.index} ${r.method} ${r.path.slice(0, 100)}: ${e.message}`);
          // A stale kept connection fails at once; a server that dropped this request took its time.
          if (attempt === 0 && Date.now() - t0 < 1000 && RETRYABLE.has(e.code ?? '')) continue;
          return { error: `${e.code ?? e.name}: ${e.message}` };
        }
      }
    },
    close: () => pool.close(),
  };
}
