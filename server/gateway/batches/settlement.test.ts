import { describe, expect, it } from 'vitest';
import { billOf, lineUsage } from './settlement';
import { linesOf } from './upstream';
import { batchPrice } from '../../domain/pricing/batch-price';
import { costOf, resolvePrice } from '../../domain/pricing/cost';

async function* chunks(...parts: string[]): AsyncGenerator<Buffer> {
  for (const p of parts) yield Buffer.from(p);
}

const openaiLine = (status: number, usage: unknown) => JSON.stringify({ id: 'batch_req_1', custom_id: 'a', response: { status_code: status, request_id: 'r', body: { usage } }, error: null });

describe('a batch output read line by line', () => {
  it('splits lines across pieces, multi-byte characters included, with or without a last newline', async () => {
    const out: string[] = [];
    for await (const l of linesOf(chunks('{"a":"é', '"}\n\n{"b":', '2}'))) out.push(l);
    expect(out).toEqual(['{"a":"é"}', '{"b":2}']);
    const split = Buffer.from('{"c":"€"}\n');
    const pieces: Buffer[] = [split.subarray(0, 7), split.subarray(7)];
    const again: string[] = [];
    for await (const l of linesOf((async function* () { yield* pieces; })())) again.push(l);
    expect(again).toEqual(['{"c":"€"}']);
  });

  it('bills succeeded lines only: OpenAI 2xx responses, Anthropic `succeeded` results, nothing for errors or lines that are not JSON', async () => {
    expect(lineUsage('openai', openaiLine(200, { prompt_tokens: 10, completion_tokens: 5 }))).toMatchObject({ prompt: 10, completion: 5 });
    expect(lineUsage('openai', openaiLine(500, { prompt_tokens: 10, completion_tokens: 5 }))).toBeNull();
    expect(lineUsage('openai', 'not json')).toBeNull();
    expect(lineUsage('anthropic', JSON.stringify({ custom_id: 'a', result: { type: 'succeeded', message: { usage: { input_tokens: 7, cache_read_input_tokens: 3, output_tokens: 2 } } } })))
      .toMatchObject({ prompt: 10, cached: 3, completion: 2 });
    expect(lineUsage('anthropic', JSON.stringify({ custom_id: 'a', result: { type: 'errored', error: {} } }))).toBeNull();
    expect(lineUsage('anthropic', JSON.stringify({ custom_id: 'a', result: { type: 'canceled' } }))).toBeNull();
  });

  it('prices every token class at half its own price, summed line by line', async () => {
    const price = resolvePrice('x-model', { ChatPricing: { 'x-model': { InputText: 2, CachedText: 1, OutputText: 8, ReasonText: 10 } } });
    const half = batchPrice(price);
    expect([half.InputText, half.CachedText, half.OutputText, half.ReasonText]).toEqual([1, 0.5, 4, 5]);
    const lines = [
      openaiLine(200, { prompt_tokens: 100, completion_tokens: 50, prompt_tokens_details: { cached_tokens: 40 }, completion_tokens_details: { reasoning_tokens: 20 } }),
      openaiLine(200, { prompt_tokens: 10, completion_tokens: 1 }),
      openaiLine(429, { prompt_tokens: 1000, completion_tokens: 1000 }),
    ];
    const bill = await billOf('openai', chunks(`${lines.join('\n')}\n`), (u) => costOf(u, half, 1, 1));
    expect(bill).toMatchObject({ lines: 2, prompt: 110, completion: 51, reasoning: 20, cached: 40 });
    // (60·2 + 40·1 + 30·8 + 20·10 + 10·2 + 1·8) / 1e6 / 2
    expect(bill.cost).toBeCloseTo((60 * 2 + 40 * 1 + 30 * 8 + 20 * 10 + 10 * 2 + 1 * 8) / 1e6 / 2, 15);
  });
});
