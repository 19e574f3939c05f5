import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fittedUserId, fitToModel as fitWith } from './fit-model';
import type { Json } from './types';
import { requestFromChat } from './anthropic';

/** A written body fitted, as if the writer had written it so. */
const fitToModel = (upstream: 'chat' | 'messages', body: Json) => fitWith(upstream, body as any, (req) => ({ ...req }));
import { translation } from './index';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

describe('fitToModel', () => {
  it('hashes an end-user ID the provider would refuse, the same ID to the same hash, and leaves a short one', () => {
    const long = 'x'.repeat(65);
    expect(fittedUserId(long, 64)).toBe(sha(long));
    expect(fittedUserId(long, 64)).toBe(fittedUserId(long, 64));
    expect(fittedUserId('x'.repeat(64), 64)).toBe('x'.repeat(64));
    expect(fitToModel('chat', { model: 'made-up', user: long }).user).toBe(sha(long));
    expect(fitToModel('messages', { model: 'made-up', metadata: { user_id: long } }).metadata.user_id).toBe(long);
    expect(fitToModel('messages', { model: 'made-up', metadata: { user_id: 'y'.repeat(257) } }).metadata.user_id).toBe(sha('y'.repeat(257)));
  });

  it('leaves a model the catalogue does not know as asked', () => {
    const body = { model: 'acme-made-up-1', reasoning_effort: 'high', max_completion_tokens: 1_000_000, temperature: 0.2 };
    expect(fitToModel('chat', { ...body })).toEqual(body);
  });

  it('chat: reasoning only for a model that reasons, max_completion_tokens for OpenAI reasoning models, output at its limit', () => {
    expect(fitToModel('chat', { model: 'gpt-4.1', reasoning_effort: 'high', max_completion_tokens: 40_000, temperature: 0.2 }))
      .toEqual({ model: 'gpt-4.1', max_completion_tokens: 32_768, temperature: 0.2 });
    expect(fitToModel('chat', { model: 'o3', reasoning_effort: 'low', max_tokens: 200_000, temperature: 0.2, top_p: 0.5 }))
      .toEqual({ model: 'o3', reasoning_effort: 'low', max_completion_tokens: 100_000 });
    expect(fitToModel('chat', { model: 'o9-preview', max_tokens: 10 })).toEqual({ model: 'o9-preview', max_completion_tokens: 10 });
    expect(fitToModel('chat', { model: 'made-up', reasoning_effort: 'low', max_tokens: 10 })).toEqual({ model: 'made-up', reasoning_effort: 'low', max_completion_tokens: 10 });
    // Another provider's reasoning model keeps max_tokens, which its API takes.
    expect(fitToModel('chat', { model: 'deepseek-reasoner', max_tokens: 1000 })).toEqual({ model: 'deepseek-reasoner', max_tokens: 1000 });
  });

  it('messages: no thinking for a model without it; a budget that no longer fits under max_tokens shrinks, or goes', () => {
    // Left out before the writer makes it a budget: max_tokens and the temperature stay the client's.
    const messages = [{ role: 'user' as const, content: 'hi' }];
    expect(fitWith('messages', { model: 'claude-3-5-haiku-20241022', messages, reasoning_effort: 'high', max_completion_tokens: 1000, temperature: 0.5 }, requestFromChat))
      .toEqual({ model: 'claude-3-5-haiku-20241022', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], max_tokens: 1000, temperature: 0.5 });
    // claude-opus-4-1 writes at most 32,000 tokens.
    expect(fitToModel('messages', { model: 'claude-opus-4-1', max_tokens: 60_000, thinking: { type: 'enabled', budget_tokens: 40_000 } }))
      .toEqual({ model: 'claude-opus-4-1', max_tokens: 32_000, thinking: { type: 'enabled', budget_tokens: 31_999 } });
    expect(fitToModel('messages', { model: 'claude-3-haiku-20240307', max_tokens: 900, thinking: { type: 'enabled', budget_tokens: 1024 } }))
      .toEqual({ model: 'claude-3-haiku-20240307', max_tokens: 900 });
  });

  it('messages: a forced tool choice goes without thinking, which Anthropic allows only with auto or none', () => {
    const messages = [{ role: 'user' as const, content: 'hi' }];
    const tools = [{ type: 'function' as const, function: { name: 'f', parameters: { type: 'object' } } }];
    for (const tool_choice of ['required', { type: 'function', function: { name: 'f' } }] as const) {
      const body = fitWith('messages', { model: 'claude-opus-4-1', messages, tools, tool_choice, reasoning_effort: 'high', max_completion_tokens: 1000 } as any, requestFromChat);
      expect(body.thinking).toBeUndefined();
      expect(body.tool_choice.type).toMatch(/^(any|tool)$/);
    }
    const auto = fitWith('messages', { model: 'claude-opus-4-1', messages, tools, tool_choice: 'auto', reasoning_effort: 'high', max_completion_tokens: 4000 } as any, requestFromChat);
    expect(auto.thinking).toMatchObject({ type: 'enabled' });
  });

  it('is applied where a translation writes the body, for the model it is written for', () => {
    const t = translation('messages', 'chat')!;
    const doc = { model: 'gpt-4o', max_tokens: 32_000, thinking: { type: 'enabled', budget_tokens: 10_000 }, metadata: { user_id: 'u'.repeat(150) }, messages: [{ role: 'user', content: 'hi' }] };
    const sent = t.request(doc);
    expect(sent).toMatchObject({ model: 'gpt-4o', max_tokens: 16_384, user: sha('u'.repeat(150)) });
    expect(sent).not.toHaveProperty('reasoning_effort');
  });
});
