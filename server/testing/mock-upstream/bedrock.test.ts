import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BedrockRuntimeClient, ConverseCommand, CountTokensCommand, ConverseStreamCommand, InvokeModelCommand, InvokeModelWithResponseStreamCommand,
} from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { startMockUpstream, type MockUpstream } from '../mock-upstream';

// The real AWS SDK against the mock: proof that the mock speaks Bedrock's wire format
// (SigV4 as AWS verifies it, event-stream framing, AWS's error shape).
const ACCESS_KEY = 'AKIAMOCKBEDROCK00001';
const SECRET = 'mock-secret-access-key-0123456789abcdefgh';
const CLAUDE = 'anthropic.claude-3-5-haiku-20241022-v1:0';
const NOVA = 'amazon.nova-lite-v1:0';

let mock: MockUpstream;
const client = (secretAccessKey = SECRET, accessKeyId = ACCESS_KEY) => new BedrockRuntimeClient({
  region: 'us-east-1', endpoint: mock.url, credentials: { accessKeyId, secretAccessKey }, maxAttempts: 1,
  // The mock is HTTP/1.1 on loopback; the SDK's default for Bedrock's runtime is HTTP/2 over TLS.
  requestHandler: new NodeHttpHandler(),
});
const claudeBody = (extra: Record<string, unknown> = {}) => new TextEncoder().encode(JSON.stringify({
  anthropic_version: 'bedrock-2023-05-31', max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }], ...extra,
}));

beforeAll(async () => {
  mock = await startMockUpstream();
  mock.trustAwsKey(ACCESS_KEY, SECRET);
});
afterAll(() => mock.close());

describe('the Bedrock mock, called by @aws-sdk/client-bedrock-runtime', () => {
  it('answers InvokeModel for Claude with an Anthropic message, verifying the signature', async () => {
    const out = await client().send(new InvokeModelCommand({ modelId: CLAUDE, contentType: 'application/json', body: claudeBody() }));
    const doc = JSON.parse(new TextDecoder().decode(out.body));
    expect(doc).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'text' }] });
    expect(doc.usage.output_tokens).toBeGreaterThan(0);
    expect(mock.requests.at(-1)!.path).toBe(`/model/${encodeURIComponent(CLAUDE)}/invoke`);
  });

  it('streams InvokeModelWithResponseStream as chunk events of Anthropic events', async () => {
    mock.behave(SECRET, { text: 'one two three' });
    const out = await client().send(new InvokeModelWithResponseStreamCommand({ modelId: CLAUDE, contentType: 'application/json', body: claudeBody() }));
    const types: string[] = [];
    let text = '';
    for await (const ev of out.body!) {
      const doc = JSON.parse(new TextDecoder().decode(ev.chunk!.bytes));
      types.push(doc.type);
      if (doc.type === 'content_block_delta') text += doc.delta.text;
    }
    expect(types[0]).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');
    expect(text).toBe('one two three');
    mock.reset();
    mock.trustAwsKey(ACCESS_KEY, SECRET);
  });

  it('answers Converse and ConverseStream', async () => {
    const whole = await client().send(new ConverseCommand({ modelId: 'amazon.nova-lite-v1:0', messages: [{ role: 'user', content: [{ text: 'Hi' }] }], inferenceConfig: { maxTokens: 32 } }));
    expect(whole.output?.message?.content?.[0]?.text).toContain('mock answer');
    expect(whole.usage?.inputTokens).toBeGreaterThan(0);
    const s = await client().send(new ConverseStreamCommand({ modelId: 'amazon.nova-lite-v1:0', messages: [{ role: 'user', content: [{ text: 'Hi' }] }] }));
    let text = '';
    let usage: unknown;
    for await (const ev of s.stream!) {
      if (ev.contentBlockDelta) text += ev.contentBlockDelta.delta?.text ?? '';
      if (ev.metadata) usage = ev.metadata.usage;
    }
    expect(text).toContain('mock answer');
    expect(usage).toMatchObject({ outputTokens: expect.any(Number) });
  });

  it('answers a Converse tool round trip, whole and streamed, as the SDK reads it', async () => {
    mock.behave(SECRET, { toolCall: { name: 'get_weather', arguments: { city: 'Paris' } }, text: 'It is 18°C.', usage: { prompt_tokens: 50, completion_tokens: 9, cached_tokens: 20, cache_write_tokens: 5 } });
    const toolConfig = { tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } } } } } }] };
    const ask = { role: 'user' as const, content: [{ text: 'Weather in Paris?' }] };
    const first = await client().send(new ConverseCommand({ modelId: NOVA, messages: [ask], toolConfig }));
    expect(first.stopReason).toBe('tool_use');
    const use = first.output!.message!.content![0].toolUse!;
    expect(use).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });
    expect(first.usage).toEqual({ inputTokens: 25, outputTokens: 9, totalTokens: 59, cacheReadInputTokens: 20, cacheWriteInputTokens: 5 });
    const s = await client().send(new ConverseStreamCommand({ modelId: NOVA, messages: [ask], toolConfig }));
    let input = '';
    let started: unknown;
    let stop: unknown;
    for await (const ev of s.stream!) {
      if (ev.contentBlockStart) started = ev.contentBlockStart.start?.toolUse;
      if (ev.contentBlockDelta?.delta?.toolUse) input += ev.contentBlockDelta.delta.toolUse.input;
      if (ev.messageStop) stop = ev.messageStop.stopReason;
    }
    expect(started).toMatchObject({ name: 'get_weather', toolUseId: expect.any(String) });
    expect(JSON.parse(input)).toEqual({ city: 'Paris' });
    expect(stop).toBe('tool_use');
    const next = await client().send(new ConverseCommand({
      modelId: NOVA, toolConfig,
      messages: [ask, { role: 'assistant', content: [{ toolUse: use }] }, { role: 'user', content: [{ toolResult: { toolUseId: use.toolUseId!, content: [{ text: '18°C' }] } }] }],
    }));
    expect(next.output?.message?.content?.[0].text).toBe('It is 18°C.');
    mock.reset();
    mock.trustAwsKey(ACCESS_KEY, SECRET);
  });

  it('says max_tokens and stop_sequence when it cut the answer', async () => {
    mock.behave(SECRET, { text: 'one two three four five six seven eight' });
    const ask = [{ role: 'user' as const, content: [{ text: 'Count' }] }];
    const cut = await client().send(new ConverseCommand({ modelId: NOVA, messages: ask, inferenceConfig: { maxTokens: 2 } }));
    expect(cut.stopReason).toBe('max_tokens');
    expect(cut.output?.message?.content?.[0].text).toBe('one two ');
    const stopped = await client().send(new ConverseCommand({ modelId: NOVA, messages: ask, inferenceConfig: { stopSequences: ['four'] } }));
    expect(stopped.stopReason).toBe('stop_sequence');
    expect(stopped.output?.message?.content?.[0].text).toBe('one two three ');
    mock.reset();
    mock.trustAwsKey(ACCESS_KEY, SECRET);
  });

  it('refuses a Converse conversation Bedrock refuses (ValidationException)', async () => {
    const toolConfig = { tools: [{ toolSpec: { name: 'f', inputSchema: { json: { type: 'object' } } } }] };
    const use = { toolUseId: 'tooluse_1', name: 'f', input: {} };
    const bad: Record<string, any>[] = [
      { messages: [{ role: 'assistant', content: [{ text: 'Hi' }] }] },
      { messages: [{ role: 'user', content: [{ text: 'a' }] }, { role: 'user', content: [{ text: 'b' }] }] },
      { messages: [{ role: 'user', content: [{ text: ' ' }] }] },
      { messages: [{ role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_9', content: [{ text: 'x' }] } }] }], toolConfig },
      { messages: [{ role: 'user', content: [{ text: 'a' }] }, { role: 'assistant', content: [{ toolUse: use }] }, { role: 'user', content: [{ text: 'b' }] }], toolConfig },
      { messages: [{ role: 'user', content: [{ text: 'a' }] }, { role: 'assistant', content: [{ toolUse: use }] }, { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_1', content: [{ text: 'x' }] } }] }] },
      { messages: [{ role: 'user', content: [{ text: 'a' }] }], inferenceConfig: { temperature: 1.5 } },
      { messages: [{ role: 'user', content: [{ document: { format: 'pdf', name: 'doc', source: { bytes: new TextEncoder().encode('%PDF') } } }] }] },
    ];
    for (const input of bad) {
      await expect(client().send(new ConverseCommand({ modelId: NOVA, ...input } as any)))
        .rejects.toMatchObject({ name: 'ValidationException', $metadata: { httpStatusCode: 400 } });
    }
    // A field Converse does not have, sent without the SDK (which would drop it).
    const r = await fetch(`${mock.url}/model/${NOVA}/converse`, { method: 'POST', headers: { authorization: 'Bearer some-api-key', 'content-type': 'application/json' }, body: JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'a' }] }], model: NOVA }) });
    expect(r.status).toBe(400);
    expect(r.headers.get('x-amzn-errortype')).toMatch(/^ValidationException/);
  });

  it('counts a Converse input for a Claude foundation model, and refuses other models and inference profiles', async () => {
    const input = { converse: { messages: [{ role: 'user' as const, content: [{ text: 'How many tokens is this?' }] }], system: [{ text: 'Be brief.' }] } };
    const counted = await client().send(new CountTokensCommand({ modelId: CLAUDE, input }));
    expect(counted.inputTokens).toBeGreaterThan(0);
    for (const modelId of [NOVA, `us.${CLAUDE}`]) {
      await expect(client().send(new CountTokensCommand({ modelId, input }))).rejects.toMatchObject({ name: 'ValidationException', $metadata: { httpStatusCode: 400 } });
    }
  });

  it('refuses a bad signature and an unknown access key as AWS does', async () => {
    await expect(client('wrong-secret-access-key-000000000000000').send(new InvokeModelCommand({ modelId: CLAUDE, contentType: 'application/json', body: claudeBody() })))
      .rejects.toMatchObject({ name: 'InvalidSignatureException', $metadata: { httpStatusCode: 403 } });
    await expect(client(SECRET, 'AKIAUNKNOWNKEY000000').send(new InvokeModelCommand({ modelId: CLAUDE, contentType: 'application/json', body: claudeBody() })))
      .rejects.toMatchObject({ name: 'UnrecognizedClientException', $metadata: { httpStatusCode: 403 } });
  });

  it('refuses model and stream in a Claude body, and a wrong anthropic_version (ValidationException)', async () => {
    for (const extra of [{ model: CLAUDE }, { stream: true }, { anthropic_version: '2023-06-01' }]) {
      await expect(client().send(new InvokeModelCommand({ modelId: CLAUDE, contentType: 'application/json', body: claudeBody(extra) })))
        .rejects.toMatchObject({ name: 'ValidationException', $metadata: { httpStatusCode: 400 } });
    }
  });

  it('answers a 429 behaviour as ThrottlingException, in a stream an exception event', async () => {
    mock.behave(SECRET, { status: 429, times: 1 });
    await expect(client().send(new InvokeModelCommand({ modelId: CLAUDE, contentType: 'application/json', body: claudeBody() })))
      .rejects.toMatchObject({ name: 'ThrottlingException', $metadata: { httpStatusCode: 429 } });
    mock.behave(SECRET, { streamError: { afterChunks: 1, event: 'error', data: { type: 'error', error: { type: 'api_error', message: 'boom' } } } });
    const out = await client().send(new InvokeModelWithResponseStreamCommand({ modelId: CLAUDE, contentType: 'application/json', body: claudeBody() }));
    await expect((async () => { for await (const _ of out.body!) { /* drained */ } })()).rejects.toMatchObject({ name: 'ModelStreamErrorException' });
  });
});
