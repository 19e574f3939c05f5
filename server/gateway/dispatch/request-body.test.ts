import { describe, expect, it } from 'vitest';
import { upstreamBody } from './request-body';
import { translation } from '../formats/index';
import type { BodyEdit } from '../providers/types';
import { callFor } from '../stages/test-support';

describe('the body sent upstream', () => {
  it('is the client bytes, untouched, while the model and stream options stay as sent', () => {
    const c = callFor({ body: { model: 'gpt-4o', messages: [] } });
    c.raw = Buffer.from('{ "model" : "gpt-4o", "messages": [] }');
    expect(upstreamBody(c, 'gpt-4o')).toBe(c.raw);
  });

  it('is rebuilt for another model, once per model', () => {
    const c = callFor({ body: { model: 'alias', messages: [] } });
    const first = upstreamBody(c, 'gpt-4o');
    expect(JSON.parse(first.toString())).toEqual({ model: 'gpt-4o', messages: [] });
    expect(upstreamBody(c, 'gpt-4o')).toBe(first);
    expect(JSON.parse(upstreamBody(c, 'gpt-4o-mini').toString()).model).toBe('gpt-4o-mini');
  });

  it('asks for stream usage, keeping the client stream options', () => {
    const c = callFor({ body: { model: 'gpt-4o', stream: true, stream_options: { other: 1 } } });
    c.injectUsage = true;
    expect(JSON.parse(upstreamBody(c, 'gpt-4o').toString()).stream_options).toEqual({ other: 1, include_usage: true });
  });

  it('is edited on a copy when the upstream asks, once per edit and model, the client request left as it came', () => {
    const c = callFor({ body: { model: 'claude-x', max_tokens: 5 } });
    c.raw = Buffer.from(JSON.stringify(c.doc));
    const noModel: BodyEdit = { id: 'no-model', apply: (doc) => { delete doc.model; doc.v = 1; } };
    const edited = upstreamBody(c, 'claude-x', undefined, noModel);
    expect(JSON.parse(edited.toString())).toEqual({ max_tokens: 5, v: 1 });
    expect(upstreamBody(c, 'claude-x', undefined, noModel)).toBe(edited);
    expect(c.doc).toEqual({ model: 'claude-x', max_tokens: 5 });
    // The next key of the call, without an edit, gets the client's bytes again.
    expect(upstreamBody(c, 'claude-x')).toBe(c.raw);
  });

  it('leaves the gateway\'s reasoning items out of a Responses call for a key with the Responses API, and in for a translation', () => {
    const ours = { type: 'reasoning', id: 'rs_gw_0a1b', summary: [], content: [{ type: 'reasoning_text', text: 'Plan' }], encrypted_content: 'rs_gw_sig_1' };
    const call = { type: 'function_call', call_id: 'toolu_1', name: 'shell', arguments: '{}' };
    const input = [{ role: 'user', content: 'go' }, ours, call, { type: 'function_call_output', call_id: 'toolu_1', output: 'ok' }];
    const c = callFor({ endpoint: 'responses', path: '/v1/responses', body: { model: 'gpt-x', input } });
    expect(JSON.parse(upstreamBody(c, 'gpt-x').toString()).input).toEqual([input[0], call, input[3]]);
    expect(c.doc.input).toEqual(input);
    const anthropic = JSON.parse(upstreamBody(c, 'claude-x', translation('responses', 'messages')!).toString());
    expect(anthropic.messages[1].content[0]).toEqual({ type: 'thinking', thinking: 'Plan', signature: 'sig_1' });
    // Without the prefix in its bytes, the call's own bytes go.
    const plain = callFor({ endpoint: 'responses', path: '/v1/responses', body: { model: 'gpt-x', input: 'hi' } });
    expect(upstreamBody(plain, 'gpt-x')).toBe(plain.raw);
  });
});
