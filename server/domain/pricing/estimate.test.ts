import { describe, expect, it } from 'vitest';
import { resolvePrice, costOf } from './cost';
import { estimateInputTokens, maxCostOf, maxOutputTokens, BINARY_PART_TOKENS, DEFAULT_OUTPUT_TOKENS, DEFAULT_REASONING_OUTPUT_TOKENS } from './estimate';

describe('reservation estimates', () => {
  it('counts text characters ÷ 3 and inline images at a fixed size', () => {
    const text = 'x'.repeat(300);
    expect(estimateInputTokens({ model: 'm', messages: [{ role: 'user', content: text }] })).toBe(Math.ceil((1 + 4 + 300) / 3));
    const image = `data:image/png;base64,${'A'.repeat(100_000)}`;
    const doc = { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: image } }, { type: 'text', text: 'hi' }] }] };
    expect(estimateInputTokens(doc)).toBe(Math.ceil((4 + 9 + 4 + 2) / 3) + BINARY_PART_TOKENS);
  });

  it('takes the output limit the request sets, else a default per model', () => {
    expect(maxOutputTokens({ max_tokens: 50 }, 'gpt-4o', false)).toBe(50);
    expect(maxOutputTokens({ max_output_tokens: 70 }, 'gpt-4o', false)).toBe(70);
    expect(maxOutputTokens({ max_completion_tokens: 90, max_tokens: 10 }, 'gpt-4o', false)).toBe(90);
    expect(maxOutputTokens({ max_tokens: -1 }, 'gpt-4o', false)).toBe(DEFAULT_OUTPUT_TOKENS);
    expect(maxOutputTokens({}, 'o3-mini', false)).toBe(DEFAULT_REASONING_OUTPUT_TOKENS);
    expect(maxOutputTokens({}, 'openai/gpt-5-mini', false)).toBe(DEFAULT_REASONING_OUTPUT_TOKENS);
    expect(maxOutputTokens({ max_tokens: 50 }, 'text-embedding-3-small', true)).toBe(0);
  });

  it('never costs less than the actual usage of those tokens', () => {
    const price = resolvePrice('claude-sonnet-4-5', {});
    const max = maxCostOf(1000, 200, price, 2, 1.5);
    const actual = costOf({ prompt: 1000, completion: 200, reasoning: 50, cached: 300, cacheWrite: 400 }, price, 2, 1.5);
    expect(max).toBeGreaterThanOrEqual(actual);
    expect(max).toBeCloseTo(((1000 * 3.75 + 200 * 15) / 1e6) * 3, 12);
    expect(maxCostOf(1000, 200, resolvePrice('unknown-model', {}), 1, 1)).toBe(0);
  });
});
