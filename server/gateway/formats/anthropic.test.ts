import { describe, expect, it } from 'vitest';
import { translation, upstreamEndpoint, Untranslatable } from './index';
import { requestFromChat, requestToChat, responseFromChat, responseToChat } from './anthropic';
import type { ChatResponse } from './types';

/** Replays SSE text through a translator in small pieces, as an upstream's bytes arrive. */
function replay(t: ReturnType<NonNullable<ReturnType<typeof translation>>['stream']>, sse: string, piece = 7): string {
  let out = '';
  for (let i = 0; i < sse.length; i += piece) out += t.push(Buffer.from(sse.slice(i, i + piece))).toString();
  return out + t.end().toString();
}

const events = (text: string) => text.split('\n\n').filter(Boolean).map((block) => {
  const data = block.split('\n').find((l) => l.startsWith('data: '))!.slice(6);
  const event = block.split('\n').find((l) => l.startsWith('event: '))?.slice(7);
  return { event, data: data === '[DONE]' ? data : JSON.parse(data) };
});

const sse = (evs: { event?: string; data: unknown }[]) =>
  evs.map((e) => `${e.event ? `event: ${e.event}\n` : ''}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`).join('');

const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

describe('OpenAI chat request → Anthropic messages', () => {
  it('moves system prompts, merges consecutive tool results into one user turn, and keeps signed thinking', () => {
    const out = requestFromChat({
      model: 'claude-sonnet-4-5',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Use tools.' }] },
        { role: 'user', content: [{ type: 'text', text: 'What is in these?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }, { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } }] },
        {
          role: 'assistant', content: null, reasoning_content: 'I should look.',
          thinking_blocks: [{ type: 'thinking', thinking: 'I should look.', signature: 'sig_1' }],
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'look', arguments: '{"at":"a"}' } },
            { id: 'toolu_2', type: 'function', function: { name: 'look', arguments: '{"at":"b"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: 'a cat' },
        { role: 'tool', tool_call_id: 'toolu_2', content: 'a dog' },
        { role: 'user', content: 'And now?' },
      ],
      max_tokens: 300,
      stop: 'END',
      temperature: 1.6,
      top_p: 0.9,
      tools: [{ type: 'function', function: { name: 'look', description: 'Looks', parameters: { type: 'object', properties: { at: { type: 'string' } } } } }],
      tool_choice: 'required',
      parallel_tool_calls: false,
      user: 'u-1',
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(out).toEqual({
      model: 'claude-sonnet-4-5',
      system: 'Be brief.\n\nUse tools.',
      max_tokens: 300,
      stop_sequences: ['END'],
      temperature: 1,
      top_p: 0.9,
      tools: [{ name: 'look', description: 'Looks', input_schema: { type: 'object', properties: { at: { type: 'string' } } } }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      metadata: { user_id: 'u-1' },
      stream: true,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'What is in these?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }, { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } }] },
        { role: 'assistant', content: [
          { type: 'thinking', thinking: 'I should look.', signature: 'sig_1' },
          { type: 'tool_use', id: 'toolu_1', name: 'look', input: { at: 'a' } },
          { type: 'tool_use', id: 'toolu_2', name: 'look', input: { at: 'b' } },
        ] },
        { role: 'user', content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'a cat' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: 'a dog' },
          { type: 'text', text: 'And now?' },
        ] },
      ],
    });
  });

  it('turns reasoning effort into a thinking budget below max_tokens, the default max_tokens, and structured output', () => {
    const out = requestFromChat({
      model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'medium', temperature: 0.2,
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
    });
    // The default answer (4,096) on top of the budget, which must stay below max_tokens.
    expect(out).toMatchObject({ max_tokens: 8192 + 4096, thinking: { type: 'enabled', budget_tokens: 8192 }, output_config: { format: { type: 'json_schema', schema: { type: 'object' } } } });
    expect(out.temperature).toBeUndefined();
    const small = requestFromChat({ model: 'c', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'high', max_completion_tokens: 1000 });
    expect(small.max_tokens).toBeGreaterThan((small.thinking as { budget_tokens: number }).budget_tokens);
  });

  it('refuses what Anthropic cannot express instead of dropping it', () => {
    const base = { model: 'c', messages: [{ role: 'user' as const, content: 'hi' }] };
    expect(() => requestFromChat({ ...base, n: 2 })).toThrow(Untranslatable);
    expect(() => requestFromChat({ ...base, frequency_penalty: 0.5 })).toThrow(/frequency_penalty/);
    expect(requestFromChat({ ...base, n: 1, logprobs: false, presence_penalty: 0, seed: 7 })).toEqual({ model: 'c', max_tokens: 4096, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });
    expect(() => requestFromChat({ ...base, response_format: { type: 'json_object' } })).toThrow(/json_schema/);
    expect(() => requestFromChat({ ...base, messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }] }] })).toThrow(/input_audio/);
    expect(() => requestFromChat({ ...base, messages: [{ role: 'assistant', tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: 'not json' } }] }] })).toThrow(/not a JSON object/);
  });
});

describe('Anthropic messages request → OpenAI chat', () => {
  it('keeps a system message within the conversation at its place (Claude Code 2.1 sends its environment so)', () => {
    const out = requestToChat({
      model: 'gpt-4o', max_tokens: 20, system: 'Sys',
      messages: [{ role: 'user', content: 'Hi' }, { role: 'system', content: [{ type: 'text', text: '# Environment', cache_control: { type: 'ephemeral' } }] }],
    });
    expect(out.messages).toEqual([{ role: 'system', content: 'Sys' }, { role: 'user', content: 'Hi' }, { role: 'system', content: '# Environment' }]);
  });

  it('splits tool results into tool messages before the user text, and maps thinking, tools and stops', () => {
    const out = requestToChat({
      model: 'gpt-4o', max_tokens: 200, system: [{ type: 'text', text: 'Sys', cache_control: { type: 'ephemeral' } }],
      stop_sequences: ['###'], temperature: 0.5, top_p: 0.8, thinking: { type: 'enabled', budget_tokens: 2048 },
      tools: [{ name: 'get', description: 'Gets', input_schema: { type: 'object' } }], tool_choice: { type: 'tool', name: 'get', disable_parallel_tool_use: true },
      metadata: { user_id: 'u' }, stream: true,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }] },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'hm', signature: 's' }, { type: 'text', text: 'Calling' }, { type: 'tool_use', id: 'toolu_9', name: 'get', input: { q: 1 } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: [{ type: 'text', text: 'result' }] }, { type: 'text', text: 'thanks' }] },
      ],
    });
    expect(out).toEqual({
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'Sys' },
        { role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] },
        { role: 'assistant', content: 'Calling', reasoning_content: 'hm', thinking_blocks: [{ type: 'thinking', thinking: 'hm', signature: 's' }], tool_calls: [{ id: 'toolu_9', type: 'function', function: { name: 'get', arguments: '{"q":1}' } }] },
        { role: 'tool', tool_call_id: 'toolu_9', content: 'result' },
        { role: 'user', content: 'thanks' },
      ],
      reasoning_effort: 'low',
      // max_completion_tokens where the model wants it: fit-model.ts.
      max_tokens: 200,
      stop: ['###'],
      temperature: 0.5,
      top_p: 0.8,
      tools: [{ type: 'function', function: { name: 'get', description: 'Gets', parameters: { type: 'object' } } }],
      tool_choice: { type: 'function', function: { name: 'get' } },
      parallel_tool_calls: false,
      user: 'u',
      stream: true,
    });
  });

  it('reads Anthropic server tools for the rule of tools.ts, and refuses tools no other format has', () => {
    expect(requestToChat({ model: 'm', max_tokens: 5, messages: [], tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 2 }] }).hosted_tools)
      .toEqual([{ name: 'web_search', webSearch: { maxUses: 2 }, refusal: 'an OpenAI-format key has no Anthropic server tool web_search_20250305' }]);
    expect(() => requestToChat({ model: 'm', max_tokens: 5, messages: [], tools: [{ type: 'bash_20250124', name: 'bash' }] })).toThrow(/server tool bash_20250124/);
    expect(() => requestToChat({ model: 'm', max_tokens: 5, messages: [], mcp_servers: [{ type: 'url', url: 'https://mcp.example.com', name: 'x' }] })).toThrow(/mcp_servers/);
  });
});

const anthropicMessage = {
  id: 'msg_01', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5',
  content: [
    { type: 'thinking', thinking: 'Think.', signature: 'sig_x' },
    { type: 'text', text: 'Calling a tool.' },
    { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } },
  ],
  stop_reason: 'tool_use', stop_sequence: null,
  usage: { input_tokens: 100, cache_creation_input_tokens: 300, cache_read_input_tokens: 600, output_tokens: 40 },
};

describe('whole answers', () => {
  it('Anthropic → chat: content, tool calls, thinking with signature, stop reason, usage with cache reads inside prompt_tokens', () => {
    const r = responseToChat(anthropicMessage);
    expect(r.choices[0]).toEqual({
      index: 0, finish_reason: 'tool_calls',
      message: {
        role: 'assistant', content: 'Calling a tool.', reasoning_content: 'Think.',
        thinking_blocks: [{ type: 'thinking', thinking: 'Think.', signature: 'sig_x' }],
        tool_calls: [{ id: 'toolu_01', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
    });
    expect(r.usage).toMatchObject({ prompt_tokens: 1000, completion_tokens: 40, total_tokens: 1040, prompt_tokens_details: { cached_tokens: 600, cache_write_tokens: 300 } });
    expect(responseToChat({ ...anthropicMessage, stop_reason: 'max_tokens' }).choices[0].finish_reason).toBe('length');
    expect(responseToChat({ ...anthropicMessage, stop_reason: 'stop_sequence' }).choices[0].finish_reason).toBe('stop');
  });

  it('chat → Anthropic and back keeps every token class once', () => {
    const chat: ChatResponse = {
      id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o',
      choices: [{ index: 0, finish_reason: 'length', message: { role: 'assistant', content: 'Hi', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] } }],
      usage: { prompt_tokens: 1000, completion_tokens: 50, total_tokens: 1050, prompt_tokens_details: { cached_tokens: 800 }, completion_tokens_details: { reasoning_tokens: 20 } },
    };
    const a = responseFromChat(chat);
    expect(a).toMatchObject({
      type: 'message', role: 'assistant', stop_reason: 'max_tokens',
      content: [{ type: 'text', text: 'Hi' }, { type: 'tool_use', id: 'call_1', name: 'f', input: { a: 1 } }],
      usage: { input_tokens: 200, cache_read_input_tokens: 800, cache_creation_input_tokens: 0, output_tokens: 50 },
    });
    expect(responseToChat(a).usage).toMatchObject({ prompt_tokens: 1000, prompt_tokens_details: { cached_tokens: 800 } });
  });

  it('translates upstream error answers into the client\'s error shape', () => {
    const toOpenAi = translation('chat', 'messages')!;
    const e1 = JSON.parse(toOpenAi.error(400, Buffer.from(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: too big' } }))).toString());
    expect(e1).toEqual({ error: { message: 'max_tokens: too big', type: 'invalid_request_error', code: expect.any(String) } });
    const toAnthropic = translation('messages', 'chat')!;
    const e2 = JSON.parse(toAnthropic.error(404, Buffer.from(JSON.stringify({ error: { message: 'The model does not exist', type: 'invalid_request_error', code: 'model_not_found' } }))).toString());
    expect(e2).toMatchObject({ type: 'error', error: { type: 'not_found_error', message: 'The model does not exist' } });
  });
});

const anthropicStream = sse([
  { event: 'message_start', data: { type: 'message_start', message: { id: 'msg_02', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, cache_creation_input_tokens: 20, cache_read_input_tokens: 70, output_tokens: 1 } } } },
  { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } } },
  { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm' } } },
  { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig_s' } } },
  { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
  { event: 'content_block_start', data: { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } } },
  { event: 'ping', data: { type: 'ping' } },
  { event: 'content_block_delta', data: { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hel' } } },
  { event: 'content_block_delta', data: { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'lo' } } },
  { event: 'content_block_stop', data: { type: 'content_block_stop', index: 1 } },
  { event: 'content_block_start', data: { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_a', name: 'f', input: {} } } },
  { event: 'content_block_delta', data: { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"x":' } } },
  { event: 'content_block_delta', data: { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '1}' } } },
  { event: 'content_block_stop', data: { type: 'content_block_stop', index: 2 } },
  { event: 'content_block_start', data: { type: 'content_block_start', index: 3, content_block: { type: 'tool_use', id: 'toolu_b', name: 'g', input: {} } } },
  { event: 'content_block_delta', data: { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{}' } } },
  { event: 'content_block_stop', data: { type: 'content_block_stop', index: 3 } },
  { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 33 } } },
  { event: 'message_stop', data: { type: 'message_stop' } },
]);

describe('streams', () => {
  it('Anthropic events → chat chunks: one index per tool call, thinking with its signature, usage in the last chunk when asked', () => {
    const t = translation('chat', 'messages')!.stream({ includeUsage: true, request: {} });
    const out = events(replay(t, anthropicStream));
    expect(out.at(-1)!.data).toBe('[DONE]');
    const chunks = out.slice(0, -1).map((e) => e.data);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === 'msg_02')).toBe(true);
    const deltas = chunks.flatMap((c) => c.choices.map((ch: any) => ch.delta));
    expect(deltas.map((d) => d.content ?? '').join('')).toBe('Hello');
    expect(deltas.map((d) => d.reasoning_content ?? '').join('')).toBe('Hmm');
    expect(deltas.flatMap((d) => d.thinking_blocks ?? [])).toEqual([{ type: 'thinking', thinking: 'Hmm', signature: 'sig_s' }]);
    const calls = deltas.flatMap((d) => d.tool_calls ?? []);
    expect(calls.filter((c) => c.id).map((c) => [c.index, c.id, c.function.name])).toEqual([[0, 'toolu_a', 'f'], [1, 'toolu_b', 'g']]);
    expect(calls.filter((c) => c.index === 0).map((c) => c.function.arguments).join('')).toBe('{"x":1}');
    expect(chunks.find((c) => c.choices[0]?.finish_reason)!.choices[0].finish_reason).toBe('tool_calls');
    const last = chunks.at(-1);
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 100, completion_tokens: 33, prompt_tokens_details: { cached_tokens: 70, cache_write_tokens: 20 } });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it('leaves the usage chunk out when the client did not ask for it', () => {
    const t = translation('chat', 'messages')!.stream({ includeUsage: false, request: {} });
    const chunks = events(replay(t, anthropicStream)).slice(0, -1).map((e) => e.data);
    expect(chunks.every((c) => c.choices.length === 1 && !('usage' in c))).toBe(true);
  });

  it('chat chunks → Anthropic events: blocks in turn, message_delta with the stop reason and usage, message_stop', () => {
    const chunk = (delta: object, finish: string | null = null, extra: object = {}) => ({ data: { id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: finish }], usage: null, ...extra } });
    const upstream = sse([
      chunk({ role: 'assistant', content: null, reasoning_content: 'Plan' }),
      chunk({ content: 'Hi' }),
      chunk({ content: ' there' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '2}' } }] }),
      chunk({}, 'tool_calls'),
      { data: { id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [], usage: { prompt_tokens: 500, completion_tokens: 20, total_tokens: 520, prompt_tokens_details: { cached_tokens: 400 } } } },
      { data: '[DONE]' },
    ]);
    const t = translation('messages', 'chat')!.stream({ includeUsage: false, request: {} });
    const out = events(replay(t, upstream, 11));
    expect(out.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start', 'content_block_delta', 'content_block_stop',
      'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop',
      'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop',
      'message_delta', 'message_stop',
    ]);
    expect(out.every((e) => e.data.type === e.event)).toBe(true);
    expect(out[1].data).toMatchObject({ index: 0, content_block: { type: 'thinking' } });
    expect(out[4].data).toMatchObject({ index: 1, content_block: { type: 'text' } });
    expect(out[8].data).toMatchObject({ index: 2, content_block: { type: 'tool_use', id: 'call_1', name: 'f' } });
    expect(out[9].data.delta).toEqual({ type: 'input_json_delta', partial_json: '{"a":' });
    expect(out[12].data).toMatchObject({ delta: { stop_reason: 'tool_use' }, usage: { input_tokens: 100, cache_read_input_tokens: 400, output_tokens: 20 } });
  });

  it('an upstream error event becomes the client format\'s error event', () => {
    const toChat = translation('chat', 'messages')!.stream({ includeUsage: false, request: {} });
    const a = events(replay(toChat, sse([{ event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }])));
    expect(a[0]).toMatchObject({ event: 'error', data: { error: { message: 'Overloaded', type: 'overloaded_error' } } });
    const toAnthropic = translation('messages', 'chat')!.stream({ includeUsage: false, request: {} });
    const b = events(replay(toAnthropic, sse([{ data: { error: { message: 'boom', type: 'server_error' } } }])));
    expect(b[0]).toMatchObject({ event: 'error', data: { type: 'error', error: { type: 'api_error', message: 'boom' } } });
  });
});

describe('which endpoint serves a client call', () => {
  it('is the client\'s own when the key has it, else a translation, else none', () => {
    expect(upstreamEndpoint('chat', new Set(['chat', 'messages']))).toBe('chat');
    expect(upstreamEndpoint('chat', new Set(['messages', 'count_tokens']))).toBe('messages');
    expect(upstreamEndpoint('messages', new Set(['chat', 'embeddings']))).toBe('chat');
    expect(upstreamEndpoint('responses', new Set(['chat']))).toBe('chat');
    expect(upstreamEndpoint('responses', new Set(['messages']))).toBe('messages');
    expect(upstreamEndpoint('embeddings', new Set(['messages']))).toBeNull();
  });
});
