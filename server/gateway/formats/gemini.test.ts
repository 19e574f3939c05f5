import { describe, expect, it } from 'vitest';
import { geminiBodyProblem, geminiFinish, jsonSchemaOf, requestToChat, responseFromChat, usageMetadataOf, usageOfMetadata } from './gemini';
import { GeminiEncoder } from './gemini-stream';
import { embedBodyProblem, embedRequest, embedResponse } from './gemini-embed';
import { MalformedRequest } from './shape';
import { Untranslatable, type ChatChunk, type ChatResponse } from './types';
import { geminiRoute } from '../routes';
import { proxyErrorBody } from '../errors';

const user = (text: string) => ({ role: 'user', parts: [{ text }] });
const chunk = (delta: ChatChunk['choices'][0]['delta'], finish: string | null = null, usage?: ChatChunk['usage']): ChatChunk => ({
  id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}),
});

describe('requests', () => {
  it('turns Gemini schemas (upper-case types, nullable) into JSON Schema, and passes parametersJsonSchema as is', () => {
    expect(jsonSchemaOf({
      type: 'OBJECT', propertyOrdering: ['a'], required: ['a'],
      properties: { a: { type: 'STRING', nullable: true, enum: ['x'] }, b: { type: 'ARRAY', items: { type: 'INTEGER', minimum: 1 } } },
    })).toEqual({ type: 'object', required: ['a'], properties: { a: { type: ['string', 'null'], enum: ['x'] }, b: { type: 'array', items: { type: 'integer', minimum: 1 } } } });
    const raw = { type: 'object', properties: { q: { type: 'string' } }, additionalProperties: false };
    const req = requestToChat({ model: 'm', contents: [user('hi')], tools: [{ functionDeclarations: [{ name: 'f', parametersJsonSchema: raw }, { name: 'g' }] }] });
    expect(req.tools).toEqual([
      { type: 'function', function: { name: 'f', parameters: raw } },
      { type: 'function', function: { name: 'g', parameters: { type: 'object', properties: {} } } },
    ]);
    expect(req.tool_choice).toBe('auto');
  });

  it('maps toolConfig modes to tool_choice, offering only the allowed functions under ANY', () => {
    const tools = [{ functionDeclarations: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] }];
    const choice = (functionCallingConfig: object) => requestToChat({ model: 'm', contents: [user('x')], tools, toolConfig: { functionCallingConfig } });
    expect(choice({ mode: 'NONE' }).tool_choice).toBe('none');
    const any = choice({ mode: 'ANY', allowedFunctionNames: ['a', 'c'] });
    expect(any.tool_choice).toBe('required');
    expect((any.tools as any[]).map((t) => t.function.name)).toEqual(['a', 'c']);
    expect(choice({ mode: 'ANY', allowedFunctionNames: ['b'] }).tool_choice).toEqual({ type: 'function', function: { name: 'b' } });
    expect(choice({ mode: 'ANY' }).tool_choice).toBe('required');
  });

  it('maps generationConfig: limits, sampling, stops, structured output and thinking', () => {
    const req = (generationConfig: object) => requestToChat({ model: 'm', contents: [user('x')], generationConfig });
    expect(req({ maxOutputTokens: 100, temperature: 0.2, topP: 0.9, topK: 5, stopSequences: ['Z'], seed: 7 })).toMatchObject({
      max_tokens: 100, temperature: 0.2, top_p: 0.9, top_k: 5, stop: ['Z'], seed: 7,
    });
    expect(req({ responseMimeType: 'application/json' }).response_format).toEqual({ type: 'json_object' });
    expect(req({ responseMimeType: 'application/json', responseSchema: { type: 'OBJECT', properties: { n: { type: 'NUMBER' } } } }).response_format)
      .toEqual({ type: 'json_schema', json_schema: { name: 'output', schema: { type: 'object', properties: { n: { type: 'number' } } } } });
    const own = { type: 'object', properties: { n: { type: 'number' } } };
    expect(req({ responseMimeType: 'application/json', responseJsonSchema: own }).response_format).toEqual({ type: 'json_schema', json_schema: { name: 'output', schema: own } });
    expect(() => req({ responseMimeType: 'text/x.enum' })).toThrow(Untranslatable);
    expect(req({ thinkingConfig: { thinkingLevel: 'HIGH' } }).reasoning_effort).toBe('high');
    expect(req({ thinkingConfig: { thinkingBudget: 2048 } }).reasoning_effort).toBe('low');
    expect(req({ thinkingConfig: { thinkingBudget: -1 } }).reasoning_effort).toBe('medium');
    expect(req({ thinkingConfig: { thinkingBudget: 0 } }).reasoning_effort).toBeUndefined();
    expect(() => req({ responseModalities: ['TEXT', 'IMAGE'] })).toThrow(/IMAGE/);
  });

  it('reads the system instruction, images and PDFs inline, images by URL, and refuses what only Google reads', () => {
    const req = requestToChat({
      model: 'm',
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [{ role: 'user', parts: [
        { text: 'Look' },
        { inlineData: { mimeType: 'image/png', data: 'AAAA' } },
        { inlineData: { mimeType: 'application/pdf', data: 'JVBE' } },
        { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/a.jpg' } },
      ] }],
    });
    expect(req.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [
        { type: 'text', text: 'Look' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        { type: 'file', file: { filename: 'document.pdf', file_data: 'data:application/pdf;base64,JVBE' } },
        { type: 'image_url', image_url: { url: 'https://example.com/a.jpg' } },
      ] },
    ]);
    const refused = (doc: object) => () => requestToChat({ model: 'm', contents: [user('x')], ...doc });
    expect(refused({ cachedContent: 'cachedContents/1' })).toThrow(/cachedContent/);
    expect(refused({ tools: [{ codeExecution: {} }] })).toThrow(/codeExecution/);
    expect(refused({ tools: [{ googleSearch: {} }] })).toThrow(/googleSearch/);
    expect(() => requestToChat({ model: 'm', contents: [{ role: 'user', parts: [{ fileData: { mimeType: 'application/pdf', fileUri: 'files/abc' } }] }] })).toThrow(Untranslatable);
  });

  it('gives function calls without IDs stable ones and answers responses by ID, else by name in order', () => {
    const contents = [
      user('two cities'),
      { role: 'model', parts: [{ text: 'Checking.' }, { functionCall: { name: 'w', args: { c: 'A' } } }, { functionCall: { name: 'w', args: { c: 'B' } } }, { functionCall: { id: 'x9', name: 'v', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { id: 'x9', name: 'v', response: { ok: true } } }, { functionResponse: { name: 'w', response: { output: 'a' } } }, { functionResponse: { name: 'w', response: { output: 'b' } } }] },
    ];
    const req = requestToChat({ model: 'm', contents });
    expect(req.messages.slice(1)).toEqual([
      { role: 'assistant', content: 'Checking.', tool_calls: [
        { id: 'call_gemini_1_1', type: 'function', function: { name: 'w', arguments: '{"c":"A"}' } },
        { id: 'call_gemini_1_2', type: 'function', function: { name: 'w', arguments: '{"c":"B"}' } },
        { id: 'x9', type: 'function', function: { name: 'v', arguments: '{}' } },
      ] },
      { role: 'tool', tool_call_id: 'x9', content: '{"ok":true}' },
      { role: 'tool', tool_call_id: 'call_gemini_1_1', content: 'a' },
      { role: 'tool', tool_call_id: 'call_gemini_1_2', content: 'b' },
    ]);
    // The same conversation gives the same IDs (a provider's prompt cache sees the same prefix).
    expect(requestToChat({ model: 'm', contents }).messages).toEqual(req.messages);
    expect(() => requestToChat({ model: 'm', contents: [user('x'), { role: 'user', parts: [{ functionResponse: { name: 'w', response: {} } }] }] })).toThrow(MalformedRequest);
  });

  it('keeps signed thoughts of a model turn as thinking blocks', () => {
    const req = requestToChat({ model: 'm', contents: [user('q'), { role: 'model', parts: [{ text: 'Hmm', thought: true }, { text: '', thought: true, thoughtSignature: 'sig' }, { text: 'A.' }] }] });
    expect(req.messages[1]).toEqual({ role: 'assistant', content: 'A.', reasoning_content: 'Hmm', thinking_blocks: [{ type: 'thinking', thinking: 'Hmm', signature: 'sig' }] });
  });

  it('refuses a malformed body before anything else, naming the field', () => {
    expect(geminiBodyProblem('gemini', {})).toMatch(/^contents/);
    expect(geminiBodyProblem('gemini', { contents: [null] })).toMatch(/^contents\[0\]/);
    expect(geminiBodyProblem('gemini', { contents: [{ role: 'user' }] })).toMatch(/^contents\[0\]\.parts/);
    expect(geminiBodyProblem('gemini', { contents: [{ role: 'bot', parts: [] }] })).toMatch(/role/);
    expect(geminiBodyProblem('gemini', { contents: [], generationConfig: { candidateCount: 2 } })).toMatch(/candidateCount/);
    expect(geminiBodyProblem('gemini', { contents: [user('x')], generationConfig: { candidateCount: 1 } })).toBeNull();
    expect(geminiBodyProblem('gemini_count', { generateContentRequest: { contents: [user('x')] } })).toBeNull();
  });
});

describe('answers', () => {
  it('writes usage as Gemini counts it: the prompt holds the cached tokens, thoughts apart from candidates', () => {
    const usage = { prompt_tokens: 100, completion_tokens: 30, total_tokens: 130, prompt_tokens_details: { cached_tokens: 40 }, completion_tokens_details: { reasoning_tokens: 10 } };
    const meta = usageMetadataOf(usage);
    expect(meta).toEqual({ promptTokenCount: 100, cachedContentTokenCount: 40, candidatesTokenCount: 20, thoughtsTokenCount: 10, totalTokenCount: 130 });
    expect(usageOfMetadata(meta)).toMatchObject({ prompt_tokens: 100, completion_tokens: 30, prompt_tokens_details: { cached_tokens: 40 }, completion_tokens_details: { reasoning_tokens: 10 } });
    expect([geminiFinish('stop'), geminiFinish('tool_calls'), geminiFinish('length'), geminiFinish('content_filter')]).toEqual(['STOP', 'STOP', 'MAX_TOKENS', 'SAFETY']);
  });

  it('writes a whole answer with its function calls (IDs kept) and thoughts only when asked for', () => {
    const res: ChatResponse = {
      id: 'r1', object: 'chat.completion', created: 1, model: 'm',
      choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: 'Sure.', reasoning_content: 'think', tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] } }],
    };
    const parts = (request: object) => responseFromChat(res, request).candidates[0].content.parts;
    expect(parts({})).toEqual([{ text: 'Sure.' }, { functionCall: { id: 't1', name: 'f', args: { a: 1 } } }]);
    expect(parts({ generationConfig: { thinkingConfig: { includeThoughts: true } } })[0]).toEqual({ text: 'think', thought: true });
    expect(responseFromChat(res, {})).toMatchObject({ candidates: [{ finishReason: 'STOP', index: 0 }], modelVersion: 'm', responseId: 'r1' });
  });
});

describe('streams', () => {
  const usage = { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 };
  const events = (e: GeminiEncoder, items: Parameters<GeminiEncoder['push']>[0][]) => e.write([...items.flatMap((i) => e.push(i)), ...e.end()]);

  it('writes one finishReason, on the last chunk with the usage and the whole function calls', () => {
    const e = new GeminiEncoder({ includeUsage: true, request: {} });
    const text = events(e, [
      chunk({ role: 'assistant', content: 'Hi' }),
      chunk({ tool_calls: [{ index: 0, id: 't1', type: 'function', function: { name: 'f', arguments: '{"a"' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }),
      chunk({}, 'tool_calls'),
      { ...chunk({}), choices: [], usage },
    ]);
    const chunks = text.split('\r\n\r\n').filter(Boolean).map((l) => JSON.parse(l.replace(/^data: /, '')));
    expect(chunks).toHaveLength(2);
    expect(chunks[0].candidates[0]).toEqual({ content: { role: 'model', parts: [{ text: 'Hi' }] }, index: 0 });
    expect(chunks[1].candidates[0]).toEqual({ content: { role: 'model', parts: [{ functionCall: { id: 't1', name: 'f', args: { a: 1 } } }] }, finishReason: 'STOP', index: 0 });
    expect(chunks[1].usageMetadata).toEqual({ promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7 });
  });

  it('without alt=sse writes one JSON array, closed by the end or around an interruption', () => {
    const e = new GeminiEncoder({ includeUsage: true, request: {}, jsonArray: true });
    expect(e.contentType).toContain('application/json');
    const whole = JSON.parse(events(e, [chunk({ content: 'a' }), chunk({ content: 'b' }, 'length'), { ...chunk({}), choices: [], usage }]));
    expect(whole.map((c: any) => c.candidates[0].finishReason ?? null)).toEqual([null, null, 'MAX_TOKENS']);
    const cut = new GeminiEncoder({ includeUsage: true, request: {}, jsonArray: true });
    const head = cut.write(cut.push(chunk({ content: 'a' })));
    const body = JSON.parse(head + cut.interrupted('cut', 'req-1'));
    expect(body[1].error).toMatchObject({ code: 500, status: 'INTERNAL', message: 'cut' });
    expect(cut.write(cut.end())).toBe('');
  });
});

describe('routes and errors', () => {
  it('reads the model and method from the path, the stream framing and the key from the query', () => {
    expect(geminiRoute('/v1beta/models/gemini-2.5-flash:streamGenerateContent', 'alt=sse&key=k1')).toEqual({
      endpoint: 'gemini', canonical: '/v1beta/models/{model}:streamGenerateContent', params: { model: 'gemini-2.5-flash', stream: 'sse', key: 'k1', method: 'streamGenerateContent' },
    });
    expect(geminiRoute('/v1/models/gpt-4o%3Aft-x:generateContent', '')?.params).toEqual({ model: 'gpt-4o:ft-x', stream: null, key: null, method: 'generateContent' });
    expect(geminiRoute('/v1/models/m:streamGenerateContent', '')?.params.stream).toBe('array');
    expect(geminiRoute('/v1/models/m:countTokens', '')?.endpoint).toBe('gemini_count');
    expect(geminiRoute('/v1/models/m:predict', '')).toBeNull();
    expect(geminiRoute('/v1/models/generateContent', '')).toBeNull();
  });

  it('answers errors in Google\'s envelope with Google\'s statuses', () => {
    const body = (status: number) => JSON.parse(proxyErrorBody('gemini', status, 'why', undefined, 'req-9')).error;
    expect(body(400)).toEqual({ code: 400, message: 'why', status: 'INVALID_ARGUMENT', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: expect.any(String), domain: 'switchyard', metadata: { request_id: 'req-9' } }] });
    expect([401, 402, 403, 404, 429, 500, 503].map((s) => body(s).status)).toEqual(['UNAUTHENTICATED', 'RESOURCE_EXHAUSTED', 'PERMISSION_DENIED', 'NOT_FOUND', 'RESOURCE_EXHAUSTED', 'INTERNAL', 'UNAVAILABLE']);
  });
});

describe('embeddings', () => {
  it('reads a batch or one request as OpenAI embeddings input, and writes the vectors back in order', () => {
    const batch = { model: 'e', requests: [{ model: 'models/e', content: { parts: [{ text: 'a' }, { text: 'b' }] }, outputDimensionality: 3, taskType: 'RETRIEVAL_QUERY' }, { content: { parts: [{ text: 'c' }] }, outputDimensionality: 3 }] };
    expect(embedRequest(batch)).toEqual({ model: 'e', input: ['ab', 'c'], dimensions: 3 });
    expect(embedRequest({ model: 'e', content: { parts: [{ text: 'x' }] } })).toEqual({ model: 'e', input: ['x'] });
    expect(() => embedRequest({ model: 'e', content: { parts: [{ inlineData: { mimeType: 'image/png', data: 'AA' } }] } })).toThrow(Untranslatable);
    expect(() => embedRequest({ model: 'e', requests: 'x' })).toThrow(MalformedRequest);
    expect(embedBodyProblem({ content: {} })).toMatch(/content\.parts/);
    const res = { data: [{ index: 1, embedding: [2] }, { index: 0, embedding: [1] }] };
    expect(embedResponse(res, batch)).toEqual({ embeddings: [{ values: [1] }, { values: [2] }] });
    expect(embedResponse(res, { content: {} })).toEqual({ embedding: { values: [1] } });
  });
});
