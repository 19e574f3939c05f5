import { describe, expect, it } from 'vitest';
import { CLIENT_LEFT } from '../errors';
import type { Endpoint } from '../providers/types';
import { readBody } from './read-body';
import { callFor } from './test-support';

const read = (body: Record<string, unknown>, endpoint: Endpoint = 'chat') => {
  const c = callFor({ endpoint });
  return { v: readBody(c, { ok: true, raw: Buffer.from(JSON.stringify(body)), value: body }), c };
};

describe('read body', () => {
  it('keeps the model and whether the proxy adds stream usage itself', () => {
    let { v, c } = read({ model: 'gpt-4o', stream: true });
    expect(v).toBeNull();
    expect([c.requestedModel, c.stream, c.injectUsage]).toEqual(['gpt-4o', true, true]);
    ({ v, c } = read({ model: 'gpt-4o', stream: true, stream_options: { include_usage: true } }));
    expect([v, c.stream, c.injectUsage]).toEqual([null, true, false]);
    ({ v, c } = read({ model: 'gpt-4o', stream: null, stream_options: null }));
    expect([v, c.stream, c.injectUsage]).toEqual([null, false, false]);
    ({ v, c } = read({ model: 'claude-haiku-4-5', stream: true, max_tokens: 64, messages: [] }, 'messages'));
    expect([v, c.stream, c.injectUsage]).toEqual([null, true, false]);
    ({ c } = read({ model: 'text-embedding-3-small', stream: true }, 'embeddings'));
    expect(c.stream).toBe(false);
  });

  it('passes the intake refusal on, and answers nothing to a client that left', () => {
    const tooLarge = { status: 413, code: 'body_too_large', message: 'Request body exceeds 1024 bytes' };
    expect(readBody(callFor(), { ok: false, refusal: tooLarge })).toBe(tooLarge);
    expect(readBody(callFor(), { ok: false, gone: true })).toBe(CLIENT_LEFT);
  });

  it('refuses a model name that breaks the rule, naming it', () => {
    expect(read({ messages: [] }).v).toMatchObject({ status: 400, code: 'invalid_model', message: 'model: required, a string' });
    expect(read({ model: 7 }).v).toMatchObject({ status: 400, code: 'invalid_model' });
    expect(read({ model: '../../etc/passwd' }).v).toMatchObject({ status: 400, code: 'invalid_model', message: expect.stringContaining('path segment') });
    expect(read({ model: 'gpt\u0000' }, 'messages').v).toMatchObject({ status: 400, code: 'invalid_model' });
  });

  it('refuses stream fields of the wrong type on the routes that read them, naming the field', () => {
    for (const stream of ['true', 1, 0, [], {}, 'yes']) {
      expect(read({ model: 'gpt-4o', stream }).v).toEqual({ status: 400, code: 'invalid_request', message: 'stream: must be a boolean' });
      expect(read({ model: 'claude-haiku-4-5', stream }, 'messages').v).toMatchObject({ message: 'stream: must be a boolean' });
      expect(read({ model: 'o4-mini', stream }, 'responses').v).toMatchObject({ message: 'stream: must be a boolean' });
      // Embeddings never stream: the field is not the proxy's to judge.
      expect(read({ model: 'text-embedding-3-small', stream }, 'embeddings').v).toBeNull();
    }
    for (const so of ['yes', 1, [], true, 'include_usage']) {
      expect(read({ model: 'gpt-4o', stream: true, stream_options: so }).v).toEqual({ status: 400, code: 'invalid_request', message: 'stream_options: must be an object' });
    }
    for (const iu of ['true', 1, {}]) {
      expect(read({ model: 'gpt-4o', stream: true, stream_options: { include_usage: iu } }).v).toMatchObject({ message: 'stream_options.include_usage: must be a boolean' });
    }
  });
  it('refuses a Responses request run in the background, which could not be billed as delivered', () => {
    for (const background of [true, 'true', 1]) {
      expect(read({ model: 'o4-mini', input: 'hi', background }, 'responses').v).toMatchObject({ status: 400, code: 'unsupported_parameter', message: expect.stringContaining('background') });
    }
    for (const background of [false, null]) expect(read({ model: 'o4-mini', input: 'hi', background }, 'responses').v).toBeNull();
    // Another route's `background` is the upstream's business (an image's transparent background).
    expect(read({ model: 'gpt-image-1', prompt: 'a fox', background: 'transparent' }, 'images').v).toBeNull();
  });

  it('refuses a Messages request without its messages or max_tokens, as Anthropic does, whatever key would serve it', () => {
    expect(read({ model: 'claude-haiku-4-5', max_tokens: 64 }, 'messages').v).toMatchObject({ status: 400, message: expect.stringContaining('messages') });
    for (const max_tokens of [undefined, 0, 1.5, '64']) {
      expect(read({ model: 'claude-haiku-4-5', max_tokens, messages: [] }, 'messages').v, String(max_tokens)).toMatchObject({ status: 400, message: expect.stringContaining('max_tokens') });
    }
    // Counting tokens needs messages only.
    expect(read({ model: 'claude-haiku-4-5', messages: [] }, 'count_tokens').v).toBeNull();
  });
});
