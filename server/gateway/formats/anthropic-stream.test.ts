import { describe, expect, it } from 'vitest';
import { AnthropicEncoder } from './anthropic-stream';
import type { ChatChunk, ClientContext } from './types';

const chunk = (fields: Partial<ChatChunk> = {}): ChatChunk => ({
  id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }], ...fields,
});
const ctx = (estimate?: number): ClientContext => ({ includeUsage: false, request: {}, ...(estimate === undefined ? {} : { estimateInput: () => estimate }) });
const events = (e: AnthropicEncoder, items: ChatChunk[]) => [...items.flatMap((i) => e.push(i)), ...e.end()].map((x) => JSON.parse(x.data));

describe('AnthropicEncoder usage', () => {
  it("message_start carries the gateway's estimate; message_delta the provider's counts", () => {
    const usage = { prompt_tokens: 120, completion_tokens: 7, total_tokens: 127, prompt_tokens_details: { cached_tokens: 20 } };
    const out = events(new AnthropicEncoder(ctx(300)), [chunk(), chunk({ choices: [], usage })]);
    expect(out[0].message.usage).toEqual({ input_tokens: 300, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 });
    expect(out.find((e) => e.type === 'message_delta').usage).toEqual({ input_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 20, output_tokens: 7 });
  });

  it("takes the provider's count at the start when its first chunk has one", () => {
    const usage = { prompt_tokens: 50, completion_tokens: 0, total_tokens: 50 };
    expect(events(new AnthropicEncoder(ctx(300)), [chunk({ usage })])[0].message.usage).toMatchObject({ input_tokens: 50, output_tokens: 0 });
  });

  it('without usage from the provider, message_delta leaves the estimate standing', () => {
    const out = events(new AnthropicEncoder(ctx(300)), [chunk()]);
    expect(out.find((e) => e.type === 'message_delta').usage).toEqual({ output_tokens: 0 });
    expect(events(new AnthropicEncoder(), [chunk()])[0].message.usage.input_tokens).toBe(0);
  });
});
