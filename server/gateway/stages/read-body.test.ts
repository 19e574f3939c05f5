import { describe, expect, it } from 'vitest';
import { takeFields } from './read-body';
import { callFor } from './test-call';

const take = (body: Record<string, unknown>, endpoint: 'chat' | 'embeddings' | 'messages' = 'chat') => {
  const c = callFor({ endpoint });
  return { v: takeFields(c, Buffer.from(JSON.stringify(body)), body), c };
};

describe('read body', () => {
  it('keeps the model and whether the proxy adds stream usage itself', () => {
    let { v, c } = take({ model: 'gpt-4o', stream: true });
    expect(v).toBeNull();
    expect([c.requestedModel, c.stream, c.injectUsage]).toEqual(['gpt-4o', true, true]);
    ({ v, c } = take({ model: 'gpt-4o', stream: true, stream_options: { include_usage: true } }));
    expect([c.stream, c.injectUsage]).toEqual([true, false]);
    ({ c } = take({ model: 'claude-haiku-4-5', stream: true }, 'messages'));
    expect([c.stream, c.injectUsage]).toEqual([true, false]);
    ({ c } = take({ model: 'text-embedding-3-small', stream: true }, 'embeddings'));
    expect(c.stream).toBe(false);
  });

  it('refuses a missing or non-string model', () => {
    expect(take({ messages: [] }).v).toMatchObject({ status: 400, code: 'invalid_model' });
    expect(take({ model: 7 }).v).toMatchObject({ status: 400, code: 'invalid_model' });
    expect(take({ model: '' }).v).toMatchObject({ status: 400, code: 'invalid_model' });
  });
});
