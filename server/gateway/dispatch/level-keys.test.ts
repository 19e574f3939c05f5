import { describe, expect, it } from 'vitest';
import type { ResponseController, ResponseHandler, UpstreamRequest } from '../../adapters/upstream-http/types';
import { UpstreamHttpError } from '../../adapters/upstream-http/types';
import type { PooledKey } from '../../state/provider-keys/key-pool';
import { SwitchOverWindows } from '../key-health/switch-over';
import { KeyCircuits } from '../key-health/circuits';
import { standardKind } from '../providers/standard/index';
import { callFor, fakeExchange } from '../stages/test-support';
import { tryLevel, type LevelDeps } from './level-keys';
import { Tally } from './tally';

/** What the fake upstream answers for one provider key's secret: a status, or a connection error. */
type Script = { status: number; body?: string; headers?: Record<string, string>; sse?: string[]; cut?: boolean } | { error: Error };

const key = (id: number): PooledKey => ({ id, ownerId: 1, name: `k${id}`, level: 1, provider: 'http://upstream.test', secret: `sk-up-${id}`, config: {} });

/** The proxy's upstream client in memory: each request answered by the script of its key. */
function upstream(scripts: Record<string, Script[]>) {
  const calls: string[] = [];
  const controller: ResponseController = { pause() {}, resume() {}, abort() {} };
  return {
    calls,
    dispatch(req: UpstreamRequest, h: ResponseHandler) {
      const secret = req.headers.authorization.slice('Bearer '.length);
      calls.push(secret);
      const s = scripts[secret].shift() ?? { status: 200, body: '{}' };
      h.onRequestStart(controller);
      if ('error' in s) return h.onResponseError(controller, s.error);
      if (s.sse) {
        h.onResponseStart(controller, s.status, { 'content-type': 'text/event-stream', ...s.headers });
        for (const e of s.sse) h.onResponseData(controller, Buffer.from(e));
        return s.cut ? h.onResponseError(controller, new Error('socket hang up')) : h.onResponseEnd(controller);
      }
      h.onResponseStart(controller, s.status, { 'content-type': 'application/json', ...s.headers });
      h.onResponseData(controller, Buffer.from(s.body ?? '{}'));
      h.onResponseEnd(controller);
    },
  };
}

function deps(keys: PooledKey[], scripts: Record<string, Script[]>, maxAttemptsPerLevel = 3) {
  const health = { refused: [] as [number, number][], rateLimited: [] as number[] };
  const up = upstream(scripts);
  const switchOver = new SwitchOverWindows({ threshold: 100, windowMs: 60_000 });
  const circuits = new KeyCircuits({ failureThreshold: 2, openMs: 60_000, openMaxMs: 600_000, probeTimeoutMs: 1000 }, { warn() {}, debug() {} });
  const d: LevelDeps = {
    settings: { maxAttemptsPerLevel, upstreamTimeoutMs: 1000, streamIdleTimeoutMs: 1000, streamFirstByteTimeoutMs: 500 },
    pool: {
      keys: () => keys,
      // In order, skipping the keys already used: the pool's round-robin without the cursor.
      pick: (_o, _l, exclude) => keys.find((k) => !exclude?.has(k.id)),
      sleepingUntil: () => null,
    },
    kinds: { of: () => standardKind },
    health: {
      refused: (k, status) => { health.refused.push([k.id, status]); },
      rateLimited: (k) => { health.rateLimited.push(k.id); return 5000; },
      circuits,
    },
    switchOver,
    log: { debug() {}, info() {}, warn() {} },
    upstream: up,
  };
  return { d, up, health, circuits };
}

describe("the attempt loop over a Level's keys", () => {
  it('moves past a 5xx to the next key and relays the answer without the provider-account headers', async () => {
    const { d, up } = deps([key(1), key(2)], {
      'sk-up-1': [{ status: 500 }],
      'sk-up-2': [{ status: 200, body: '{"usage":{"prompt_tokens":3,"completion_tokens":4}}', headers: { 'x-request-id': 'r1', 'set-cookie': 'a=b', 'x-ratelimit-remaining-tokens': '9', 'openai-organization': 'org' } }],
    });
    const c = callFor();
    const tally = new Tally();
    const out = await tryLevel(d, c, 'gpt-4o', 1, tally);
    expect(out).toMatchObject({ kind: 'delivered', status: 200, usage: { prompt: 3, completion: 4 } });
    expect(up.calls).toEqual(['sk-up-1', 'sk-up-2']);
    expect([c.servedBy?.id, c.servedLevel, c.servedModel]).toEqual([2, 1, 'gpt-4o']);
    expect(tally.attempts).toBe(1);
    // The upstream's own x-request-id is dropped: the client gets the gateway's (call.ts stampHead).
    expect(c.ex.sent).toEqual([{ status: 200, headers: { 'content-type': 'application/json' }, body: expect.any(String) }]);
  });

  it('tries at most maxAttemptsPerLevel keys, and nothing reaches the client', async () => {
    const keys = [key(1), key(2), key(3), key(4)];
    const { d, up } = deps(keys, Object.fromEntries(keys.map((k) => [k.secret, [{ status: 503 }]])), 3);
    const c = callFor();
    const tally = new Tally();
    expect(await tryLevel(d, c, 'gpt-4o', 1, tally)).toBeNull();
    expect(up.calls).toHaveLength(3);
    expect(tally.attempts).toBe(3);
    expect(c.ex.sent).toEqual([]);
  });

  it('disables a key the upstream refuses, puts a rate-limited one to sleep, and passes other 4xx through', async () => {
    const { d, health } = deps([key(1), key(2), key(3)], {
      'sk-up-1': [{ status: 401 }], 'sk-up-2': [{ status: 429 }], 'sk-up-3': [{ status: 404, body: '{"error":"no such model"}' }],
    });
    const c = callFor();
    const tally = new Tally();
    expect(await tryLevel(d, c, 'gpt-4o', 1, tally)).toMatchObject({ kind: 'delivered', status: 404 });
    expect(health.refused).toEqual([[1, 401]]);
    expect(health.rateLimited).toEqual([2]);
    expect(tally.rateLimitWaitMs).toBe(5000);
    expect(c.ex.sent[0]).toMatchObject({ status: 404, body: '{"error":"no such model"}' });
  });

  it('sends once more, without counting an attempt, when a kept connection closed unread', async () => {
    const stale = Object.assign(new UpstreamHttpError('UPSTREAM_SOCKET', 'socket closed'), { staleConnection: true });
    const { d, up } = deps([key(1)], { 'sk-up-1': [{ error: stale }, { status: 200 }] }, 1);
    const tally = new Tally();
    expect(await tryLevel(d, callFor(), 'gpt-4o', 1, tally)).toMatchObject({ kind: 'delivered', status: 200 });
    expect(up.calls).toEqual(['sk-up-1', 'sk-up-1']);
    expect(tally.attempts).toBe(0);
  });

  it('ends a stream the upstream cut after the first byte with an error event and no clean end', async () => {
    const { d } = deps([key(1)], { 'sk-up-1': [{ status: 200, sse: ['data: {"choices":[{"delta":{"content":"a"}}]}\n\n'], cut: true }] });
    const c = callFor({ body: { model: 'gpt-4o', stream: true } });
    const out = await tryLevel(d, c, 'gpt-4o', 1, new Tally());
    expect(out).toMatchObject({ kind: 'delivered', streamed: true, abnormal: true, events: 1 });
    expect(c.ex.sent).toHaveLength(1);
    expect(c.ex.sent[0].clean).toBe(false);
    expect(c.ex.sent[0].body).toMatch(/^data: .*\n\nevent: error\ndata: .*stream_interrupted/s);
  });

  it('stops when the client left', async () => {
    const ex = fakeExchange();
    ex.leave();
    const { d, up } = deps([key(1)], { 'sk-up-1': [{ status: 200 }] });
    expect(await tryLevel(d, callFor({ ex }), 'gpt-4o', 1, new Tally())).toEqual({ kind: 'client-gone' });
    expect(up.calls).toEqual([]);
  });

  it('passes over keys whose circuit is open and tries every other key, beyond a count that used to stop at three', async () => {
    const keys = [key(1), key(2), key(3), key(4)];
    const refused = new Error('connect ECONNREFUSED 10.1.2.3:443 (upstream.test)');
    const { d, up, circuits } = deps(keys, {
      'sk-up-1': [{ error: refused }, { error: refused }], 'sk-up-2': [{ error: refused }, { error: refused }],
      'sk-up-3': [{ error: refused }, { error: refused }], 'sk-up-4': [{ status: 200 }, { status: 200 }],
    }, 10);
    const tally = new Tally();
    expect(await tryLevel(d, callFor(), 'gpt-4o', 1, tally)).toMatchObject({ kind: 'delivered', status: 200 });
    expect(tally.causes).toEqual(['key 1: connect ECONNREFUSED [address] ([upstream])', 'key 2: connect ECONNREFUSED [address] ([upstream])', 'key 3: connect ECONNREFUSED [address] ([upstream])']);
    // A second failure opens them (threshold 2); the third call goes straight to key 4.
    await tryLevel(d, callFor(), 'gpt-4o', 1, new Tally());
    expect(circuits.stateOf(1, 1)).toBe('open');
    up.calls.length = 0;
    const third = new Tally();
    expect(await tryLevel(d, callFor(), 'gpt-4o', 1, third)).toMatchObject({ kind: 'delivered', status: 200 });
    expect(up.calls).toEqual(['sk-up-4']);
    expect(third.attempts).toBe(0);
  });

  it('starts no further key once the failover budget is spent', async () => {
    const { d, up } = deps([key(1), key(2)], { 'sk-up-1': [{ status: 503 }], 'sk-up-2': [{ status: 200 }] }, 10);
    const tally = new Tally();
    tally.deadline = Date.now() - 1;
    expect(await tryLevel(d, callFor(), 'gpt-4o', 1, tally)).toBeNull();
    expect(up.calls).toEqual([]);
    expect(tally.budgetSpent).toBe(true);
  });

  it('counts a 5xx against the model on the key, not against the key', async () => {
    const { d, circuits } = deps([key(1)], { 'sk-up-1': [{ status: 500 }, { status: 500 }, { status: 200 }] }, 1);
    await tryLevel(d, callFor(), 'gpt-4o', 1, new Tally());
    await tryLevel(d, callFor(), 'gpt-4o', 1, new Tally());
    expect(circuits.stateOf(1, 1, 'gpt-4o')).toBe('open');
    expect(circuits.stateOf(1, 1)).toBe('healthy');
    // Another model on the same key is still served.
    expect(await tryLevel(d, callFor(), 'gpt-4o-mini', 1, new Tally())).toMatchObject({ kind: 'delivered', status: 200 });
  });
});
