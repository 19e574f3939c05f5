import { describe, expect, it } from 'vitest';
import { costOf } from './cost';
import { parseUnpricedPolicy, formatUnpricedPolicy, policyPrice, REFUSE_UNPRICED } from './unpriced-policy';

describe('UNPRICED_MODEL_POLICY', () => {
  it('reads refuse (also empty) and bill:<input>,<output>, and refuses anything else or a free fallback', () => {
    expect(parseUnpricedPolicy('')).toEqual(REFUSE_UNPRICED);
    expect(parseUnpricedPolicy(' refuse ')).toEqual(REFUSE_UNPRICED);
    expect(parseUnpricedPolicy('bill:10, 30')).toEqual({ kind: 'bill', inputText: 10, outputText: 30 });
    expect(formatUnpricedPolicy(parseUnpricedPolicy('bill:0.5,2'))).toBe('bill:0.5,2');
    for (const bad of ['allow', 'bill:10', 'bill:-1,2', 'bill:a,b', 'bill:1,2,3']) expect(() => parseUnpricedPolicy(bad)).toThrow(/refuse.*bill/);
    expect(() => parseUnpricedPolicy('bill:0,0')).toThrow(/for free/);
  });

  it('bills an unknown model at the fallback, a known one at its own price', () => {
    const bill = parseUnpricedPolicy('bill:10,30');
    const usage = { prompt: 1000, completion: 500, reasoning: 0, cached: 0, cacheWrite: 0 };
    expect(costOf(usage, policyPrice('house-model-7', {}, bill), 1, 1)).toBeCloseTo((1000 * 10 + 500 * 30) / 1e6, 12);
    expect(costOf(usage, policyPrice('house-model-7', {}, REFUSE_UNPRICED), 1, 1)).toBe(0);
    expect(policyPrice('gpt-4o', {}, bill)).toMatchObject({ InputText: 2.5, known: true });
  });
});
