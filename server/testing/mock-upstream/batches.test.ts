import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import type { Batch } from 'openai/resources/batches';
import { estimateTokens, FAIL_LINE_MARKER, startMockUpstream, type MockUpstream } from '../mock-upstream';
import { until } from '../until';

/** Two mocks: one whose batches move on their own (fast), one held still and stepped by the test. */
let running: MockUpstream;
let held: MockUpstream;
const client = (mock: MockUpstream, key: string) => new OpenAI({ apiKey: key, baseURL: `${mock.url}/v1`, maxRetries: 0 });

type Line = { custom_id: string; method?: string; url?: string; body: Record<string, unknown> };
const chat = (id: string, content: string, model = 'gpt-4o-mini'): Line => ({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content }] } });
const jsonl = (lines: unknown[]) => `${lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}\n`;

async function upload(c: OpenAI, lines: unknown[], name = 'requests.jsonl') {
  return c.files.create({ file: await toFile(Buffer.from(jsonl(lines)), name), purpose: 'batch' });
}

async function settled(c: OpenAI, id: string, mock: MockUpstream): Promise<Batch> {
  let b = await c.batches.retrieve(id);
  await until(async () => {
    if (mock === held) await mock.stepBatches();
    b = await c.batches.retrieve(id);
    return ['completed', 'failed', 'expired', 'cancelled'].includes(b.status);
  });
  return b;
}

const linesOf = async (c: OpenAI, fileId: string) => (await (await c.files.content(fileId)).text()).trim().split('\n').map((l) => JSON.parse(l));

beforeAll(async () => {
  running = await startMockUpstream({ batchStepMs: 20 });
  held = await startMockUpstream({ batchStepMs: null });
});
afterAll(async () => {
  await running.close();
  await held.close();
});

describe('OpenAI Batch API', () => {
  it('runs a batch through validating, in_progress and finalizing to completed, with each answer and its usage in the output file', async () => {
    const c = client(running, 'sk-batch-life');
    const prompts = ['first question', 'a second, longer question', 'third'];
    const input = await upload(c, prompts.map((p, i) => chat(`req-${i}`, p)));
    const created = await c.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { job: 'nightly' } });
    expect(created).toMatchObject({ object: 'batch', status: 'validating', input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { job: 'nightly' }, output_file_id: null, request_counts: { total: 0, completed: 0, failed: 0 } });
    expect(created.id).toMatch(/^batch_/);
    expect(created.expires_at).toBe(created.created_at + 24 * 3600);

    const statuses = new Set<string>();
    let b = created;
    await until(async () => {
      b = await c.batches.retrieve(created.id);
      statuses.add(b.status);
      return b.status === 'completed';
    });
    expect(statuses.has('failed')).toBe(false);
    expect(b).toMatchObject({ status: 'completed', request_counts: { total: 3, completed: 3, failed: 0 }, error_file_id: null, model: 'gpt-4o-mini' });
    for (const t of ['in_progress_at', 'finalizing_at', 'completed_at'] as const) expect(b[t]).toBeGreaterThanOrEqual(created.created_at);

    const out = await linesOf(c, b.output_file_id!);
    expect(out.map((l) => l.custom_id)).toEqual(['req-0', 'req-1', 'req-2']);
    const text = 'This is a mock answer from gpt-4o-mini.';
    for (const [i, l] of out.entries()) {
      expect(l.id).toMatch(/^batch_req_/);
      expect(l.error).toBeNull();
      expect(l.response).toMatchObject({ status_code: 200, body: { object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ message: { content: text } }] } });
      // The usage the mock's chat completions endpoint gives the same body.
      expect(l.response.body.usage).toMatchObject({ prompt_tokens: estimateTokens(prompts[i]), completion_tokens: estimateTokens(text) });
    }
    const input_tokens = prompts.reduce((n, p) => n + estimateTokens(p), 0);
    expect(b.usage).toMatchObject({ input_tokens, output_tokens: 3 * estimateTokens(text), total_tokens: input_tokens + 3 * estimateTokens(text) });
    const file = await c.files.retrieve(b.output_file_id!);
    expect(file).toMatchObject({ purpose: 'batch_output', filename: `batch_${b.id}_output.jsonl` });

    const paths = running.requests.filter((r) => r.credential === 'sk-batch-life').map((r) => `${r.method} ${r.path}`);
    expect(paths).toContain('POST /v1/batches');
    expect(paths).toContain(`GET /v1/batches/${b.id}`);
  });

  it('answers lines with the behaviour in force for the credential, and puts refused and failing lines in the error file', async () => {
    const c = client(running, 'sk-batch-errors');
    running.behave('sk-batch-errors', { usage: { prompt_tokens: 100, completion_tokens: 40, cached_tokens: 30, reasoning_tokens: 5 }, text: 'Fixed answer.' });
    const input = await upload(c, [
      chat('ok', 'hello'),
      { custom_id: 'no-messages', method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini' } },
      chat('marked', `please ${FAIL_LINE_MARKER}`),
    ]);
    const b = await settled(c, (await c.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).id, running);
    expect(b).toMatchObject({ status: 'completed', request_counts: { total: 3, completed: 1, failed: 2 } });
    expect(b.usage).toMatchObject({ input_tokens: 100, output_tokens: 40, input_tokens_details: { cached_tokens: 30 }, output_tokens_details: { reasoning_tokens: 5 } });
    const [ok] = await linesOf(c, b.output_file_id!);
    expect(ok.response.body.choices[0].message.content).toBe('Fixed answer.');
    const errors = await linesOf(c, b.error_file_id!);
    expect(errors.map((l) => [l.custom_id, l.response.status_code, l.response.body.error.type])).toEqual([
      ['no-messages', 400, 'invalid_request_error'],
      ['marked', 500, 'server_error'],
    ]);
    expect(errors[0].response.body.error.message).toBe("'messages' is a required property");
    running.reset();
  });

  it('runs embeddings and responses batches with the usage those endpoints report', async () => {
    const c = client(running, 'sk-batch-kinds');
    const emb = await upload(c, ['alpha beta', 'gamma'].map((t, i) => ({ custom_id: `e${i}`, method: 'POST', url: '/v1/embeddings', body: { model: 'text-embedding-3-small', input: t } })));
    const eb = await settled(c, (await c.batches.create({ input_file_id: emb.id, endpoint: '/v1/embeddings', completion_window: '24h' })).id, running);
    const e = await linesOf(c, eb.output_file_id!);
    expect(e.map((l) => l.response.body.usage.prompt_tokens)).toEqual([estimateTokens('alpha beta'), estimateTokens('gamma')]);
    expect(eb.usage?.input_tokens).toBe(estimateTokens('alpha beta') + estimateTokens('gamma'));

    const resp = await upload(c, [{ custom_id: 'r0', method: 'POST', url: '/v1/responses', body: { model: 'gpt-4.1', input: 'What is a batch?' } }]);
    const rb = await settled(c, (await c.batches.create({ input_file_id: resp.id, endpoint: '/v1/responses', completion_window: '24h' })).id, running);
    const [r] = await linesOf(c, rb.output_file_id!);
    expect(r.response.body).toMatchObject({ object: 'response', status: 'completed', usage: { input_tokens: estimateTokens('What is a batch?') } });
  });

  it('fails a batch at validation with errors.data naming each bad line, as OpenAI does', async () => {
    const c = client(running, 'sk-batch-invalid');
    const cases: [string, unknown[], { code: string; line: number | null }][] = [
      ['mixed models', [chat('a', 'x'), chat('b', 'y', 'gpt-4o')], { code: 'model_mismatch', line: 2 }],
      ['duplicate custom_id', [chat('a', 'x'), chat('a', 'y')], { code: 'duplicate_custom_id', line: 2 }],
      ['a line that is not JSON', [chat('a', 'x'), '{"custom_id": "b",'], { code: 'invalid_json_line', line: 2 }],
      ['a url beside the endpoint', [chat('a', 'x'), { ...chat('b', 'y'), url: '/v1/embeddings' }], { code: 'url_mismatch', line: 2 }],
      ['a line without method', [{ custom_id: 'a', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [] } }], { code: 'missing_required_parameter', line: 1 }],
    ];
    for (const [what, lines, error] of cases) {
      const input = await upload(c, lines);
      const b = await settled(c, (await c.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).id, running);
      expect(b.status, what).toBe('failed');
      expect(b.failed_at, what).toBeGreaterThanOrEqual(b.created_at);
      expect(b.errors?.data?.[0], what).toMatchObject(error);
      expect(b.output_file_id, what).toBeNull();
    }
    // A file of the wrong purpose, or another credential's, fails the same way.
    const notes = await c.files.create({ file: await toFile(Buffer.from(jsonl([chat('a', 'x')])), 'notes.jsonl'), purpose: 'user_data' });
    const wrong = await settled(c, (await c.batches.create({ input_file_id: notes.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).id, running);
    expect(wrong.errors?.data?.[0]).toMatchObject({ param: 'input_file_id' });
    const theirs = await upload(client(running, 'sk-batch-someone-else'), [chat('a', 'x')]);
    const foreign = await settled(c, (await c.batches.create({ input_file_id: theirs.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).id, running);
    expect(foreign.errors?.data?.[0]).toMatchObject({ message: `No such File object: ${theirs.id}` });
  });

  it('refuses a create body OpenAI refuses, with its error shape', async () => {
    const c = client(running, 'sk-batch-refused');
    const input = await upload(c, [chat('a', 'x')]);
    await expect(c.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '48h' as '24h' })).rejects.toMatchObject({ status: 400, error: { type: 'invalid_request_error', param: 'completion_window' } });
    await expect(c.batches.create({ input_file_id: input.id, endpoint: '/v1/audio/speech' as '/v1/completions', completion_window: '24h' })).rejects.toMatchObject({ status: 400, error: { param: 'endpoint' } });
    await expect(c.batches.create({ endpoint: '/v1/chat/completions', completion_window: '24h' } as never)).rejects.toMatchObject({ status: 400, error: { param: 'input_file_id', code: 'missing_required_parameter' } });
    await expect(c.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h', output_expires_after: { anchor: 'created_at', seconds: 10 } })).rejects.toMatchObject({ status: 400, error: { param: 'output_expires_after.seconds' } });
    await expect(c.batches.retrieve('batch_unknown')).rejects.toMatchObject({ status: 404, error: { type: 'invalid_request_error' } });
  });

  it('keeps batches per credential and lists them page by page, newest first', async () => {
    const c = client(held, 'sk-batch-list');
    const input = await upload(c, [chat('a', 'x')]);
    const made: string[] = [];
    for (let i = 0; i < 4; i++) made.push((await c.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).id);
    const seen: string[] = [];
    for await (const b of c.batches.list({ limit: 3 })) seen.push(b.id);
    expect(seen).toEqual([...made].reverse());
    const other = client(held, 'sk-batch-list-other');
    await expect(other.batches.retrieve(made[0])).rejects.toMatchObject({ status: 404 });
    await expect(other.batches.cancel(made[0])).rejects.toMatchObject({ status: 404 });
    expect((await other.batches.list()).data).toEqual([]);
  });

  it('cancels a batch on its way: cancelling, then cancelled with the answers given so far in the output file', async () => {
    const c = client(held, 'sk-batch-cancel');
    held.batchClock({ linesPerStep: 2 });
    try {
      const input = await upload(c, ['a', 'b', 'c', 'd', 'e'].map((x) => chat(x, `question ${x}`)));
      const b = await c.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      await held.stepBatches(); // validated
      await held.stepBatches(); // two answered
      expect(await c.batches.retrieve(b.id)).toMatchObject({ status: 'in_progress', request_counts: { total: 5, completed: 2, failed: 0 } });
      const cancelling = await c.batches.cancel(b.id);
      expect(cancelling.status).toBe('cancelling');
      expect(cancelling.cancelling_at).toBeGreaterThanOrEqual(b.created_at);
      await held.stepBatches();
      const done = await c.batches.retrieve(b.id);
      expect(done).toMatchObject({ status: 'cancelled', request_counts: { total: 5, completed: 2, failed: 0 } });
      expect((await linesOf(c, done.output_file_id!)).map((l) => l.custom_id)).toEqual(['a', 'b']);
      await expect(c.batches.cancel(b.id)).rejects.toMatchObject({ status: 409, error: { message: "Cannot cancel a batch with status 'cancelled'." } });
    } finally {
      held.batchClock({ linesPerStep: Infinity });
    }
  });

  it('expires a batch on demand: answered requests in the output file, the rest batch_expired in the error file', async () => {
    const c = client(held, 'sk-batch-expire');
    held.batchClock({ linesPerStep: 1 });
    try {
      const input = await upload(c, ['a', 'b', 'c'].map((x) => chat(x, `question ${x}`)));
      const b = await c.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      await held.stepBatches();
      await held.stepBatches();
      await held.expireBatch(b.id);
      const done = await c.batches.retrieve(b.id);
      expect(done).toMatchObject({ status: 'expired', request_counts: { total: 3, completed: 1, failed: 0 } });
      expect(done.expired_at).toBeGreaterThanOrEqual(b.created_at);
      expect((await linesOf(c, done.output_file_id!)).map((l) => l.custom_id)).toEqual(['a']);
      const errors = await linesOf(c, done.error_file_id!);
      expect(errors.map((l) => [l.custom_id, l.response, l.error.code])).toEqual([['b', null, 'batch_expired'], ['c', null, 'batch_expired']]);
    } finally {
      held.batchClock({ linesPerStep: Infinity });
    }
  });
});
