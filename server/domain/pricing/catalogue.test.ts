import { afterEach, describe, expect, it, vi } from 'vitest';
import { catalogueModel, cataloguedModelNames } from './catalogue';
import { resolvePrice } from './cost';

afterEach(() => { vi.unstubAllGlobals(); });

describe('model catalogue', () => {
  it('finds models by provider, by dated variant, by provider prefix and in any letter case', () => {
    expect(catalogueModel('gpt-4o-mini-2024-07-18')).toMatchObject({ provider: 'openai', id: 'gpt-4o-mini', outputLimit: 16_384, price: { InputText: 0.15, OutputText: 0.6 } });
    expect(catalogueModel('claude-sonnet-4-5-20250929')).toMatchObject({ provider: 'anthropic', contextLimit: 200_000, price: { InputText: 3, CacheWrite: 3.75, CachedText: 0.3, OutputText: 15 } });
    expect(catalogueModel('llama-3.3-70b-versatile')).toMatchObject({ provider: 'groq', outputLimit: 32_768 });
    expect(catalogueModel('groq/llama-3.3-70b-versatile')?.provider).toBe('groq');
    expect(catalogueModel('openai/gpt-4o')?.id).toBe('gpt-4o');
    expect(catalogueModel('GPT-4o')?.id).toBe('gpt-4o');
    expect(catalogueModel('deepseek-chat')?.provider).toBe('deepseek');
    expect(catalogueModel('mistral-large-latest')?.provider).toBe('mistral');
    expect(catalogueModel('text-embedding-3-small')?.price.InputText).toBe(0.02);
    for (const made of ['acme-made-up-1', 'gpt-made-up', 'claude-made-up', 'nobody/gpt-4o-ish']) expect(catalogueModel(made), made).toBeNull();
  });

  it('keeps long-context tiers and the audio units where the catalogue has them', () => {
    expect(catalogueModel('gemini-2.5-pro')?.price.Tiers).toEqual([{ above: 200_000, prices: expect.objectContaining({ InputText: 2.5, OutputText: 15 }) }]);
    expect(resolvePrice('gpt-realtime', {})).toMatchObject({ InputAudio: 32, OutputAudio: 64, InputText: 4 });
    // PRICING overrides field by field, at every input length.
    const own = resolvePrice('gemini-2.5-pro', { ChatPricing: { 'gemini-2.5-pro': { OutputText: 12 } } });
    expect(own.OutputText).toBe(12);
    expect(own.tiers[0].price).toMatchObject({ InputText: 2.5, OutputText: 12 });
  });

  it('answers from the bundled data without reaching the network', () => {
    const fetch = vi.fn(() => { throw new Error('no network'); });
    vi.stubGlobal('fetch', fetch);
    for (const m of ['claude-opus-4-1-20250805', 'grok-4', 'gemini-2.5-flash-lite', 'kimi-k2-0905-preview', 'not-a-model-at-all']) catalogueModel(m);
    expect(cataloguedModelNames().length).toBeGreaterThan(150);
    expect(fetch).not.toHaveBeenCalled();
  });

  it('lists names clients can send, each priced', () => {
    const names = cataloguedModelNames();
    for (const m of ['gpt-4o-mini', 'gpt-5', 'claude-sonnet-4-5', 'gemini-2.5-flash', 'deepseek-chat', 'llama-3.3-70b-versatile', 'mistral-large']) expect(names).toContain(m);
    for (const m of names) {
      expect(m).toMatch(/^[a-z0-9][a-z0-9.-]*$/);
      expect(resolvePrice(m, {}).known).toBe(true);
    }
  });
});
