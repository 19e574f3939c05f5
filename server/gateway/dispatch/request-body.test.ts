import { describe, expect, it } from 'vitest';
import { bodyFor } from './request-body';
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
});
