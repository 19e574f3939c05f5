import { describe, expect, it } from 'vitest';
import { createLogger } from '../core/log';
import type { ProxyDeps } from './call';
import { ProxyPipeline } from './pipeline';
import { fakeExchange, type FakeExchange } from './stages/test-support';
import type { Endpoint } from './providers/types';

/** A pipeline whose account cache fails as `resolve` says: the first stage that reads the database. */
function pipeline(resolve: () => Promise<never>) {
  const logs: string[] = [];
  const d = {
    settings: { shutdownGraceMs: 30_000 },
    log: createLogger((l) => logs.push(l), 'debug'),
    accounts: { peek: () => undefined, resolve },
  } as unknown as ProxyDeps;
  return { p: new ProxyPipeline(d), logs };
}

/** Serves one call and waits until it was answered (or settled without an answer). */
async function serve(p: ProxyPipeline, ex: FakeExchange, endpoint: Endpoint) {
  p.serve(ex, endpoint, endpoint === 'messages' ? '/v1/messages' : '/v1/chat/completions');
  for (let i = 0; i < 50 && p.inFlight > 0; i++) await new Promise((r) => setImmediate(r));
  return ex.sent[0];
}

/** As drizzle hands a driver's error over: wrapped, the connection code on the cause. */
const unreachable = () => Object.assign(new Error('Failed query: select ...'), { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }) });

describe('the pipeline when a stage fails', () => {
  it('answers 503 database_unavailable with Retry-After when the database cannot be reached, in each route format', async () => {
    const { p } = pipeline(() => Promise.reject(unreachable()));
    const openai = await serve(p, fakeExchange({ headers: { authorization: 'Bearer sk-new' } }), 'chat');
    expect(openai.status).toBe(503);
    expect(openai.headers['retry-after']).toBe('5');
    expect(JSON.parse(openai.body)).toEqual({ error: { message: expect.any(String), type: expect.any(String), code: 'database_unavailable', request_id: expect.any(String) } });
    const anthropic = await serve(p, fakeExchange({ headers: { 'x-api-key': 'sk-new' } }), 'messages');
    expect(anthropic.status).toBe(503);
    expect(JSON.parse(anthropic.body)).toMatchObject({ type: 'error', error: { type: 'overloaded_error', code: 'database_unavailable' } });
    expect(p.inFlight).toBe(0);
  });

  it('answers any other failure 500 internal_error without its detail, and logs it', async () => {
    const { p, logs } = pipeline(() => Promise.reject(new Error('relation "accounts" has a secret detail')));
    const sent = await serve(p, fakeExchange({ headers: { authorization: 'Bearer sk-new' } }), 'chat');
    expect(sent.status).toBe(500);
    expect(JSON.parse(sent.body).error).toMatchObject({ code: 'internal_error', message: 'Internal server error' });
    expect(logs.join('\n')).toContain('proxy_request_failed');
    expect(p.inFlight).toBe(0);
  });

  it('refuses new calls with 503 shutting_down once closing, and closes at once with nothing under way', async () => {
    const { p } = pipeline(() => Promise.reject(new Error('not reached')));
    const t0 = Date.now();
    await p.close();
    expect(Date.now() - t0).toBeLessThan(100);
    const sent = await serve(p, fakeExchange({ headers: { authorization: 'Bearer sk-new' } }), 'messages');
    expect(sent.status).toBe(503);
    expect(JSON.parse(sent.body)).toMatchObject({ type: 'error', error: { code: 'shutting_down' } });
  });
});
