import { describe, expect, it } from 'vitest';
import { BatchLines, FileRefusal, type LineRules } from './batch-lines';
import { estimateInputTokens } from '../../domain/pricing/estimate';

const rules = (over: Partial<LineRules> = {}): LineRules => ({
  maxLineBytes: 4096,
  map: (m) => (m === 'alias' ? 'gpt-4o-mini' : m),
  context: () => null,
  ...over,
});

const line = (i: number, body: Record<string, unknown>, url = '/v1/chat/completions') =>
  JSON.stringify({ custom_id: `r${i}`, method: 'POST', url, body });

const chat = (extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], ...extra });

/** The file run through the lines in pieces of `size` bytes: what went on, or the refusal. */
async function run(text: string, size: number, r = rules()) {
  const b = new BatchLines(r);
  const data = Buffer.from(text);
  async function* pieces() {
    for (let i = 0; i < data.length; i += size) yield data.subarray(i, i + size);
  }
  const out: Buffer[] = [];
  try {
    for await (const x of b.filter(pieces())) out.push(Buffer.from(x));
  } catch (err) {
    if (err instanceof FileRefusal) return { b, out: Buffer.concat(out).toString(), refusal: err.refusal };
    throw err;
  }
  return { b, out: Buffer.concat(out).toString(), refusal: null };
}

describe('batch input lines', () => {
  it('passes a valid file on unchanged in any piece size and sums its worst case per line', async () => {
    const bodies = [chat({ max_tokens: 100 }), chat({ max_completion_tokens: 50, n: 2 }), chat(), chat({ n: 3 })];
    const text = bodies.map((b, i) => line(i, b)).join('\n') + '\n';
    const input = bodies.reduce((s, b, i) => s + estimateInputTokens(b, Buffer.from(`${line(i, b)}\n`), 'gpt-4o-mini', null), 0);
    for (const size of [1, 7, 64, 100_000]) {
      const { b, out, refusal } = await run(text, size);
      expect(refusal).toBeNull();
      expect(out).toBe(text);
      expect(b).toMatchObject({ lines: 4, model: 'gpt-4o-mini', url: '/v1/chat/completions', outputCapped: 200, uncappedLines: 4, inputBound: input });
    }
  });

  it('reads a last line without a line break, CRLF endings and blank lines', async () => {
    const text = `${line(1, chat())}\r\n\r\n${line(2, chat({ max_tokens: 5 }))}`;
    const { b, out, refusal } = await run(text, 10);
    expect(refusal).toBeNull();
    expect(out).toBe(text);
    expect(b).toMatchObject({ lines: 2, outputCapped: 5, uncappedLines: 1 });
  });

  it('counts no output for embeddings', async () => {
    const text = `${line(1, { model: 'text-embedding-3-small', input: 'x' }, '/v1/embeddings')}\n`;
    const { b } = await run(text, 1000);
    expect(b).toMatchObject({ lines: 1, outputCapped: 0, uncappedLines: 0, url: '/v1/embeddings' });
  });

  it('rewrites a line whose model the mapping changes, keeping the others byte for byte', async () => {
    const first = line(1, chat());
    const text = `${first}\n${line(2, { ...chat(), model: 'alias' })}\n${first}\n`;
    const { b, out, refusal } = await run(text, 13);
    expect(refusal).toBeNull();
    const sent = out.split('\n');
    expect(sent[0]).toBe(first);
    expect(JSON.parse(sent[1]).body.model).toBe('gpt-4o-mini');
    expect(sent[2]).toBe(first);
    expect(b.lines).toBe(3);
  });

  it('rewrites only the body of a line, its other members and line break as sent; a line naming body twice whole', async () => {
    const spaced = '{ "custom_id" : "r2",\t"body": {"model":"alias","messages":[]} , "method":"POST", "url":"/v1/chat/completions", "x": [1, 2] }';
    const twice = '{"custom_id":"r3","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o"},"body":{"model":"alias"}}';
    const text = `${line(1, chat())}\n${spaced}\r\n${twice}\n`;
    const { out, refusal } = await run(text, 17);
    expect(refusal).toBeNull();
    const sent = out.split('\n');
    expect(sent[1]).toBe('{ "custom_id" : "r2",\t"body": {"model":"gpt-4o-mini","messages":[]} , "method":"POST", "url":"/v1/chat/completions", "x": [1, 2] }\r');
    expect(sent[2]).toBe('{"custom_id":"r3","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o-mini"}}');
  });

  it.each([
    ['not JSON', `${line(1, chat())}\n{"custom_id": \n`, 'Line 2 of the file is not valid JSON'],
    ['an array', `[1,2]\n`, 'Line 1 of the file must be a JSON object'],
    ['no custom_id', `${JSON.stringify({ method: 'POST', url: '/v1/chat/completions', body: chat() })}\n`, 'Line 1 of the file must be a JSON object'],
    ['a GET', `${JSON.stringify({ custom_id: 'a', method: 'GET', url: '/v1/chat/completions', body: chat() })}\n`, 'method must be "POST"'],
    ['an unknown url', `${line(1, chat(), '/v1/images/generations')}\n`, 'url must be one of'],
    ['no model', `${line(1, { messages: [] })}\n`, 'Line 1 of the file: body.model: required'],
    ['another model', `${line(1, chat())}\n\n${line(3, { ...chat(), model: 'gpt-4o' })}\n`, 'Line 3 of the file names model gpt-4o, line 1 names gpt-4o-mini'],
    ['another url', `${line(1, chat())}\n${line(2, { ...chat() }, '/v1/responses')}\n`, 'Line 2 of the file calls /v1/responses'],
  ])('refuses %s, naming the line', async (_name, text, message) => {
    const { refusal } = await run(text, 5);
    expect(refusal).toMatchObject({ status: 400, code: 'invalid_file' });
    expect(refusal!.message).toContain(message);
  });

  it('refuses a line longer than the largest body without holding more of it', async () => {
    const text = `${line(1, chat({ pad: 'x'.repeat(5000) }))}\n`;
    for (const size of [100, 100_000]) {
      const { refusal } = await run(text, size);
      expect(refusal!.message).toContain('Line 1 of the file exceeds 4096 bytes');
    }
  });
});
