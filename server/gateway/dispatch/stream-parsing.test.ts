import { describe, expect, it } from 'vitest';
import { SseTap } from './sse';
import { estimateUsage, normalizeUsage, usageFromBody } from './response-usage';

const ev = (o: unknown, event?: string) => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(o)}\n\n`;
const chunk = (content: string) => ({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }], usage: null });
const usageChunk = { id: 'c', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 12, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 4 }, completion_tokens_details: { reasoning_tokens: 1 } } };

describe('SseTap', () => {
  it('passes chunks unchanged and reads the usage chunk when the client asked for it', () => {
    const tap = new SseTap('openai', false);
    const all = ev(chunk('a')) + ev(chunk('b')) + ev(usageChunk) + 'data: [DONE]\n\n';
    const buf = Buffer.from(all);
    // split in awkward places, inside an event and inside the usage object
    const parts = [buf.subarray(0, 7), buf.subarray(7, 80), buf.subarray(80, all.indexOf('prompt_tokens') + 3), buf.subarray(all.indexOf('prompt_tokens') + 3)];
    const out = Buffer.concat(parts.map((p) => tap.push(p)));
    expect(out.toString()).toBe(all);
    expect(tap.usage).toEqual({ prompt: 12, completion: 3, reasoning: 1, cached: 4, cacheWrite: 0 });
    expect(tap.complete).toBe(true);
    expect(tap.events).toBe(4);
  });

  it('drops the usage-only chunk it asked for itself, keeping every other byte in order', () => {
    const tap = new SseTap('openai', true);
    const all = ev(chunk('a')) + ev(chunk('b')) + ev(usageChunk) + 'data: [DONE]\n\n';
    let out = '';
    for (let i = 0; i < all.length; i += 9) out += tap.push(Buffer.from(all.slice(i, i + 9))).toString();
    out += tap.end()?.toString() ?? '';
    expect(out).toBe(ev(chunk('a')) + ev(chunk('b')) + 'data: [DONE]\n\n');
    expect(tap.usage?.prompt).toBe(12);
  });

  it('merges Anthropic usage from message_start and the cumulative message_delta', () => {
    const tap = new SseTap('anthropic', false);
    tap.push(Buffer.from(ev({ type: 'message_start', message: { id: 'm', usage: { input_tokens: 20, cache_read_input_tokens: 100, cache_creation_input_tokens: 5, output_tokens: 1 } } }, 'message_start')));
    expect(tap.complete).toBe(false);
    tap.push(Buffer.from(ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } }, 'content_block_delta')));
    tap.push(Buffer.from(ev({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } }, 'message_delta')));
    expect(tap.usage).toEqual({ prompt: 125, completion: 9, reasoning: 0, cached: 100, cacheWrite: 5 });
    expect(tap.complete).toBe(true);
  });

  it('reads the usage of a Responses stream from response.completed and notices error events', () => {
    const tap = new SseTap('openai', false);
    tap.push(Buffer.from(ev({ type: 'response.created', response: { id: 'r', usage: null } }, 'response.created')));
    expect(tap.usage).toBeNull();
    tap.push(Buffer.from(ev({ type: 'response.completed', response: { id: 'r', usage: { input_tokens: 7, output_tokens: 2, output_tokens_details: { reasoning_tokens: 1 } } } }, 'response.completed')));
    expect(tap.usage).toMatchObject({ prompt: 7, completion: 2, reasoning: 1 });
    tap.push(Buffer.from(ev({ error: { message: 'x' } }, 'error')));
    expect(tap.sawError).toBe(true);
  });
});

describe('usage of whole answers', () => {
  it('reads the usage object without parsing the whole body, also pretty-printed', () => {
    const body = JSON.stringify({ id: 'x', choices: [{ message: { content: 'say "usage": {"prompt_tokens": 999}' } }], usage: { prompt_tokens: 5, completion_tokens: 2 } }, null, 2);
    expect(usageFromBody(Buffer.from(body), 'openai')).toMatchObject({ prompt: 5, completion: 2 });
    expect(usageFromBody(Buffer.from('{"id":"msg","usage":{"input_tokens":3,"output_tokens":4,"cache_read_input_tokens":2}}'), 'anthropic')).toMatchObject({ prompt: 5, completion: 4, cached: 2 });
    expect(usageFromBody(Buffer.from('{"object":"list","data":[],"usage":{"prompt_tokens":8,"total_tokens":8}}'), 'openai')).toMatchObject({ prompt: 8, completion: 0 });
    expect(usageFromBody(Buffer.from('not json'), 'openai')).toBeNull();
    expect(normalizeUsage({ input_tokens: 1, output_tokens: 2, input_tokens_details: { cached_tokens: 1 } }, 'openai')).toMatchObject({ prompt: 1, completion: 2, cached: 1 });
  });

  it('estimates a cut stream from the request size and the delivered events', () => {
    expect(estimateUsage(null, 400, 7)).toEqual({ prompt: 100, completion: 7, reasoning: 0, cached: 0, cacheWrite: 0 });
    expect(estimateUsage({ prompt: 30, completion: 1, reasoning: 0, cached: 0, cacheWrite: 0 }, 400, 7).prompt).toBe(30);
  });
});
