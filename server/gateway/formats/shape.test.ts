import { describe, expect, it } from 'vitest';
import { checkShape, MalformedRequest } from './shape';
import { translation, Untranslatable } from './index';

const refusal = (client: 'chat' | 'messages' | 'responses', doc: Record<string, unknown>): string | null => {
  try {
    checkShape(client, doc);
    return null;
  } catch (err) {
    expect(err).toBeInstanceOf(MalformedRequest);
    return (err as Error).message;
  }
};

describe('the shapes the translators read', () => {
  it('names the JSON path of what is wrong, down to a list element', () => {
    expect(refusal('messages', { messages: [null] })).toBe('messages.0: expected an object, got null');
    expect(refusal('messages', { messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, null] }] })).toBe('messages.0.content.1: expected an object, got null');
    expect(refusal('messages', { messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: ['x'] }] }] })).toBe('messages.0.content.0.content.0: expected an object, got "x"');
    expect(refusal('messages', { messages: [{ role: 'tool', content: 'x' }] })).toBe('messages.0.role: expected "user" or "assistant" or "system", got "tool"');
    expect(refusal('messages', { messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 't', input: {} }] }] })).toBe('messages.0.content.0.name: required (a string)');
    expect(refusal('messages', { messages: [], tools: [{ input_schema: {} }] })).toBe('tools.0.name: required (a string)');
    expect(refusal('chat', { messages: [{ role: 'user', content: 5 }] })).toBe('messages.0.content: expected a string or an array of content parts');
    expect(refusal('chat', { messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 1 } }] }] })).toBe('messages.0.tool_calls.0.function.name: expected a string, got 1');
    expect(refusal('chat', { messages: [], tools: [null] })).toBe('tools.0: expected an object, got null');
    expect(refusal('chat', { messages: [{ role: 'assistant', tool_calls: [{ id: 'c' }] }] })).toBe('messages.0.tool_calls.0.function: required (an object)');
    expect(refusal('chat', {})).toBe('messages: required (an array)');
    expect(refusal('responses', { input: [null] })).toBe('input.0: expected an object, got null');
    expect(refusal('responses', { input: [{ content: 'x' }] })).toBe('input.0: expected a "type" or a "role"');
    expect(refusal('responses', { input: [{ type: 'function_call_output', call_id: 'c', output: [null] }] })).toBe('input.0.output.0: expected an object, got null');
    expect(refusal('responses', { input: 'x', tools: [{ type: 'namespace', name: 'ns', tools: [{ type: 'function' }] }] })).toBe('tools.0.tools.0.name: required (a string)');
  });

  it('lets through what each format allows, including what a converter then refuses as untranslatable', () => {
    expect(refusal('messages', {
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: 's' }, { type: 'tool_use', id: 't1', name: 'f', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1' }, { type: 'server_tool_use', id: 's1', name: 'web_search', input: {} }] },
      ],
      tools: [{ name: 'f', input_schema: { type: 'object' } }, { type: 'web_search_20250305', name: 'web_search' }, { type: 'mcp_toolset', mcp_server_name: 'm' }],
      tool_choice: { type: 'auto' },
    })).toBeNull();
    expect(refusal('chat', {
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'input_audio', input_audio: {} }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', function: { name: 'f', arguments: '{}' } }, { id: 'd', type: 'custom', custom: { name: 'g', input: 'x' } }] },
        { role: 'tool', tool_call_id: 'c', content: 'ok' },
      ],
      tools: [{ type: 'function', function: { name: 'f' } }, { type: 'custom', custom: { name: 'g' } }],
      stop: 'END',
      response_format: { type: 'json_object' },
    })).toBeNull();
    expect(refusal('responses', {
      input: [
        { role: 'user', content: 'hi' },
        { type: 'item_reference', id: 'msg_1' },
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c', output: 'ok' },
      ],
      tools: [{ type: 'function', name: 'f' }, { type: 'web_search' }, { type: 'namespace', name: 'ns', tools: [{ type: 'function', name: 'g' }] }],
    })).toBeNull();
    expect(refusal('responses', { input: 'hi' })).toBeNull();
  });

  it('is checked before translating, as a MalformedRequest, not an Untranslatable', () => {
    const t = translation('messages', 'chat')!;
    expect(() => t.request({ model: 'm', max_tokens: 10, messages: [null] })).toThrow(MalformedRequest);
    expect(() => t.request({ model: 'm', max_tokens: 10, messages: [null] })).not.toThrow(Untranslatable);
    // A custom tool call has no Anthropic equivalent: the key is skipped, the body is not malformed.
    const custom = { model: 'm', messages: [{ role: 'assistant', tool_calls: [{ id: 'd', type: 'custom', custom: { name: 'g', input: 'x' } }] }] };
    expect(() => translation('chat', 'messages')!.request(custom)).toThrow(Untranslatable);
  });
});
