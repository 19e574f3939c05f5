import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import type { MessageBatch, MessageBatchIndividualResponse } from '@anthropic-ai/sdk/resources/messages/batches';
import { estimateTokens, FAIL_LINE_MARKER, startMockUpstream, type MockUpstream } from '../mock-upstream';
import { until } from '../until';

/** One mock whose batches move on their own, one held still and stepped by the test. */
let running: MockUpstream;
let held: MockUpstream;
// As in mock-upstream.test.ts: the mock, like Anthropic, wants the key as `x-api-key`.
const client = (mock: MockUpstream, key: string) => new Anthropic({ apiKey: key, baseURL: mock.url, maxRetries: 0, defaultHeaders: { 'x-api-key': key } });
const request = (custom_id: string, content: string, extra: Record<string, unknown> = {}) => ({
  custom_id, params: { model: 'claude-sonnet-4-20250514', max_tokens: 256, messages: [{ role: 'user' as const, content }], ...extra },
});

async function ended(c: Anthropic, id: string, mock: MockUpstream): Promise<MessageBatch> {
  let b = await c.messages.batches.retrieve(id);
  await until(async () => {
    if (mock === held) await mock.stepBatches();
    b = await c.messages.batches.retrieve(id);
    return b.processing_status === 'ended';
  });
  return b;
}

async function resultsOf(c: Anthropic, id: string): Promise<MessageBatchIndividualResponse[]> {
  const out: MessageBatchIndividualResponse[] = [];
  for await (const r of await c.messages.batches.results(id)) out.push(r);
  return out;
}

beforeAll(async () => {
  running = await startMockUpstream({ batchStepMs: 20 });
  held = await startMockUpstream({ batchStepMs: null });
});
afterAll(async () => {
  await running.close();
  await held.close();
});

describe('Anthropic Message Batches API', () => {
  it('runs a batch to ended, its results at results_url on the mock carrying each message with usage', async () => {
    const c = client(running, 'sk-ant-batch-life');
    const prompts = ['What is a batch?', 'And a longer question about batches?'];
    const created = await c.messages.batches.create({ requests: prompts.map((p, i) => request(`q-${i}`, p)) });
    expect(created).toMatchObject({ type: 'message_batch', processing_status: 'in_progress', results_url: null, ended_at: null, cancel_initiated_at: null, archived_at: null, request_counts: { processing: 2, succeeded: 0, errored: 0, canceled: 0, expired: 0 } });
    expect(created.id).toMatch(/^msgbatch_/);
    expect(Date.parse(created.expires_at) - Date.parse(created.created_at)).toBe(24 * 3600 * 1000);

    const b = await ended(c, created.id, running);
    expect(b.request_counts).toEqual({ processing: 0, succeeded: 2, errored: 0, canceled: 0, expired: 0 });
    expect(b.results_url).toBe(`${running.url}/v1/messages/batches/${b.id}/results`);
    expect(Date.parse(b.ended_at!)).toBeGreaterThanOrEqual(Date.parse(b.created_at));

    const results = await resultsOf(c, b.id);
    const text = 'This is a mock answer from claude-sonnet-4-20250514.';
    expect(results.map((r) => r.custom_id)).toEqual(['q-0', 'q-1']);
    for (const [i, r] of results.entries()) {
      expect(r.result.type).toBe('succeeded');
      if (r.result.type !== 'succeeded') continue;
      expect(r.result.message).toMatchObject({ type: 'message', role: 'assistant', model: 'claude-sonnet-4-20250514', content: [{ type: 'text', text }], stop_reason: 'end_turn' });
      // The usage the mock's Messages endpoint gives the same body.
      expect(r.result.message.usage).toMatchObject({ input_tokens: estimateTokens(prompts[i]), output_tokens: estimateTokens(text) });
    }
    const paths = running.requests.filter((r) => r.credential === 'sk-ant-batch-life').map((r) => `${r.method} ${r.path}`);
    expect(paths).toContain('POST /v1/messages/batches');
    expect(paths).toContain(`GET /v1/messages/batches/${b.id}/results`);
  });

  it('ends a request errored when /v1/messages would refuse its params or the marker asks it to fail', async () => {
    const c = client(running, 'sk-ant-batch-errored');
    running.behave('sk-ant-batch-errored', { usage: { prompt_tokens: 500, completion_tokens: 60, cached_tokens: 200 } });
    const b = await ended(c, (await c.messages.batches.create({
      requests: [
        request('fine', 'hello'),
        { custom_id: 'no-max-tokens', params: { model: 'claude-sonnet-4-20250514', messages: [{ role: 'user', content: 'x' }] } as never },
        request('marked', `hello ${FAIL_LINE_MARKER}`),
        request('too-long', 'hello', { max_tokens: 999_999 }),
      ],
    })).id, running);
    expect(b.request_counts).toEqual({ processing: 0, succeeded: 1, errored: 3, canceled: 0, expired: 0 });
    const results = await resultsOf(c, b.id);
    const fine = results[0].result;
    expect(fine.type === 'succeeded' && fine.message.usage).toMatchObject({ input_tokens: 300, cache_read_input_tokens: 200, output_tokens: 60 });
    expect(results.slice(1).map((r) => (r.result.type === 'errored' ? [r.custom_id, r.result.error.error.type, r.result.error.error.message] : r.custom_id))).toEqual([
      ['no-max-tokens', 'invalid_request_error', 'max_tokens: Field required'],
      ['marked', 'api_error', 'Internal server error'],
      // The model's published output limit, as /v1/messages refuses it (mock-upstream/model-fit.ts).
      ['too-long', 'invalid_request_error', expect.stringMatching(/^max_tokens: 999999 > \d+, which is the maximum allowed number of output tokens for claude-sonnet-4-20250514$/)],
    ]);
    running.reset();
  });

  it('refuses a create body Anthropic refuses, in its error shape', async () => {
    const c = client(running, 'sk-ant-batch-refused');
    const refused = (requests: unknown[]) => c.messages.batches.create({ requests } as never);
    await expect(refused([request('same', 'a'), request('same', 'b')])).rejects.toMatchObject({ status: 400, error: { type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining("Duplicate custom_id 'same'") } } });
    await expect(refused([request('has space', 'a')])).rejects.toMatchObject({ status: 400, error: { error: { message: "requests.0.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'" } } });
    await expect(refused([request('x'.repeat(65), 'a')])).rejects.toMatchObject({ status: 400 });
    await expect(refused([])).rejects.toMatchObject({ status: 400, error: { error: { message: 'requests: List should have at least 1 item after validation, not 0' } } });
    await expect(refused([{ custom_id: 'a' }])).rejects.toMatchObject({ status: 400, error: { error: { message: 'requests.0.params: Field required' } } });
    await expect(c.messages.batches.retrieve('msgbatch_unknown')).rejects.toMatchObject({ status: 404, error: { error: { type: 'not_found_error' } } });
    // As /v1/messages: the key as x-api-key, and the API version header.
    const bearerOnly = new Anthropic({ apiKey: 'sk-ant-batch-refused', baseURL: running.url, maxRetries: 0 });
    await expect(bearerOnly.messages.batches.list()).rejects.toMatchObject({ status: 401, error: { error: { type: 'authentication_error' } } });
    await expect(c.messages.batches.list({}, { headers: { 'anthropic-version': null } })).rejects.toMatchObject({ status: 400, error: { error: { message: 'anthropic-version: header is required' } } });
  });

  it('keeps batches per credential and lists them page by page, newest first, either way', async () => {
    const c = client(held, 'sk-ant-batch-list');
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await c.messages.batches.create({ requests: [request('a', `q${i}`)] })).id);
    const newest = [...made].reverse();
    const seen: string[] = [];
    for await (const b of c.messages.batches.list({ limit: 2 })) seen.push(b.id);
    expect(seen).toEqual(newest);
    const before = await c.messages.batches.list({ limit: 2, before_id: newest[3] });
    expect(before.data.map((b) => b.id)).toEqual([newest[1], newest[2]]);
    expect(before.has_more).toBe(true);
    const other = client(held, 'sk-ant-batch-list-other');
    await expect(other.messages.batches.retrieve(made[0])).rejects.toMatchObject({ status: 404 });
    await expect(other.messages.batches.cancel(made[0])).rejects.toMatchObject({ status: 404 });
    expect((await other.messages.batches.list()).data).toEqual([]);
  });

  it('gives no results and refuses delete before the batch has ended; cancel ends it with the rest canceled', async () => {
    const c = client(held, 'sk-ant-batch-cancel');
    held.batchClock({ linesPerStep: 1 });
    try {
      const b = await c.messages.batches.create({ requests: ['a', 'b', 'c'].map((x) => request(x, `question ${x}`)) });
      await held.stepBatches();
      expect((await c.messages.batches.retrieve(b.id)).request_counts).toMatchObject({ processing: 2, succeeded: 1 });
      // The SDK refuses results() while results_url is null; the URL itself answers 400 until the batch has ended.
      await expect(c.messages.batches.results(b.id)).rejects.toThrow(/results_url/);
      const early = await fetch(`${held.url}/v1/messages/batches/${b.id}/results`, { headers: { 'x-api-key': 'sk-ant-batch-cancel', 'anthropic-version': '2023-06-01' } });
      expect(early.status).toBe(400);
      expect(await early.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      await expect(c.messages.batches.delete(b.id)).rejects.toMatchObject({ status: 400, error: { error: { type: 'invalid_request_error' } } });

      const canceling = await c.messages.batches.cancel(b.id);
      expect(canceling.processing_status).toBe('canceling');
      expect(Date.parse(canceling.cancel_initiated_at!)).toBeGreaterThanOrEqual(Date.parse(b.created_at));
      await held.stepBatches();
      const done = await c.messages.batches.retrieve(b.id);
      expect(done).toMatchObject({ processing_status: 'ended', request_counts: { processing: 0, succeeded: 1, errored: 0, canceled: 2, expired: 0 } });
      expect((await resultsOf(c, b.id)).map((r) => [r.custom_id, r.result.type])).toEqual([['a', 'succeeded'], ['b', 'canceled'], ['c', 'canceled']]);
      await expect(c.messages.batches.cancel(b.id)).rejects.toMatchObject({ status: 400 });

      expect(await c.messages.batches.delete(b.id)).toEqual({ id: b.id, type: 'message_batch_deleted' });
      await expect(c.messages.batches.retrieve(b.id)).rejects.toMatchObject({ status: 404 });
    } finally {
      held.batchClock({ linesPerStep: Infinity });
    }
  });

  it('expires a batch on demand: answered requests kept, the rest expired', async () => {
    const c = client(held, 'sk-ant-batch-expire');
    held.batchClock({ linesPerStep: 1 });
    try {
      const b = await c.messages.batches.create({ requests: ['a', 'b', 'c'].map((x) => request(x, `question ${x}`)) });
      await held.stepBatches();
      await held.expireBatch(b.id);
      const done = await c.messages.batches.retrieve(b.id);
      expect(done).toMatchObject({ processing_status: 'ended', request_counts: { processing: 0, succeeded: 1, errored: 0, canceled: 0, expired: 2 } });
      expect((await resultsOf(c, b.id)).map((r) => r.result.type)).toEqual(['succeeded', 'expired', 'expired']);
    } finally {
      held.batchClock({ linesPerStep: Infinity });
    }
  });
});
