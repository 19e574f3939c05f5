import { describe, expect, it } from 'vitest';
import { resolvePrice, costOf } from './cost';
import {
  affordableOutput, estimateInputTokens, maxCostOf, maxOutputTokens, modelLimits, parseOutputLimit,
  DEFAULT_OUTPUT_LIMIT, FILE_REFERENCE_TOKENS, IMAGE_TOKENS, IMAGE_TOKENS_GPT_4O_MINI, TOOLS_TOKENS,
} from './estimate';

const bytes = (doc: unknown) => Buffer.byteLength(JSON.stringify(doc));
const user = (content: unknown) => ({ model: 'gpt-4o', messages: [{ role: 'user', content }] });

describe('input bound', () => {
  it('counts the request\'s UTF-8 bytes, so every script is covered: 3,000 Chinese characters are at least 9,000 tokens', () => {
    const chinese = '我们今天讨论一下这个问题的解决方案'.repeat(200).slice(0, 3000);
    const doc = user(chinese);
    expect(estimateInputTokens(doc)).toBe(bytes(doc));
    expect(estimateInputTokens(doc)).toBeGreaterThanOrEqual(9000);
    // The bytes the client sent are what counts (escapes only make them more).
    const raw = Buffer.from(JSON.stringify(doc, null, 1));
    expect(estimateInputTokens(doc, raw)).toBe(raw.length);
    // A long run without spaces is text, not a payload.
    const noSpaces = 'ไทยไม่มีช่องว่างระหว่างคำ'.repeat(400);
    expect(estimateInputTokens(user(noSpaces))).toBe(bytes(user(noSpaces)));
    const emoji = '🙂'.repeat(2000);
    expect(estimateInputTokens(user(emoji))).toBeGreaterThanOrEqual(8000);
  });

  it('charges images by what they can cost, not their bytes, and gpt-4o-mini at its own image size', () => {
    const image = `data:image/png;base64,${'A'.repeat(100_000)}`;
    const chat = user([{ type: 'image_url', image_url: { url: image } }, { type: 'text', text: 'hi' }]);
    const textBytes = bytes(chat) - image.length;
    expect(estimateInputTokens(chat)).toBe(textBytes + IMAGE_TOKENS);
    expect(estimateInputTokens(chat, undefined, 'gpt-4o-mini-2024-07-18')).toBe(textBytes + IMAGE_TOKENS_GPT_4O_MINI);
    const data = 'iVBORw0KGgo'.repeat(3000);
    const claude = { model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data } }] }] };
    expect(estimateInputTokens(claude)).toBe(bytes(claude) - data.length + IMAGE_TOKENS);
    const byUrl = { model: 'gpt-4.1', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://example.test/cat.png' }] }] };
    expect(estimateInputTokens(byUrl)).toBe(bytes(byUrl) + IMAGE_TOKENS);
  });

  it('charges an inline file at its decoded bytes, a file by reference at the context window, tools at their hidden prompt', () => {
    const pdf = `data:application/pdf;base64,${'JVBERi0x'.repeat(5000)}`;
    const inline = { model: 'gpt-4.1', input: [{ role: 'user', content: [{ type: 'input_file', filename: 'a.pdf', file_data: pdf }] }] };
    expect(estimateInputTokens(inline)).toBe(bytes(inline) - pdf.length + Math.ceil(pdf.length * 0.75));
    const ref = user([{ type: 'file', file: { file_id: 'file-abc' } }]);
    expect(estimateInputTokens(ref, undefined, 'gpt-4o', 128_000)).toBe(128_000);
    expect(estimateInputTokens(ref)).toBe(bytes(ref) + FILE_REFERENCE_TOKENS);
    // A plain-text document under `data` is text, counted by its bytes.
    const text = 'Ein Dokument mit Leerzeichen. '.repeat(50);
    const doc = { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: text } }] }] };
    expect(estimateInputTokens(doc)).toBe(bytes(doc));
    const tools = { ...user('hi'), tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }] };
    expect(estimateInputTokens(tools)).toBe(bytes(tools) + TOOLS_TOKENS);
    expect(estimateInputTokens(user('x'.repeat(5000)), undefined, 'm', 1000)).toBe(1000);
  });
});

describe('output bound', () => {
  it('takes the request\'s own limit, else the model\'s, times the completions asked for', () => {
    expect(maxOutputTokens({ max_tokens: 50 }, 16_384, false)).toBe(50);
    expect(maxOutputTokens({ max_output_tokens: 70 }, 16_384, false)).toBe(70);
    expect(maxOutputTokens({ generationConfig: { maxOutputTokens: 80 } }, 16_384, false)).toBe(80);
    expect(maxOutputTokens({ max_completion_tokens: 90, max_tokens: 10 }, 16_384, false)).toBe(90);
    expect(maxOutputTokens({ max_tokens: -1 }, 16_384, false)).toBe(16_384);
    expect(maxOutputTokens({ max_tokens: 100, n: 3 }, 16_384, false)).toBe(300);
    expect(maxOutputTokens({ max_tokens: 50 }, 16_384, true)).toBe(0);
  });

  it('knows the models\' output limits from the catalogue, and falls back to the Owner\'s figure within the context window', () => {
    expect(modelLimits('gpt-4o-mini', DEFAULT_OUTPUT_LIMIT)).toEqual({ output: 16_384, context: 128_000 });
    expect(modelLimits('gpt-4o-mini-2024-07-18', DEFAULT_OUTPUT_LIMIT).output).toBe(16_384);
    expect(modelLimits('gpt-4.1', DEFAULT_OUTPUT_LIMIT).output).toBe(32_768);
    expect(modelLimits('gpt-5', DEFAULT_OUTPUT_LIMIT).output).toBe(128_000);
    expect(modelLimits('llama-3.3-70b-versatile', DEFAULT_OUTPUT_LIMIT).output).toBe(32_768);
    expect(modelLimits('house-model', 20_000)).toEqual({ output: 20_000, context: null });
    expect(modelLimits('house-model', DEFAULT_OUTPUT_LIMIT).output).toBe(DEFAULT_OUTPUT_LIMIT);
    const small = modelLimits('deepseek-chat', DEFAULT_OUTPUT_LIMIT);
    expect(small.output).toBeLessThanOrEqual(small.context!);
  });

  it('reads DEFAULT_OUTPUT_LIMIT as a whole number of tokens', () => {
    expect(parseOutputLimit('')).toBe(DEFAULT_OUTPUT_LIMIT);
    expect(parseOutputLimit(' 32768 ')).toBe(32_768);
    for (const bad of ['0', '-5', '1.5', 'lots', '99999999']) expect(() => parseOutputLimit(bad)).toThrow(/DEFAULT_OUTPUT_LIMIT/);
  });
});

describe('maximum cost', () => {
  it('never costs less than the actual usage of those tokens', () => {
    const price = resolvePrice('claude-sonnet-4-5', {});
    const max = maxCostOf(1000, 200, price, 2, 1.5);
    const actual = costOf({ prompt: 1000, completion: 200, reasoning: 50, cached: 300, cacheWrite: 400 }, price, 2, 1.5);
    expect(max).toBeGreaterThanOrEqual(actual);
    // Input at the one-hour cache write's price (6, twice the input's), the dearest input class.
    expect(max).toBeCloseTo(((1000 * 6 + 200 * 15) / 1e6) * 3, 12);
    expect(max).toBeCloseTo(costOf({ prompt: 1000, completion: 200, reasoning: 0, cached: 0, cacheWrite: 1000, cacheWrite1h: 1000 }, price, 2, 1.5), 12);
    // Audio in and out at gpt-audio's audio prices (32, 64), not its text ones (2.5, 10).
    const audio = resolvePrice('gpt-audio', {});
    expect(maxCostOf(100, 100, audio, 1, 1)).toBeCloseTo(costOf({ prompt: 100, completion: 100, reasoning: 0, cached: 0, cacheWrite: 0, audioIn: 100, audioOut: 100 }, audio, 1, 1), 12);
    expect(maxCostOf(100, 100, audio, 1, 1)).toBeCloseTo((100 * 32 + 100 * 64) / 1e6, 12);
    expect(maxCostOf(1000, 200, resolvePrice('unknown-model', {}), 1, 1)).toBe(0);
  });

  it('reserves at the long-context price when the input may pass the threshold, and bills by the input actually sent', () => {
    const price = resolvePrice('gemini-2.5-pro', {});
    expect(maxCostOf(300_000, 0, price, 1, 1)).toBeCloseTo(300_000 * 2.5 / 1e6, 12);
    expect(maxCostOf(100_000, 0, price, 1, 1)).toBeCloseTo(100_000 * 1.25 / 1e6, 12);
    expect(costOf({ prompt: 250_000, completion: 1000, reasoning: 0, cached: 0, cacheWrite: 0 }, price, 1, 1)).toBeCloseTo((250_000 * 2.5 + 1000 * 15) / 1e6, 12);
    expect(costOf({ prompt: 150_000, completion: 1000, reasoning: 0, cached: 0, cacheWrite: 0 }, price, 1, 1)).toBeCloseTo((150_000 * 1.25 + 1000 * 10) / 1e6, 12);
  });

  it('finds the largest output limit a budget can hold', () => {
    const price = resolvePrice('gpt-4o-mini', {});
    const fits = affordableOutput(0.01, 1000, price, 1, 1);
    expect(maxCostOf(1000, fits, price, 1, 1)).toBeLessThanOrEqual(0.01);
    expect(maxCostOf(1000, fits + 1, price, 1, 1)).toBeGreaterThan(0.01);
    expect(affordableOutput(0.0001, 1000, price, 1, 1)).toBe(0);
  });
});
