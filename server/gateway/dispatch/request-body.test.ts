import { describe, expect, it } from 'vitest';
import { bodyFor, editedBody } from './request-body';
import type { BodyEdit } from '../providers/types';
import { callFor } from '../stages/test-support';

describe('the body sent upstream', () => {
  it('is the client bytes, untouched, while the model and stream options stay as sent', () => {
    const c = callFor({ body: { model: 'gpt-4o', messages: [] } });
    c.raw = Buffer.from('{ "model" : "gpt-4o", "messages": [] }');
    expect(bodyFor(c, 'gpt-4o')).toBe(c.raw);
  });

  it('is rebuilt for another model, once per model', () => {
    const c = callFor({ body: { model: 'alias', messages: [] } });
    const first = bodyFor(c, 'gpt-4o');
    expect(JSON.parse(first.toString())).toEqual({ model: 'gpt-4o', messages: [] });
    expect(bodyFor(c, 'gpt-4o')).toBe(first);
    expect(JSON.parse(bodyFor(c, 'gpt-4o-mini').toString()).model).toBe('gpt-4o-mini');
  });

  it('asks for stream usage, keeping the client stream options', () => {
    const c = callFor({ body: { model: 'gpt-4o', stream: true, stream_options: { other: 1 } } });
    c.injectUsage = true;
    expect(JSON.parse(bodyFor(c, 'gpt-4o').toString()).stream_options).toEqual({ other: 1, include_usage: true });
  });

  it('is edited on a copy when the upstream asks, once per edit and model, the client request left as it came', () => {
    const c = callFor({ body: { model: 'claude-x', max_tokens: 5 } });
    c.raw = Buffer.from(JSON.stringify(c.doc));
    const noModel: BodyEdit = { id: 'no-model', apply: (doc) => { delete doc.model; doc.v = 1; } };
    const edited = editedBody(c, undefined, 'claude-x', noModel);
    expect(JSON.parse(edited.toString())).toEqual({ max_tokens: 5, v: 1 });
    expect(editedBody(c, undefined, 'claude-x', noModel)).toBe(edited);
    expect(c.doc).toEqual({ model: 'claude-x', max_tokens: 5 });
    // The next key of the call, without an edit, gets the client's bytes again.
    expect(bodyFor(c, 'claude-x')).toBe(c.raw);
  });
});
