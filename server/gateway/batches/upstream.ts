/**
 * A provider key's batch API: where it is and with which credentials, from the key's own kind
 * (the path its chat or Messages calls go to, with the batch path in their place), and the two
 * ways the gateway talks to it: a whole JSON answer (a batch object, a page) and a body streamed
 * as it arrives (an output file, a results file), paced by its reader so memory stays bounded.
 */
import type { UpstreamClient } from '../../adapters/upstream-http/client';
import { requestWhole, type WholeResponse } from '../../adapters/upstream-http/whole';
import type { ResponseController, ResponseHeaders } from '../../adapters/upstream-http/types';
import type { PooledKey } from '../../state/provider-keys/key-pool';
import type { ProviderKinds } from '../providers/registry';
import { isSkip } from '../providers/types';
import type { BatchApi } from './routes';

export interface BatchTarget {
  key: PooledKey;
  origin: string;
  /** The key's API root (`/v1`, or `/openai/v1` …): the batch paths follow it. */
  root: string;
  /** The key's own query (none for the kinds that serve batches). */
  query: string;
  headers: Record<string, string>;
}

/** The kinds whose keys run batches natively: OpenAI-compatible keys for OpenAI's, `anthropic` keys for Anthropic's. */
export const servesBatches = (kinds: Pick<ProviderKinds, 'of'>, key: PooledKey, api: BatchApi): boolean => {
  const type = kinds.of(key).type;
  return api === 'anthropic' ? type === 'anthropic' : type === 'standard';
};

/** The key's batch API, or null when its kind has none. */
export async function batchTarget(kinds: Pick<ProviderKinds, 'of'>, key: PooledKey, api: BatchApi, headers: Record<string, string>): Promise<BatchTarget | null> {
  if (!servesBatches(kinds, key, api)) return null;
  const kind = kinds.of(key);
  const suffix = api === 'anthropic' ? '/messages' : '/chat/completions';
  const p = await kind.prepare(key, { endpoint: api === 'anthropic' ? 'messages' : 'chat', model: '', headers });
  if (isSkip(p)) return null;
  const [path, query = ''] = p.path.split('?', 2);
  if (!path.endsWith(suffix)) return null;
  // A standard key on anthropic.com answers chat in OpenAI's format but has no OpenAI batches.
  if (api === 'openai' && p.format !== 'openai') return null;
  return { key, origin: p.origin, root: path.slice(0, -suffix.length), query, headers: p.headers };
}

const withQuery = (t: BatchTarget, sub: string, query = '') => {
  const q = [t.query, query].filter(Boolean).join('&');
  return q ? `${t.root}${sub}?${q}` : `${t.root}${sub}`;
};

export interface BatchCall {
  method: 'GET' | 'POST' | 'DELETE';
  /** Below the key's root: `/batches`, `/messages/batches/{id}` … */
  path: string;
  query?: string;
  body?: Buffer | null;
}

export interface UpstreamDeps {
  upstream: UpstreamClient;
  settings: { upstreamTimeoutMs: number; streamIdleTimeoutMs: number };
}

/** Largest whole answer read (a batch object, a page of them). */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

export function callWhole(d: UpstreamDeps, t: BatchTarget, call: BatchCall): Promise<WholeResponse> {
  return requestWhole(d.upstream, {
    origin: t.origin,
    path: withQuery(t, call.path, call.query),
    method: call.method,
    headers: t.headers,
    contentType: call.body ? 'application/json' : undefined,
    body: call.body ?? null,
    headersTimeout: d.settings.upstreamTimeoutMs,
    bodyTimeout: d.settings.streamIdleTimeoutMs,
  }, MAX_ANSWER_BYTES);
}

/** A streamed answer: its head, then its body piece by piece (the upstream is paused while a piece is handled). */
export interface StreamedAnswer {
  status: number;
  headers: ResponseHeaders;
  body: AsyncIterable<Buffer>;
  /** Gives up the rest (the connection is closed). */
  abort(): void;
}

/** A GET whose body is read as it arrives; rejects when no head comes. */
export function callStreamed(d: UpstreamDeps, t: BatchTarget, path: string): Promise<StreamedAnswer> {
  return new Promise((resolve, reject) => {
    const queue: Buffer[] = [];
    let ended = false;
    let failure: Error | null = null;
    let wake: (() => void) | null = null;
    let ctl: ResponseController | null = null;
    let started = false;
    const notify = () => {
      const w = wake;
      wake = null;
      w?.();
    };
    async function* body(): AsyncGenerator<Buffer> {
      for (;;) {
        if (queue.length > 0) {
          const chunk = queue.shift()!;
          if (queue.length === 0 && !ended) ctl?.resume();
          yield chunk;
          continue;
        }
        if (failure) throw failure;
        if (ended) return;
        await new Promise<void>((r) => (wake = r));
      }
    }
    d.upstream.dispatch({
      origin: t.origin, path: withQuery(t, path), method: 'GET', headers: t.headers, body: null,
      headersTimeout: d.settings.upstreamTimeoutMs, bodyTimeout: d.settings.streamIdleTimeoutMs,
    }, {
      onRequestStart(c) { ctl = c; },
      onResponseStart(c, status, headers) {
        started = true;
        resolve({ status, headers, body: body(), abort: () => c.abort(new Error('the reader gave up the answer')) });
      },
      onResponseData(c, chunk) {
        queue.push(chunk);
        // One piece waits to be read at most: memory stays bounded whatever the file's size.
        c.pause();
        notify();
      },
      onResponseEnd() {
        ended = true;
        notify();
      },
      onResponseError(_c, err) {
        failure = err;
        if (!started) reject(err);
        notify();
      },
    });
  });
}

/** A streamed body's lines (LF-separated, the last without one too), without holding more than a line and a piece. */
export async function* linesOf(body: AsyncIterable<Buffer>): AsyncGenerator<string> {
  let rest = '';
  const decoder = new TextDecoder('utf-8');
  for await (const chunk of body) {
    rest += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = rest.indexOf('\n')) >= 0) {
      const line = rest.slice(0, nl).trim();
      rest = rest.slice(nl + 1);
      if (line) yield line;
    }
  }
  rest += decoder.decode();
  if (rest.trim()) yield rest.trim();
}
