import { describe, expect, it } from 'vitest';
import { callIdWithSignature, geminiEventsAsArray, geminiProvider, geminiRequest, geminiResponse, signatureOfCallId } from './gemini-provider';
import { translation } from './index';
import type { ChatChunk, StreamItem } from './types';

describe('thought signatures in tool call IDs', () => {
  it('round-trips any signature, keeps the ID to Anthropic\'s characters, and tells Gemini\'s IDs from the gateway\'s', () => {
    const sig = 'CiQB+/x9Zz==';
    const id = callIdWithSignature('fc_1', sig);
    expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(signatureOfCallId(id)).toEqual({ id: 'fc_1', signature: sig });
    expect(signatureOfCallId('call_plain')).toEqual({ id: 'call_plain', signature: undefined });
    const made = geminiResponse({ candidates: [{ content: { parts: [{ functionCall: { name: 'f', args: {} }, thoughtSignature: sig }] }, finishReason: 'STOP' }] });
    const madeId = made.choices[0].message.tool_calls![0].id;
    expect(signatureOfCallId(madeId)).toEqual({ id: undefined, signature: sig });
  });
});

describe('the canonical request as generateContent', () => {
  it('writes system, turns, calls with their signatures, results by name, tools and generation config; no model', () => {
    const id = callIdWithSignature('call_gm1', 'S1');
    const body = geminiRequest({
      model: 'gemini-x',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Hi' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
        { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
        { role: 'tool', tool_call_id: id, content: 'done' },
      ],
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      tool_choice: 'required', max_tokens: 100, stop: 'END', temperature: 0.2, reasoning_effort: 'low',
      response_format: { type: 'json_schema', json_schema: { name: 'o', schema: { type: 'object' } } },
    });
    expect(body).toEqual({
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Hi' }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }] },
        { role: 'model', parts: [{ functionCall: { name: 'f', args: { a: 1 } }, thoughtSignature: 'S1' }] },
        { role: 'user', parts: [{ functionResponse: { name: 'f', response: { output: 'done' } } }] },
      ],
      tools: [{ functionDeclarations: [{ name: 'f', parametersJsonSchema: { type: 'object' } }] }],
      toolConfig: { functionCallingConfig: { mode: 'ANY' } },
      generationConfig: {
        maxOutputTokens: 100, temperature: 0.2, stopSequences: ['END'], responseMimeType: 'application/json',
        responseJsonSchema: { type: 'object' }, thinkingConfig: { thinkingLevel: 'LOW', includeThoughts: true },
      },
    });
  });

  it('refuses a tool result that answers no call', () => {
    expect(() => geminiRequest({ model: 'm', messages: [{ role: 'tool', tool_call_id: 'x', content: 'r' }] })).toThrow(/answers no tool call/);
  });
});

describe('answers', () => {
  it('reads text, thoughts, calls, finish and usage (cached and thoughts) of a whole answer', () => {
    const r = geminiResponse({
      candidates: [{ content: { parts: [{ text: 'hmm', thought: true }, { text: 'Hello' }] }, finishReason: 'MAX_TOKENS' }],
      usageMetadata: { promptTokenCount: 100, cachedContentTokenCount: 40, candidatesTokenCount: 10, thoughtsTokenCount: 5, totalTokenCount: 115 },
      responseId: 'r1', modelVersion: 'gemini-x',
    });
    expect(r.choices[0]).toMatchObject({ message: { content: 'Hello', reasoning_content: 'hmm' }, finish_reason: 'length' });
    expect(r.usage).toMatchObject({ prompt_tokens: 100, completion_tokens: 15, prompt_tokens_details: { cached_tokens: 40 }, completion_tokens_details: { reasoning_tokens: 5 } });
  });

  it('decodes a stream: running usage totals become one usage chunk, a call ends with tool_calls', () => {
    const d = geminiProvider.decoder();
    const ev = (v: unknown) => ({ data: JSON.stringify(v) });
    const out: StreamItem[] = [
      ...d.push(ev({ candidates: [{ content: { parts: [{ text: 'Hi' }] } }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 1 } })),
      ...d.push(ev({ candidates: [{ content: { parts: [{ functionCall: { name: 'f', args: { a: 1 } }, thoughtSignature: 'S' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 4 } })),
    ];
    const chunks = out as ChatChunk[];
    const usages = chunks.filter((c) => c.usage);
    expect(usages).toHaveLength(1);
    expect(usages[0].usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 4 });
    expect(chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean)).toEqual(['tool_calls']);
    const call = chunks.find((c) => c.choices[0]?.delta.tool_calls)!.choices[0].delta.tool_calls![0];
    expect(call).toMatchObject({ index: 0, function: { name: 'f', arguments: '{"a":1}' } });
    expect(signatureOfCallId(call.id!).signature).toBe('S');
  });

  it('writes OpenAI embeddings as a batch naming the model, text only', () => {
    const t = translation('embeddings', 'gemini_embed')!;
    expect(t.request({ model: 'e', input: 'x', dimensions: 3 })).toEqual({ requests: [{ model: 'models/e', content: { parts: [{ text: 'x' }] }, outputDimensionality: 3 }] });
    expect(() => t.request({ model: 'e', input: [1, 2] })).toThrow(/text only/);
  });

  it('re-frames a JSON-array client\'s stream from the events the key was asked for', () => {
    const s = geminiEventsAsArray.stream({ includeUsage: false, request: {}, jsonArray: true });
    const text = [s.push(Buffer.from('data: {"a":1}\r\n\r\ndata: {"a"')), s.push(Buffer.from(':2}\r\n\r\n')), s.end()].map(String).join('');
    expect(JSON.parse(text)).toEqual([{ a: 1 }, { a: 2 }]);
    expect(s.contentType).toContain('application/json');
  });
});
