import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'vitest';
import type { Settings } from '../../core/settings';
import { startProxyFixture, type ProxyFixture } from '../test-fixture';

export { drain } from '../test-fixture';

/**
 * Test-only: the fault suite's gateway in front of the mock upstream, with timeouts scaled down
 * so each scenario takes a second or two (each test name says what its figures stand for), and
 * every response body the proxy sent recorded, to prove none names an upstream.
 */
export const FAULT_SETTINGS: Partial<Settings> = {
  upstreamTimeoutMs: 1500,
  upstreamConnectTimeoutMs: 500,
  streamFirstByteTimeoutMs: 400,
  streamIdleTimeoutMs: 600,
  failoverBudgetMs: 2000,
  keyFailureThreshold: 2,
  keyOpenMs: 400,
  keyOpenMaxMs: 1600,
  keySleepMs: 600,
  maxAttemptsPerLevel: 10,
};

export interface RecordedBody {
  status: number;
  path: string;
  text: string;
}

export interface Faults {
  f: ProxyFixture;
  /** Every response body (whole or streamed, complete or cut) the proxy sent to this suite. */
  bodies: RecordedBody[];
  /** Upstream origins and secrets used by this suite: none may appear in a body. */
  needles: Set<string>;
  openai(key: string, timeoutMs?: number): OpenAI;
  anthropic(key: string): Anthropic;
  /** A plain POST to the proxy, recorded like the SDKs' calls. */
  post(key: string, path: string, body: unknown): Promise<{ status: number; text: string; json: any; headers: Headers }>;
  /** Adds an enabled key at `level` whose SecretKey is `secret` on `provider` (the mock by default). */
  addKey(level: number, secret: string, provider?: string): Promise<number>;
  /** `/x-conf` KeyHealth entries of these keys. */
  health(ids: number[]): Promise<any[]>;
  /** Upstream requests made with this credential since the mock's request number `from`. */
  callsWith(secret: string, from?: number): number;
  /** Log lines (parsed) with this event name. */
  logged(event: string): any[];
  /** Waits until every recorded body has been read to its end. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/** Reads a copy of the body to its end, keeping what came before a cut. */
async function collect(res: Response): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
    }
  } catch {
    // A cut stream: what arrived is what the client saw.
  }
  return Buffer.concat(parts).toString('utf8');
}

export async function startFaults(overrides: Partial<Settings> = {}): Promise<Faults> {
  const f = await startProxyFixture({ ...FAULT_SETTINGS, ...overrides });
  const bodies: RecordedBody[] = [];
  const reading = new Set<Promise<void>>();
  const needles = new Set<string>([f.mock.url, new URL(f.mock.url).host]);
  const recording: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    const path = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url).pathname;
    const p = collect(res.clone()).then((text) => { bodies.push({ status: res.status, path, text }); });
    reading.add(p);
    void p.finally(() => reading.delete(p));
    return res;
  };
  return {
    f,
    bodies,
    needles,
    openai: (key, timeoutMs) => new OpenAI({ apiKey: key, baseURL: `${f.gw.url}/v1`, maxRetries: 0, fetch: recording, ...(timeoutMs ? { timeout: timeoutMs } : {}) }),
    anthropic: (key) => new Anthropic({ apiKey: key, baseURL: f.gw.url, maxRetries: 0, fetch: recording }),
    async post(key, path, body) {
      const res = await recording(`${f.gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const text = await res.text();
      let json: any = null;
      try { json = JSON.parse(text); } catch { /* an event stream */ }
      return { status: res.status, text, json, headers: res.headers };
    },
    async addKey(level, secret, provider) {
      needles.add(secret);
      if (provider) {
        needles.add(provider);
        needles.add(new URL(provider).host);
      }
      return f.addKey(level, secret, provider ? { provider } : {});
    },
    async health(ids) {
      const r = await f.gw.root.get('/x-conf');
      expect(r.status).toBe(200);
      return (r.body.KeyHealth as any[]).filter((h) => ids.includes(h.ID));
    },
    callsWith(secret, from = 0) {
      return f.mock.requests.slice(from).filter((r) => r.credential === secret).length;
    },
    logged(event) {
      return f.gw.logs.map((l) => JSON.parse(l)).filter((l) => l.event === event);
    },
    async settled() {
      while (reading.size) await Promise.allSettled([...reading]);
    },
    close: () => f.close(),
  };
}

/** Text that would tell a client about the Owner's upstream or a failure's internals. */
const INTERNALS = [/ECONN\w+/, /ENOTFOUND|EAI_AGAIN|getaddrinfo/, /UPSTREAM_[A-Z_]+/, /\n\s+at\s+\S+\s*\(/, /sk-up-/];

/**
 * Every body the suite received, checked for the upstreams' hosts, URLs, addresses and
 * SecretKeys and for internal error text; answers what it found (empty when clean).
 */
export function leaks(bodies: RecordedBody[], needles: Iterable<string>): string[] {
  const found: string[] = [];
  for (const b of bodies) {
    for (const n of needles) if (n && b.text.includes(n)) found.push(`${b.status} ${b.path}: contains ${n}`);
    for (const re of INTERNALS) if (re.test(b.text)) found.push(`${b.status} ${b.path}: matches ${re}`);
  }
  return found;
}

export const hello = [{ role: 'user' as const, content: 'Say hello through the gateway' }];
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


/** Milliseconds `fn` took, with its result. */
export async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const v = await fn();
  return [v, performance.now() - t0];
}
