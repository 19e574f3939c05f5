import { describe, expect, it } from 'vitest';
import { translation, Untranslatable } from './index';
import { requestToChat, responseFromChat } from './responses';
import { conversationItems, GATEWAY_REASONING_PREFIX, isGatewayReasoning, isGatewayResponseId, responseOfItem, withoutGatewayReasoning } from './gateway-items';
import type { ChatResponse, ClientContext } from './types';

const events = (text: string) => text.split('\n\n').filter(Boolean).map((block) => {
  const lines = block.split('\n');
  return { event: lines.find((l) => l.startsWith('event: '))?.slice(7), data: JSON.parse(lines.find((l) => l.startsWith('data: '))!.slice(6)) };
});

/** Anthropic's event stream of `[type, fields]` pairs, as its bytes. */
const anthropicEvents = (list: (string | object)[][]) =>
  list.map(([type, fields]) => `event: ${type as string}\ndata: ${JSON.stringify({ type, ...(fields as object) })}\n\n`).join('');

describe('Responses request → canonical chat', () => {
  it('reads instructions, messages, function calls and outputs, reasoning with its signature, tools and options', () => {
    const out = requestToChat({
      model: 'claude-sonnet-4-5', instructions: 'Be brief.', max_output_tokens: 300, temperature: 0.3, top_p: 0.9, parallel_tool_calls: false,
      reasoning: { effort: 'high' }, text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } },
      tools: [{ type: 'function', name: 'shell', description: 'Runs', parameters: { type: 'object' }, strict: false }],
      tool_choice: { type: 'function', name: 'shell' }, store: false, stream: true,
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'List files' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' }] },
        { type: 'reasoning', id: 'rs_gw_1', summary: [], content: [{ type: 'reasoning_text', text: 'Use ls.' }], encrypted_content: 'rs_gw_sig_1' },
        { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'shell', arguments: '{"cmd":"ls"}' },
        { type: 'function_call', id: 'fc_2', call_id: 'call_2', name: 'shell', arguments: '{"cmd":"pwd"}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'a.txt' },
        { type: 'function_call_output', call_id: 'call_2', output: '/home' },
        { role: 'user', content: 'Thanks' },
      ],
    });
    expect(out).toEqual({
      model: 'claude-sonnet-4-5',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'List files' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } }] },
        {
          role: 'assistant', content: null, reasoning_content: 'Use ls.', thinking_blocks: [{ type: 'thinking', thinking: 'Use ls.', signature: 'sig_1' }],
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'shell', arguments: '{"cmd":"ls"}' } },
            { id: 'call_2', type: 'function', function: { name: 'shell', arguments: '{"cmd":"pwd"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'a.txt' },
        { role: 'tool', tool_call_id: 'call_2', content: '/home' },
        { role: 'user', content: 'Thanks' },
      ],
      max_tokens: 300, temperature: 0.3, top_p: 0.9, parallel_tool_calls: false, reasoning_effort: 'high',
      tools: [{ type: 'function', function: { name: 'shell', description: 'Runs', parameters: { type: 'object' }, strict: false } }],
      tool_choice: { type: 'function', function: { name: 'shell' } },
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
      stream: true,
    });
  });

  it('refuses what needs the provider\'s stored state or a tool it does not have', () => {
    expect(() => requestToChat({ model: 'm', input: 'x', previous_response_id: 'resp_1' })).toThrow(Untranslatable);
    // A hosted tool is read for the rule of tools.ts (kept, dropped or refused per key); a tool no other format has is refused here.
    expect(requestToChat({ model: 'm', input: 'x', tools: [{ type: 'web_search' }] }).hosted_tools).toEqual([{ name: 'web_search', webSearch: {}, refusal: 'a key without the Responses API has no web_search tool' }]);
    expect(() => requestToChat({ model: 'm', input: 'x', tools: [{ type: 'local_shell' }] })).toThrow(/local_shell tool/);
    expect(() => requestToChat({ model: 'm', input: [{ type: 'item_reference', id: 'msg_1' }] })).toThrow(/item_reference/);
    expect(() => requestToChat({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1' }] }] })).toThrow(/file_id/);
  });
});

describe('canonical chat → Responses answers', () => {
  const chat: ChatResponse = {
    id: 'msg_1', object: 'chat.completion', created: 1_700_000_000, model: 'claude-sonnet-4-5',
    choices: [{
      index: 0, finish_reason: 'tool_calls',
      message: {
        role: 'assistant', content: 'Running it.', reasoning_content: 'Plan', thinking_blocks: [{ type: 'thinking', thinking: 'Plan', signature: 'sig_9' }],
        tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'shell', arguments: '{"cmd":"ls"}' } }],
      },
    }],
    usage: { prompt_tokens: 1000, completion_tokens: 60, total_tokens: 1060, prompt_tokens_details: { cached_tokens: 700, cache_write_tokens: 200 }, completion_tokens_details: { reasoning_tokens: 25 } },
  };

  it('writes reasoning (signature in encrypted_content), the message and the function call, with usage', () => {
    const r = responseFromChat(chat, { includeUsage: false, request: { instructions: 'Be brief.' } });
    expect(r).toMatchObject({
      object: 'response', status: 'completed', model: 'claude-sonnet-4-5', instructions: 'Be brief.', created_at: 1_700_000_000,
      output: [
        { type: 'reasoning', content: [{ type: 'reasoning_text', text: 'Plan' }], encrypted_content: 'rs_gw_sig_9' },
        { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Running it.', annotations: [] }] },
        { type: 'function_call', call_id: 'toolu_1', name: 'shell', arguments: '{"cmd":"ls"}', status: 'completed' },
      ],
      usage: { input_tokens: 1000, input_tokens_details: { cached_tokens: 700 }, output_tokens: 60, output_tokens_details: { reasoning_tokens: 25 }, total_tokens: 1060 },
    });
    expect(r.id).toMatch(/^resp_/);
    // Each item's ID names its response and its place in the output, so an item_reference to it finds it.
    const hex = r.id.slice('resp_gw_'.length);
    expect(r.output.map((o: any) => o.id)).toEqual([`rs_gw_${hex}_0`, `msg_gw_${hex}_1`, `fc_gw_${hex}_2`]);
    expect(r.output.map((o: any) => responseOfItem(o.id))).toEqual([r.id, r.id, r.id]);
    // A reasoning item sent back carries the signature to the next turn, with its ID or without (as Codex sends it).
    const { id: _, ...withoutId } = r.output[0];
    for (const item of [r.output[0], withoutId]) {
      const back = requestToChat({ model: 'm', input: [{ role: 'user', content: 'go' }, item, r.output[2], { type: 'function_call_output', call_id: 'toolu_1', output: 'ok' }] });
      expect(back.messages[1]).toMatchObject({ role: 'assistant', thinking_blocks: [{ thinking: 'Plan', signature: 'sig_9' }], tool_calls: [{ id: 'toolu_1' }] });
    }
  });

  it('marks reasoning without a signature as the gateway\'s too (a chat provider\'s reasoning_content)', () => {
    const plain: ChatResponse = { ...chat, choices: [{ ...chat.choices[0], message: { role: 'assistant', content: 'Hi', reasoning_content: 'Hmm' } }] };
    const [item] = responseFromChat(plain, { includeUsage: false, request: {} }).output;
    expect(item).toMatchObject({ type: 'reasoning', content: [{ text: 'Hmm' }], encrypted_content: GATEWAY_REASONING_PREFIX });
    expect(isGatewayReasoning(item)).toBe(true);
    expect(requestToChat({ model: 'm', input: [item] }).messages[0].thinking_blocks).toEqual([{ type: 'thinking', thinking: 'Hmm', signature: '' }]);
  });

  it('answers incomplete when the answer hit its token limit', () => {
    const ctx: ClientContext = { includeUsage: false, request: {} };
    const r = responseFromChat({ ...chat, choices: [{ ...chat.choices[0], finish_reason: 'length' }] }, ctx);
    expect(r).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    // Only a completed answer is offered for keeping.
    expect(ctx.completed).toBeUndefined();
  });

  it('names a completed answer with the gateway\'s prefix and offers it for keeping: input and output items, not the instructions', () => {
    const input = [{ type: 'message', role: 'user', content: 'List files' }, { type: 'function_call_output', call_id: 'toolu_0', output: 'a.txt' }];
    const ctx: ClientContext = { includeUsage: false, request: { instructions: 'Be brief.', input, store: true } };
    const r = responseFromChat(chat, ctx);
    expect(isGatewayResponseId(r.id)).toBe(true);
    expect(isGatewayResponseId('resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b')).toBe(false);
    expect(r.store).toBe(true);
    expect(ctx.completed).toBe(r);
    expect(conversationItems(ctx.request, r)).toEqual([...input, ...r.output]);
    expect(conversationItems({ input: 'Hi' }, { output: [] })).toEqual([{ type: 'message', role: 'user', content: 'Hi' }]);
    expect(responseFromChat(chat, { includeUsage: false, request: { store: false } }).store).toBe(false);
  });
});

describe('streams to a Responses client', () => {
  const anthropic = anthropicEvents([
    ['message_start', { message: { id: 'msg_7', type: 'message', role: 'assistant', model: 'claude-haiku-4-5', content: [], usage: { input_tokens: 20, cache_read_input_tokens: 80, output_tokens: 1 } } }],
    ['content_block_start', { index: 0, content_block: { type: 'text', text: '' } }],
    ['content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hi ' } }],
    ['content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'you' } }],
    ['content_block_stop', { index: 0 }],
    ['content_block_start', { index: 1, content_block: { type: 'tool_use', id: 'toolu_5', name: 'shell', input: {} } }],
    ['content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"cmd":' } }],
    ['content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '"ls"}' } }],
    ['content_block_stop', { index: 1 }],
    ['message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 12 } }],
    ['message_stop', {}],
  ])

  it('Anthropic events → response.created, items with their deltas, response.completed with usage', () => {
    const t = translation('responses', 'messages')!.stream({ includeUsage: false, request: { model: 'claude-haiku-4-5' } });
    let text = '';
    for (let i = 0; i < anthropic.length; i += 13) text += t.push(Buffer.from(anthropic.slice(i, i + 13))).toString();
    text += t.end().toString();
    const out = events(text);
    expect(out.map((e) => e.event)).toEqual([
      'response.created', 'response.in_progress',
      'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.delta',
      'response.output_text.done', 'response.content_part.done', 'response.output_item.done',
      'response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.delta',
      'response.function_call_arguments.done', 'response.output_item.done',
      'response.completed',
    ]);
    expect(out.map((e) => e.data.sequence_number)).toEqual(out.map((_, i) => i));
    expect(out.every((e) => e.data.type === e.event)).toBe(true);
    const done = out.at(-1)!.data.response;
    expect(done).toMatchObject({
      status: 'completed', model: 'claude-haiku-4-5',
      output: [
        { type: 'message', content: [{ type: 'output_text', text: 'Hi you' }] },
        { type: 'function_call', call_id: 'toolu_5', name: 'shell', arguments: '{"cmd":"ls"}', status: 'completed' },
      ],
      usage: { input_tokens: 100, input_tokens_details: { cached_tokens: 80 }, output_tokens: 12 },
    });
    expect(out[0].data.response.id).toBe(done.id);
  });

  it('offers the completed response for keeping, and neither an incomplete nor a failed one', () => {
    const run = (events: string) => {
      const ctx: ClientContext = { includeUsage: false, request: {} };
      const t = translation('responses', 'messages')!.stream(ctx);
      const last = t.push(Buffer.from(events)).toString() + t.end().toString();
      return { ctx, last };
    };
    const whole = run(anthropic);
    expect(whole.ctx.completed).toMatchObject({ status: 'completed', output: [{ type: 'message' }, { type: 'function_call' }] });
    expect(whole.last).toContain(whole.ctx.completed!.id);
    expect(run(anthropic.replace('"stop_reason":"tool_use"', '"stop_reason":"max_tokens"')).ctx.completed).toBeUndefined();
    const error = `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })}\n\n`;
    expect(run(anthropic.replace('event: message_stop', `${error}event: message_stop`)).ctx.completed).toBeUndefined();
  });
});

describe('reasoning items across providers', () => {
  // As OpenAI writes them: its own ID and its own encrypted blob, the summary readable.
  const openaiReasoning = { type: 'reasoning', id: 'rs_68af0f4c3e0c8190a4c1d2e3f4a5b6c70d1e2f3a4b5c6d7e', summary: [{ type: 'summary_text', text: 'Use ls.' }], encrypted_content: 'gAAAAABoOpenAIsOwn==' };
  const gatewayReasoning = { type: 'reasoning', id: 'rs_gw_0123456789abcdef01234567', summary: [], content: [{ type: 'reasoning_text', text: 'Plan' }], encrypted_content: 'rs_gw_sig_9' };
  const call = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'shell', arguments: '{"cmd":"ls"}' };
  const result = { type: 'function_call_output', call_id: 'call_1', output: 'a.txt' };
  const tools = [{ type: 'function', name: 'shell', parameters: { type: 'object' } }];

  it('reads another provider\'s reasoning as its text without a signature, so it never reaches Anthropic as one', () => {
    const chat = requestToChat({ model: 'm', input: [{ role: 'user', content: 'go' }, openaiReasoning, call, result] });
    expect(chat.messages[1]).toMatchObject({ role: 'assistant', reasoning_content: 'Use ls.', thinking_blocks: [{ type: 'thinking', thinking: 'Use ls.', signature: '' }] });
    expect(isGatewayReasoning(openaiReasoning)).toBe(false);
  });

  it('sends an Anthropic key a tool-use turn whose thinking came from elsewhere without thinking, and thinks again otherwise', () => {
    const t = translation('responses', 'messages')!;
    const foreign = t.request({ model: 'claude-x', reasoning: { effort: 'low' }, tools, input: [{ role: 'user', content: 'go' }, openaiReasoning, call, result] });
    // Anthropic refuses a last tool-use turn that does not start with signed thinking while thinking is on.
    expect(foreign.thinking).toBeUndefined();
    expect(foreign.messages[1].content).toEqual([{ type: 'tool_use', id: 'call_1', name: 'shell', input: { cmd: 'ls' } }]);
    const own = t.request({ model: 'claude-x', reasoning: { effort: 'low' }, tools, input: [{ role: 'user', content: 'go' }, gatewayReasoning, call, result] });
    expect(own.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(own.messages[1].content[0]).toEqual({ type: 'thinking', thinking: 'Plan', signature: 'sig_9' });
    // Another provider's thinking in an earlier turn leaves thinking on: only the last tool-use turn must start with it.
    const earlier = t.request({ model: 'claude-x', reasoning: { effort: 'low' }, input: [{ role: 'user', content: 'go' }, openaiReasoning, call, result, { type: 'message', role: 'assistant', content: 'Done.' }, { role: 'user', content: 'Thanks' }] });
    expect(earlier.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
  });

  it('takes the gateway\'s reasoning items out of a request for a key with the Responses API, with their ID or without', () => {
    const { id: _, ...codexForm } = gatewayReasoning;
    const doc = { model: 'gpt-x', input: [{ role: 'user', content: 'go' }, gatewayReasoning, openaiReasoning, codexForm, call, result] };
    const out = withoutGatewayReasoning(Buffer.from(JSON.stringify(doc)), doc);
    expect(out).toEqual({ model: 'gpt-x', input: [{ role: 'user', content: 'go' }, openaiReasoning, call, result] });
    expect(doc.input).toHaveLength(6);
    // Nothing to take out: the client's bytes stay (null), without parsing a body that lacks the prefix at all.
    const native = { model: 'gpt-x', input: [openaiReasoning, call, result] };
    expect(withoutGatewayReasoning(Buffer.from(JSON.stringify(native)), native)).toBeNull();
    const mentions = { model: 'gpt-x', input: [{ role: 'user', content: 'what does rs_gw_ mean?' }] };
    expect(withoutGatewayReasoning(Buffer.from(JSON.stringify(mentions)), mentions)).toBeNull();
  });

  it('streams Anthropic thinking as a reasoning item of the gateway\'s, its signature in encrypted_content once complete', () => {
    const sse = anthropicEvents([
      ['message_start', { message: { id: 'msg_8', type: 'message', role: 'assistant', model: 'claude-x', content: [], usage: { input_tokens: 5, output_tokens: 1 } } }],
      ['content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }],
      ['content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Pl' } }],
      ['content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'an' } }],
      ['content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'sig_7' } }],
      ['content_block_stop', { index: 0 }],
      ['content_block_start', { index: 1, content_block: { type: 'text', text: '' } }],
      ['content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'Hi' } }],
      ['content_block_stop', { index: 1 }],
      ['message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 4 } }],
      ['message_stop', {}],
    ])
    const t = translation('responses', 'messages')!.stream({ includeUsage: false, request: {} });
    const out = events(t.push(Buffer.from(sse)).toString() + t.end().toString());
    const added = out.find((e) => e.event === 'response.output_item.added')!.data.item;
    expect(added.id).toMatch(/^rs_gw_/);
    const done = out.find((e) => e.event === 'response.output_item.done')!.data.item;
    expect(done).toMatchObject({ type: 'reasoning', id: added.id, content: [{ text: 'Plan' }], encrypted_content: 'rs_gw_sig_7' });
    expect(out.at(-1)!.data.response.output[0]).toEqual(done);
    const completed = out.at(-1)!.data.response;
    expect(completed.output.map((o: any) => responseOfItem(o.id))).toEqual([completed.id, completed.id]);
    expect(completed.output[1].id).toBe(`msg_gw_${completed.id.slice('resp_gw_'.length)}_1`);
  });
});
