import { describe, expect, it } from 'vitest';
import { converseRequest, converseResponse } from './converse';
import { converseProblem } from '../../testing/mock-upstream/bedrock-converse';
import { translation } from './index';
import { Untranslatable, type ChatRequest } from './types';

const tool = { type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } };

describe('the canonical request as a Converse body', () => {
  it('merges a tool result and the next user words into one user turn, which the strict mock takes', () => {
    const req: ChatRequest = {
      model: 'amazon.nova-lite-v1:0', tools: [tool],
      messages: [
        { role: 'system', content: 'S' }, { role: 'user', content: 'a' },
        { role: 'assistant', content: 'calling', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'r' }, { role: 'user', content: 'b' },
      ],
    };
    const body = converseRequest(req);
    expect(body.messages).toEqual([
      { role: 'user', content: [{ text: 'a' }] },
      { role: 'assistant', content: [{ text: 'calling' }, { toolUse: { toolUseId: 'call_1', name: 'f', input: { x: 1 } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'call_1', content: [{ text: 'r' }] } }, { text: 'b' }] },
    ]);
    expect(body).not.toHaveProperty('model');
    expect(converseProblem(body)).toBeNull();
  });

  it('makes another provider\'s tool call IDs Converse\'s, the call and its result alike', () => {
    const long = `call_1__thought__${'x'.repeat(80)}`;
    const body = converseRequest({
      model: 'm', tools: [tool],
      messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: null, tool_calls: [{ id: long, type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: long, content: 'r' }],
    });
    const id = body.messages[1].content[0].toolUse.toolUseId;
    expect(id).toMatch(/^tooluse_[A-Za-z0-9_-]{43}$/);
    expect(body.messages[2].content[0].toolResult.toolUseId).toBe(id);
    expect(converseProblem(body)).toBeNull();
  });

  it('keeps the tools for tool_choice none only when the conversation holds tool blocks (Bedrock requires them then)', () => {
    const plain = converseRequest({ model: 'm', tools: [tool], tool_choice: 'none', messages: [{ role: 'user', content: 'a' }] });
    expect(plain.toolConfig).toBeUndefined();
    const history = converseRequest({
      model: 'm', tools: [tool], tool_choice: 'none',
      messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'c', content: 'r' }],
    });
    expect(history.toolConfig).toEqual({ tools: [{ toolSpec: { name: 'f', inputSchema: { json: tool.function.parameters } } }] });
    expect(converseProblem(history)).toBeNull();
    expect(converseRequest({ model: 'm', tools: [tool], tool_choice: 'required', messages: [{ role: 'user', content: 'a' }] }).toolConfig.toolChoice).toEqual({ any: {} });
    expect(converseRequest({ model: 'm', tools: [tool], tool_choice: { type: 'function', function: { name: 'f' } }, messages: [{ role: 'user', content: 'a' }] }).toolConfig.toolChoice).toEqual({ tool: { name: 'f' } });
  });

  it('asks gpt-oss and Nova 2 for reasoning in their own fields, and no other model', () => {
    const ask = (model: string) => converseRequest({ model, reasoning_effort: 'high', messages: [{ role: 'user', content: 'a' }] }).additionalModelRequestFields;
    expect(ask('openai.gpt-oss-120b-1:0')).toEqual({ reasoning_effort: 'high' });
    expect(ask('us.amazon.nova-2-lite-v1:0')).toEqual({ reasoningConfig: { type: 'enabled', maxReasoningEffort: 'high' } });
    expect(ask('meta.llama3-1-70b-instruct-v1:0')).toBeUndefined();
  });

  it('sends images and documents as bytes, a JSON schema as outputConfig, and clamps the temperature to Converse\'s 0–1', () => {
    const body = converseRequest({
      model: 'm', temperature: 1.6, response_format: { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' } } },
      messages: [{ role: 'user', content: [{ type: 'text', text: 'read' }, { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=' } }, { type: 'image_url', image_url: { url: 'data:image/webp;base64,UklGRg==' } }] }],
    });
    expect(body.messages[0].content).toEqual([
      { text: 'read' }, { document: { format: 'pdf', name: 'document 1', source: { bytes: 'JVBERi0=' } } }, { image: { format: 'webp', source: { bytes: 'UklGRg==' } } },
    ]);
    expect(body.inferenceConfig).toEqual({ temperature: 1 });
    expect(body.outputConfig).toEqual({ textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: '{"type":"object"}', name: 'out' } } } });
    expect(converseProblem(body)).toBeNull();
  });

  it('refuses what Converse cannot say rather than dropping it', () => {
    for (const extra of [{ n: 2 }, { logprobs: true }, { presence_penalty: 0.5 }, { response_format: { type: 'json_object' } }]) {
      expect(() => converseRequest({ model: 'm', messages: [{ role: 'user', content: 'a' }], ...extra })).toThrow(Untranslatable);
    }
    expect(() => converseRequest({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }] })).toThrow(/bytes/);
  });
});

describe('a Converse answer', () => {
  it('reads text, reasoning and tool uses, the stop reason faithfully, and the usage with the cache', () => {
    const res = converseResponse({
      output: { message: { role: 'assistant', content: [{ reasoningContent: { reasoningText: { text: 'hm', signature: 's' } } }, { text: 'Hi' }, { toolUse: { toolUseId: 't1', name: 'f', input: { a: 1 } } }] } },
      stopReason: 'guardrail_intervened',
      usage: { inputTokens: 5, outputTokens: 3, totalTokens: 18, cacheReadInputTokens: 6, cacheWriteInputTokens: 4 },
    });
    expect(res.choices[0]).toMatchObject({
      finish_reason: 'content_filter',
      message: { content: 'Hi', reasoning_content: 'hm', thinking_blocks: [{ type: 'thinking', thinking: 'hm', signature: 's' }], tool_calls: [{ id: 't1', function: { name: 'f', arguments: '{"a":1}' } }] },
    });
    expect(res.usage).toMatchObject({ prompt_tokens: 15, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 6, cache_write_tokens: 4 } });
    expect(converseResponse({ output: { message: { content: [{ text: 'cut' }] } }, stopReason: 'max_tokens', usage: {} }).choices[0].finish_reason).toBe('length');
  });

  it('is written in the client\'s format with the model the client asked for', () => {
    const body = Buffer.from(JSON.stringify({ output: { message: { role: 'assistant', content: [{ text: 'Hi' }] } }, stopReason: 'max_tokens', usage: { inputTokens: 2, outputTokens: 1, totalTokens: 3 } }));
    const msg = JSON.parse(translation('messages', 'converse')!.response(body, { includeUsage: false, request: { model: 'nova' } }).toString());
    expect(msg).toMatchObject({ model: 'nova', stop_reason: 'max_tokens', content: [{ type: 'text', text: 'Hi' }], usage: { input_tokens: 2, output_tokens: 1 } });
  });
});
