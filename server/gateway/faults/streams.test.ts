import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secret } from '../test-fixture';
import { readSettings } from '../../core/settings';
import { startBlackHole, type BlackHole } from '../../testing/mock-upstream';
import { drain, hello, leaks, startFaults, timed, type Faults } from './test-support';

/**
 * Black holes, first-byte timeouts and broken streams, with the real SDKs. Scaled down (see
 * test-support FAULT_SETTINGS): STREAM_FIRST_BYTE_TIMEOUT_MS 0.4 s (30 s by default),
 * UPSTREAM_TIMEOUT_MS 1.5 s (300 s), STREAM_IDLE_TIMEOUT_MS 0.6 s (60 s).
 */
let x: Faults;
let hole: BlackHole;
beforeAll(async () => {
  x = await startFaults();
  hole = await startBlackHole();
  x.needles.add(hole.url);
  x.needles.add(new URL(hole.url).host);
}, 60_000);
afterAll(async () => {
  await x?.close();
  await hole?.close();
});

const usageUsd = (prompt: number, completion: number) => (prompt * 2.5 + completion * 10) / 1e6;

describe('fault suite: timeouts and streams', () => {
  it('defaults: a stream waits 30 s for its first byte, a whole answer 300 s, a silent stream 60 s', () => {
    const s = readSettings({});
    expect([s.streamFirstByteTimeoutMs, s.upstreamTimeoutMs, s.streamIdleTimeoutMs]).toEqual([30_000, 300_000, 60_000]);
    expect(s.failoverBudgetMs).toBeGreaterThan(s.upstreamTimeoutMs);
  });

  it('a black-hole key on a streamed request fails over within the first-byte timeout (30 s by default; 0.4 s here), well before UPSTREAM_TIMEOUT_MS', async () => {
    const good = secret('bh-stream-good');
    await x.addKey(20, secret('bh-stream'), hole.url);
    await x.addKey(20, good);
    const user = await x.f.account({ level: 20 });
    const accepted = hole.accepted;
    const [out, ms] = await timed(async () => drain(await x.openai(user.key).chat.completions.create({ model: 'gpt-4o', messages: hello, stream: true })));
    expect(out.error).toBeUndefined();
    expect(out.items.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('This is a mock answer from gpt-4o.');
    expect(hole.accepted).toBe(accepted + 1);
    expect(ms).toBeGreaterThanOrEqual(380);
    expect(ms).toBeLessThan(1200);
  });

  it('a black hole on an Anthropic streamed request fails over within the first-byte timeout too', async () => {
    const good = secret('bh-msg-good');
    const holeKey = secret('bh-msg');
    await x.addKey(21, holeKey);
    x.f.mock.behave(holeKey, { blackHole: true });
    await x.addKey(21, good);
    const user = await x.f.account({ level: 21 });
    const [out, ms] = await timed(async () => drain(await x.anthropic(user.key).messages.create({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: hello, stream: true })));
    expect(out.error).toBeUndefined();
    expect(out.items.at(-1)).toMatchObject({ type: 'message_stop' });
    expect(x.callsWith(holeKey)).toBe(1);
    expect(ms).toBeLessThan(1200);
  });

  it('a black-hole key on a whole request fails over within UPSTREAM_TIMEOUT_MS (1.5 s here)', async () => {
    await x.addKey(22, secret('bh-whole'), hole.url);
    await x.addKey(22, secret('bh-whole-good'));
    const user = await x.f.account({ level: 22 });
    const [r, ms] = await timed(() => x.openai(user.key).chat.completions.create({ model: 'gpt-4o', messages: hello }));
    expect(r.choices[0].message.content).toBe('This is a mock answer from gpt-4o.');
    expect(ms).toBeGreaterThanOrEqual(1450);
    expect(ms).toBeLessThan(2500);
  });

  it('an upstream that sends a stream\'s headers and then nothing fails over within the first-byte timeout', async () => {
    const silent = secret('head-only');
    await x.addKey(23, silent);
    await x.addKey(23, secret('head-only-good'));
    x.f.mock.behave(silent, { stallAfterChunks: 0 });
    const user = await x.f.account({ level: 23 });
    const [out, ms] = await timed(async () => drain(await x.openai(user.key).chat.completions.create({ model: 'gpt-4o', messages: hello, stream: true })));
    expect(out.error).toBeUndefined();
    expect(out.items.length).toBeGreaterThan(0);
    expect(ms).toBeLessThan(1200);
    expect(x.logged('upstream_attempt_failed').some((l) => /UPSTREAM_FIRST_BYTE_TIMEOUT/.test(l.reason))).toBe(true);
  });

  it('a stream cut after some tokens is never a clean end: both SDKs raise stream_interrupted with the request ID, it is not retried, and it is billed as abnormal', async () => {
    const cut = secret('cut');
    await x.addKey(24, cut);
    await x.addKey(24, secret('cut-other'));
    x.f.mock.behave(cut, { cutAfterChunks: 2, chunks: 5 });
    const user = await x.f.account({ level: 24 });
    const from = x.f.mock.requests.length;
    const out = await drain(await x.openai(user.key).chat.completions.create({ model: 'gpt-4o', messages: hello, stream: true }));
    expect(out.items).toHaveLength(2);
    expect(out.error?.error).toMatchObject({ code: 'stream_interrupted', request_id: expect.any(String) });
    expect(out.error.message).toContain(`request ${out.error.error.request_id}`);
    expect(x.f.mock.requests.length - from).toBe(1);
    expect(x.logged('upstream_stream_interrupted').find((l) => l.request === out.error.error.request_id)).toMatchObject({ level: 'warn', key_level: 24 });

    x.f.mock.behave(cut, { cutAfterChunks: 1, chunks: 5 });
    const second = await x.f.account({ level: 24 });
    // The round robin's next key is the healthy one; ask twice so the cut key serves one.
    const results = [];
    for (let i = 0; i < 2; i++) results.push(await drain(await x.anthropic(second.key).messages.create({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: hello, stream: true })));
    const broken = results.find((r) => r.error);
    expect(broken?.error.error).toMatchObject({ type: 'error', error: { code: 'stream_interrupted' } });
    const rows = await x.f.usage(user.id);
    expect(rows).toHaveLength(1);
    expect(rows[0].status).toBe('abnormal');
    expect(rows[0].completion).toBeGreaterThan(0);
  });

  it('a mid-stream stall of 30 s under the 60 s idle timeout (scaled to 0.3 s under 0.6 s) is waited out and the stream completes, billed normally', async () => {
    const slow = secret('stall-short');
    await x.addKey(25, slow);
    x.f.mock.behave(slow, { stallAfterChunks: 1, stallMs: 300, usage: { prompt_tokens: 20, completion_tokens: 9 } });
    const user = await x.f.account({ level: 25 });
    const [out, ms] = await timed(async () => drain(await x.openai(user.key).chat.completions.create({ model: 'gpt-4o', messages: hello, stream: true })));
    expect(out.error).toBeUndefined();
    expect(ms).toBeGreaterThanOrEqual(280);
    const rows = await x.f.usage(user.id);
    expect(rows).toEqual([expect.objectContaining({ status: 'ok', prompt: 20, completion: 9 })]);
    expect(rows[0].credit_used).toBeCloseTo(usageUsd(20, 9), 12);
  });

  it('a stall past STREAM_IDLE_TIMEOUT_MS (0.6 s here) ends the stream with stream_interrupted, billed for what was delivered', async () => {
    const stalled = secret('stall-long');
    await x.addKey(26, stalled);
    x.f.mock.behave(stalled, { stallAfterChunks: 1 });
    const user = await x.f.account({ level: 26 });
    const [out, ms] = await timed(async () => drain(await x.openai(user.key).chat.completions.create({ model: 'gpt-4o', messages: hello, stream: true })));
    expect(out.items).toHaveLength(1);
    expect(out.error?.error).toMatchObject({ code: 'stream_interrupted' });
    expect(ms).toBeGreaterThanOrEqual(580);
    expect(ms).toBeLessThan(1500);
    expect((await x.f.usage(user.id))[0]).toMatchObject({ status: 'abnormal' });
  });

  it('a stream that ends without [DONE] still reports its usage to the client and is billed by it', async () => {
    const noDone = secret('no-done');
    await x.addKey(27, noDone);
    x.f.mock.behave(noDone, { omitDone: true, usage: { prompt_tokens: 31, completion_tokens: 12 } });
    const user = await x.f.account({ level: 27 });
    const out = await drain(await x.openai(user.key).chat.completions.create({ model: 'gpt-4o', messages: hello, stream: true, stream_options: { include_usage: true } }));
    expect(out.error).toBeUndefined();
    expect(out.items.at(-1)?.usage).toMatchObject({ prompt_tokens: 31, completion_tokens: 12 });
    const rows = await x.f.usage(user.id);
    expect(rows).toEqual([expect.objectContaining({ status: 'ok', prompt: 31, completion: 12 })]);
    expect(rows[0].credit_used).toBeCloseTo(usageUsd(31, 12), 12);
  });

  it('no response body of any scenario above names an upstream host, URL, address or SecretKey, or an internal error', async () => {
    await x.settled();
    expect(x.bodies.filter((b) => /stream_interrupted/.test(b.text)).length).toBeGreaterThanOrEqual(3);
    expect(leaks(x.bodies, x.needles)).toEqual([]);
  });
});
