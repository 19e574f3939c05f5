import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import OpenAI, { AzureOpenAI } from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { estimateTokens, startMockUpstream, type MockUpstream } from './mock-upstream';

let mock: MockUpstream;
const openai = (key = 'sk-openai-1', opts: Partial<ConstructorParameters<typeof OpenAI>[0]> = {}) =>
  new OpenAI({ apiKey: key, baseURL: `${mock.url}/v1`, maxRetries: 0, ...opts });
// SDK 1.x sends its apiKey as `Authorization: Bearer`; the mock, like a strict Anthropic upstream, wants `x-api-key`.
const anthropic = (key = 'sk-ant-1', opts: Partial<ConstructorParameters<typeof Anthropic>[0]> = {}) =>
  new Anthropic({ apiKey: key, baseURL: mock.url, maxRetries: 0, defaultHeaders: { 'x-api-key': key }, ...opts });
const hello = [{ role: 'user' as const, content: 'Say hello to the mock upstream' }];

beforeAll(async () => { mock = await startMockUpstream(); });
afterAll(async () => { await mock.close(); });
beforeEach(() => mock.reset());

describe('OpenAI chat completions', () => {
  it('answers whole, echoing the model, with usage derived from the lengths', async () => {
    const r = await openai().chat.completions.create({ model: 'gpt-4o-mini', messages: hello });
    const text = 'This is a mock answer from gpt-4o-mini.';
    expect(r.model).toBe('gpt-4o-mini');
    expect(r.id).toMatch(/^chatcmpl-/);
    expect(typeof r.created).toBe('number');
    expect(r.choices[0].message).toMatchObject({ role: 'assistant', content: text });
    expect(r.choices[0].finish_reason).toBe('stop');
    expect(r.usage).toMatchObject({ prompt_tokens: estimateTokens(hello[0].content), completion_tokens: estimateTokens(text) });
    expect(r.usage!.total_tokens).toBe(r.usage!.prompt_tokens + r.usage!.completion_tokens);
    const rec = mock.requests[0];
    expect(rec).toMatchObject({ method: 'POST', path: '/v1/chat/completions', credential: 'sk-openai-1' });
    expect(rec.headers.authorization).toBe('Bearer sk-openai-1');
    expect((rec.body as { messages: unknown }).messages).toEqual(hello);
  });

  it('streams the text in the asked number of chunks, with a usage chunk only when asked', async () => {
    mock.behave('sk-openai-1', { text: 'one two three four five', chunks: 5 });
    const plain = await openai().chat.completions.create({ model: 'gpt-4o', messages: hello, stream: true });
    const deltas: string[] = [];
    let usageSeen = false;
    for await (const c of plain) {
      if (c.usage) usageSeen = true;
      if (c.choices[0]?.delta.content) deltas.push(c.choices[0].delta.content);
      expect(c.model).toBe('gpt-4o');
    }
    expect(deltas).toHaveLength(5);
    expect(deltas.join('')).toBe('one two three four five');
    expect(usageSeen).toBe(false);

    mock.behave('sk-openai-1', { usage: { prompt_tokens: 100, completion_tokens: 40, reasoning_tokens: 10, cached_tokens: 30 } });
    const withUsage = await openai().chat.completions.create({ model: 'gpt-4o', messages: hello, stream: true, stream_options: { include_usage: true } });
    const chunks = [];
    for await (const c of withUsage) chunks.push(c);
    const last = chunks[chunks.length - 1];
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({
      prompt_tokens: 100, completion_tokens: 40, total_tokens: 140,
      prompt_tokens_details: { cached_tokens: 30 }, completion_tokens_details: { reasoning_tokens: 10 },
    });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    expect(chunks.some((c) => c.choices[0]?.finish_reason === 'stop')).toBe(true);
  });

  it('works through the SDK stream helper (finalChatCompletion)', async () => {
    const s = openai().chat.completions.stream({ model: 'gpt-4o', messages: hello, stream_options: { include_usage: true } });
    const final = await s.finalChatCompletion();
    expect(final.choices[0].message.content).toBe('This is a mock answer from gpt-4o.');
    expect(final.usage?.completion_tokens).toBe(estimateTokens('This is a mock answer from gpt-4o.'));
  });
});

describe('OpenAI responses and embeddings', () => {
  it('answers a response whole and streamed, usage on response.completed', async () => {
    const r = await openai().responses.create({ model: 'gpt-4.1', input: 'hello there', instructions: 'be brief' });
    expect(r.output_text).toBe('This is a mock answer from gpt-4.1.');
    expect(r.model).toBe('gpt-4.1');
    expect(r.usage).toMatchObject({ input_tokens: estimateTokens('be brief\nhello there'), output_tokens: estimateTokens(r.output_text) });

    mock.behave('sk-openai-1', { text: 'abcdef', chunks: 3, usage: { prompt_tokens: 7, completion_tokens: 9, reasoning_tokens: 4 }, times: 1 });
    const events = await openai().responses.create({ model: 'gpt-4.1', input: [{ role: 'user', content: 'hi' }], stream: true });
    const deltas: string[] = [];
    let completed: OpenAI.Responses.Response | undefined;
    for await (const e of events) {
      if (e.type === 'response.output_text.delta') deltas.push(e.delta);
      if (e.type === 'response.completed') completed = e.response;
    }
    expect(deltas).toEqual(['ab', 'cd', 'ef']);
    expect(completed?.usage).toMatchObject({ input_tokens: 7, output_tokens: 9, total_tokens: 16, output_tokens_details: { reasoning_tokens: 4 } });

    const helper = openai().responses.stream({ model: 'gpt-4.1', input: 'hi' });
    expect((await helper.finalResponse()).output_text).toBe('This is a mock answer from gpt-4.1.');
  });

  it('resolves an item_reference to an item of a response this key stored, and refuses any other as OpenAI does', async () => {
    const r = await openai('sk-openai-refs').responses.create({ model: 'gpt-4.1', input: 'hello there' });
    const ref = (id: string) => ({ type: 'item_reference' as const, id });
    const again = await openai('sk-openai-refs').responses.create({ model: 'gpt-4.1', input: [{ role: 'user', content: 'hello there' }, ref(r.output[0].id!), { role: 'user', content: 'more' }] });
    expect(again.status).toBe('completed');
    for (const [key, id] of [['sk-openai-other', r.output[0].id!], ['sk-openai-refs', 'msg_unknown']] as const) {
      const err: any = await openai(key).responses.create({ model: 'gpt-4.1', input: [ref(id)] }).catch((e) => e);
      expect(err.status).toBe(400);
      expect(err.error).toMatchObject({ type: 'invalid_request_error', message: `Item with id '${id}' not found.` });
    }
  });

  it('embeds in float and in the base64 encoding the SDK asks for by default', async () => {
    const viaSdk = await openai().embeddings.create({ model: 'text-embedding-3-small', input: ['alpha', 'beta'] });
    expect(mock.requests[0].body).toMatchObject({ encoding_format: 'base64' });
    const floats = await openai().embeddings.create({ model: 'text-embedding-3-small', input: ['alpha', 'beta'], encoding_format: 'float' });
    expect(viaSdk.data).toHaveLength(2);
    expect(viaSdk.data[0].embedding).toHaveLength(8);
    for (let i = 0; i < 8; i++) expect(viaSdk.data[0].embedding[i]).toBeCloseTo(floats.data[0].embedding[i], 5);
    expect(floats.data[0].embedding).not.toEqual(floats.data[1].embedding);
    expect(floats.usage.prompt_tokens).toBe(estimateTokens('alpha') + estimateTokens('beta'));
    const sized = await openai().embeddings.create({ model: 'm', input: 'x', dimensions: 20, encoding_format: 'float' });
    expect(sized.data[0].embedding).toHaveLength(20);
  });
});

describe('Anthropic messages', () => {
  it('answers whole and streamed, usage split over message_start and message_delta', async () => {
    const m = await anthropic().messages.create({ model: 'claude-haiku-4-5', max_tokens: 50, system: 'sys', messages: hello });
    expect(m.model).toBe('claude-haiku-4-5');
    expect(m.content).toEqual([{ type: 'text', text: 'This is a mock answer from claude-haiku-4-5.' }]);
    expect(m.usage.input_tokens).toBe(estimateTokens(`sys\n${hello[0].content}`));
    expect(mock.requests[0]).toMatchObject({ path: '/v1/messages', credential: 'sk-ant-1' });
    expect(mock.requests[0].headers['anthropic-version']).toBeTruthy();

    mock.behave('sk-ant-1', { text: 'streamed words here', chunks: 4, usage: { prompt_tokens: 50, completion_tokens: 12, cached_tokens: 20 }, times: 1 });
    const events = await anthropic().messages.create({ model: 'claude-sonnet-4-5', max_tokens: 50, messages: hello, stream: true });
    const types: string[] = [];
    let text = '';
    for await (const e of events) {
      types.push(e.type);
      if (e.type === 'message_start') expect(e.message.usage).toMatchObject({ input_tokens: 30, cache_read_input_tokens: 20 });
      if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text;
      if (e.type === 'message_delta') expect(e.usage.output_tokens).toBe(12);
    }
    expect(text).toBe('streamed words here');
    expect(types[0]).toBe('message_start');
    expect(types.filter((t) => t === 'content_block_delta')).toHaveLength(4);
    expect(types.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);

    const final = await anthropic().messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 50, messages: hello }).finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'text', text: 'This is a mock answer from claude-sonnet-4-5.' });
  });

  it('requires x-api-key, anthropic-version and max_tokens like the real API', async () => {
    const post = (headers: Record<string, string>, body: unknown) => fetch(`${mock.url}/v1/messages`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
    });
    const ok = { model: 'claude-x', max_tokens: 5, messages: hello };
    const noVersion = await post({ 'x-api-key': 'k' }, ok);
    expect(noVersion.status).toBe(400);
    expect(await noVersion.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    const noKey = await post({ 'anthropic-version': '2023-06-01' }, ok);
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    expect((await post({ 'x-api-key': 'k', 'anthropic-version': '2023-06-01' }, { ...ok, max_tokens: undefined })).status).toBe(400);
  });
});

describe('Azure-style deployments', () => {
  it('records the deployment and api-version and takes the api-key header', async () => {
    const az = new AzureOpenAI({ endpoint: mock.url, apiKey: 'azure-key-1', apiVersion: '2024-10-21', deployment: 'chat-dep', maxRetries: 0 });
    const r = await az.chat.completions.create({ model: 'gpt-4o', messages: hello });
    expect(r.choices[0].message.content).toBe('This is a mock answer from gpt-4o.');
    expect(mock.requests[0]).toMatchObject({
      path: '/openai/deployments/chat-dep/chat/completions', deployment: 'chat-dep', apiVersion: '2024-10-21', credential: 'azure-key-1',
    });
    const e = await new AzureOpenAI({ endpoint: mock.url, apiKey: 'azure-key-1', apiVersion: '2024-10-21', deployment: 'emb-dep' })
      .embeddings.create({ model: 'text-embedding-3-small', input: 'x' });
    expect(e.data[0].embedding).toHaveLength(8);
    expect(mock.requests[1]).toMatchObject({ deployment: 'emb-dep', path: '/openai/deployments/emb-dep/embeddings' });
    const noVersion = await fetch(`${mock.url}/openai/deployments/d/chat/completions`, {
      method: 'POST', headers: { 'api-key': 'k', 'content-type': 'application/json' }, body: JSON.stringify({ messages: hello }),
    });
    expect(noVersion.status).toBe(404);
  });
});

describe('Vertex-style cloud platform', () => {
  const email = 'svc@project.iam.gserviceaccount.com';
  let keys: { privateKey: KeyObject; publicKey: KeyObject };
  beforeAll(() => { keys = generateKeyPairSync('rsa', { modulusLength: 2048 }); });

  const jwt = (claims: Record<string, unknown>, key: KeyObject = keys.privateKey, alg = 'RS256') => {
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const head = `${b64({ alg, typ: 'JWT' })}.${b64(claims)}`;
    return `${head}.${sign('RSA-SHA256', Buffer.from(head), key).toString('base64url')}`;
  };
  const claims = () => {
    const iat = Math.floor(Date.now() / 1000);
    return { iss: email, scope: 'https://www.googleapis.com/auth/cloud-platform', aud: `${mock.url}/token`, iat, exp: iat + 3600 };
  };
  const exchange = (assertion: string, grant = 'urn:ietf:params:oauth:grant-type:jwt-bearer') => fetch(`${mock.url}/token`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: grant, assertion }).toString(),
  });
  const vertex = (token: string) =>
    openai(token, { baseURL: `${mock.url}/v1/projects/proj-1/locations/us-central1/endpoints/openapi` });

  it('exchanges a signed JWT for an access token that the chat endpoint accepts', async () => {
    mock.trustServiceAccount(email, keys.publicKey.export({ type: 'spki', format: 'pem' }).toString());
    const res = await exchange(jwt(claims()));
    expect(res.status).toBe(200);
    const tok = await res.json() as { access_token: string; expires_in: number; token_type: string };
    expect(tok).toMatchObject({ expires_in: 3600, token_type: 'Bearer' });
    const r = await vertex(tok.access_token).chat.completions.create({ model: 'google/gemini-2.0-flash', messages: hello });
    expect(r.model).toBe('google/gemini-2.0-flash');
    expect(mock.requests[1]).toMatchObject({ project: 'proj-1', location: 'us-central1', credential: tok.access_token });
    expect(mock.tokenRequests).toBe(1);

    // A behaviour registered under the service account applies to its tokens.
    mock.behave(email, { status: 503, times: 1 });
    await expect(vertex(tok.access_token).chat.completions.create({ model: 'm', messages: hello })).rejects.toMatchObject({ status: 503 });
    await expect(vertex('ya29.unknown').chat.completions.create({ model: 'm', messages: hello })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    mock.revokeTokens();
    await expect(vertex(tok.access_token).chat.completions.create({ model: 'm', messages: hello })).rejects.toMatchObject({ status: 401 });
  });

  it('serves Claude at rawPredict, streamRawPredict and count-tokens as strictly as Vertex', async () => {
    mock.trustServiceAccount(email, keys.publicKey.export({ type: 'spki', format: 'pem' }).toString());
    const { access_token: token } = await (await exchange(jwt(claims()))).json() as { access_token: string };
    const models = `${mock.url}/v1/projects/proj-1/locations/us-east5/publishers/anthropic/models/`;
    const post = (path: string, body: Record<string, unknown>, auth = token) =>
      fetch(models + path, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${auth}` }, body: JSON.stringify(body) });
    const ask = { anthropic_version: 'vertex-2023-10-16', max_tokens: 50, messages: hello };
    const whole = await post('claude-sonnet-4@20250514:rawPredict', ask);
    expect(whole.status).toBe(200);
    expect(await whole.json()).toMatchObject({ type: 'message', model: 'claude-sonnet-4@20250514', content: [{ type: 'text' }] });
    expect(mock.requests.at(-1)).toMatchObject({ project: 'proj-1', location: 'us-east5', credential: token });
    const streamed = await post('claude-sonnet-4@20250514:streamRawPredict', { ...ask, stream: true });
    expect(streamed.headers.get('content-type')).toMatch(/text\/event-stream/);
    expect(await streamed.text()).toMatch(/event: message_stop/);
    const { max_tokens: _, ...countAsk } = ask;
    const counted = await post('count-tokens:rawPredict', { ...countAsk, model: 'claude-sonnet-4@20250514' });
    expect(await counted.json()).toEqual({ input_tokens: estimateTokens(hello[0].content) });

    const refusals: [Response, number, RegExp][] = [
      [await post('claude-sonnet-4@20250514:rawPredict', { ...ask, model: 'claude-sonnet-4@20250514' }), 400, /model: Extra inputs/],
      [await post('claude-sonnet-4@20250514:rawPredict', { ...ask, anthropic_version: undefined }), 400, /anthropic_version: Field required/],
      [await post('claude-sonnet-4@20250514:rawPredict', { ...ask, stream: true }), 400, /streamRawPredict/],
      [await post('claude-sonnet-4@20250514:streamRawPredict', ask), 400, /stream/],
      [await post('count-tokens:rawPredict', countAsk), 400, /model: Field required/],
      // count_tokens takes no max_tokens (nor any field of a Messages call beyond the prompt).
      [await post('count-tokens:rawPredict', { ...ask, model: 'claude-sonnet-4@20250514' }), 400, /max_tokens: Extra inputs are not permitted/],
      [await post('claude-sonnet-4@20250514:rawPredict', ask, 'ya29.unknown'), 401, /credentials/],
    ];
    for (const [r, status, message] of refusals) {
      expect(r.status).toBe(status);
      expect(await r.json()).toMatchObject({ type: 'error', error: { message: expect.stringMatching(message) } });
    }
  });

  it('refuses malformed grants, wrong claims, bad signatures and honours token behaviours', async () => {
    mock.trustServiceAccount(email, keys.publicKey.export({ type: 'spki', format: 'pem' }).toString());
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const refusals = [
      await exchange(jwt(claims()), 'client_credentials'),
      await exchange('not-a-jwt'),
      await exchange(jwt(claims(), keys.privateKey, 'HS256')),
      await exchange(jwt({ ...claims(), scope: undefined })),
      await exchange(jwt({ ...claims(), aud: `${mock.url}/elsewhere` })),
      await exchange(jwt({ ...claims(), exp: Math.floor(Date.now() / 1000) - 10 })),
      await exchange(jwt(claims(), other)),
    ];
    for (const r of refusals) {
      expect(r.status).toBe(400);
      expect(await r.json()).toHaveProperty('error');
    }
    expect(mock.tokenRequests).toBe(refusals.length);

    mock.behaveToken(email, { status: 500, times: 1 });
    expect((await exchange(jwt(claims()))).status).toBe(500);
    mock.behaveToken(email, { expiresIn: 1 });
    const short = await (await exchange(jwt(claims()))).json() as { access_token: string; expires_in: number };
    expect(short.expires_in).toBe(1);
    await new Promise((r) => setTimeout(r, 1100));
    await expect(vertex(short.access_token).chat.completions.create({ model: 'm', messages: hello })).rejects.toMatchObject({ status: 401 });
  });
});

describe('failure behaviours', () => {
  it('answers a status in each provider format, with Retry-After, for the next N requests only', async () => {
    mock.behave('sk-openai-1', { status: 429, retryAfter: 7, times: 1 });
    const limited = await fetch(`${mock.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: 'Bearer sk-openai-1', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: hello }),
    });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    expect(await limited.json()).toMatchObject({ error: { message: expect.any(String), type: expect.any(String), code: 'rate_limit_exceeded' } });
    await expect(openai().chat.completions.create({ model: 'gpt-4o', messages: hello })).resolves.toBeTruthy();
    // Another credential is not affected.
    mock.behave('sk-openai-2', { status: 500 });
    await expect(openai('sk-openai-2').chat.completions.create({ model: 'm', messages: hello })).rejects.toBeInstanceOf(OpenAI.InternalServerError);
    await expect(openai('sk-openai-1').chat.completions.create({ model: 'm', messages: hello })).resolves.toBeTruthy();

    mock.behave('sk-openai-1', { status: 429, retryAfter: 0, times: 2 });
    const retried = await openai('sk-openai-1', { maxRetries: 3 }).chat.completions.create({ model: 'm', messages: hello });
    expect(retried.choices[0].message.content).toBeTruthy();
    expect(mock.requests.filter((r) => r.credential === 'sk-openai-1')).toHaveLength(6);

    mock.behave('sk-ant-1', { status: 529 });
    const err = await anthropic().messages.create({ model: 'c', max_tokens: 5, messages: hello }).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(err.status).toBe(529);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
  });

  it('delays the headers and paces the chunks', async () => {
    mock.behave('sk-openai-1', { delayMs: 150 });
    let t0 = Date.now();
    await openai().chat.completions.create({ model: 'm', messages: hello });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);

    mock.behave('sk-openai-1', { chunks: 3, chunkDelayMs: 80 });
    t0 = Date.now();
    const arrivals: number[] = [];
    for await (const c of await openai().chat.completions.create({ model: 'm', messages: hello, stream: true })) {
      if (c.choices[0]?.delta.content) arrivals.push(Date.now() - t0);
    }
    expect(arrivals).toHaveLength(3);
    expect(arrivals[2] - arrivals[0]).toBeGreaterThanOrEqual(140);
  });

  it('cutAfterChunks makes the SDK stream throw after the chunks it got', async () => {
    mock.behave('sk-openai-1', { chunks: 5, cutAfterChunks: 2 });
    const got: string[] = [];
    const run = async () => {
      for await (const c of await openai().chat.completions.create({ model: 'm', messages: hello, stream: true })) {
        if (c.choices[0]?.delta.content) got.push(c.choices[0].delta.content);
      }
    };
    await expect(run()).rejects.toThrow();
    expect(got).toHaveLength(2);

    mock.behave('sk-ant-1', { chunks: 4, cutAfterChunks: 1 });
    const stream = anthropic().messages.stream({ model: 'c', max_tokens: 5, messages: hello });
    await expect(stream.finalMessage()).rejects.toThrow();
  });

  it('stallAfterChunks keeps the socket open without sending more, until the client gives up', async () => {
    mock.behave('sk-openai-1', { chunks: 4, stallAfterChunks: 1 });
    const ac = new AbortController();
    const got: string[] = [];
    let ended = false;
    const run = (async () => {
      for await (const c of await openai().chat.completions.create({ model: 'm', messages: hello, stream: true }, { signal: ac.signal })) {
        if (c.choices[0]?.delta.content) got.push(c.choices[0].delta.content);
      }
      ended = true;
    })();
    for (let i = 0; i < 100 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    expect(got).toHaveLength(1);
    expect(ended).toBe(false);
    ac.abort();
    // The SDK ends the iteration quietly on abort (or rejects with an abort error).
    await run.catch((e: Error) => expect(e.name).toMatch(/Abort/));
    expect(got).toHaveLength(1);
    expect(mock.requests).toHaveLength(1);
  });

  it('close() ends stalled streams instead of hanging', async () => {
    const own = await startMockUpstream();
    own.behave('k', { stallAfterChunks: 0 });
    const res = await fetch(`${own.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: hello, stream: true }),
    });
    expect(res.status).toBe(200);
    const t0 = Date.now();
    await own.close();
    expect(Date.now() - t0).toBeLessThan(1000);
    await expect(res.text()).rejects.toThrow();
  });

  it('reset() forgets requests and behaviours; unknown paths and missing keys are refused', async () => {
    mock.behave('sk-openai-1', { status: 500 });
    mock.reset();
    expect(mock.requests).toHaveLength(0);
    await expect(openai().chat.completions.create({ model: 'm', messages: hello })).resolves.toBeTruthy();
    expect((await fetch(`${mock.url}/v1/nothing`, { method: 'POST' })).status).toBe(404);
    const noKey = await fetch(`${mock.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(noKey.status).toBe(401);
    const badJson = await fetch(`${mock.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: 'Bearer k', 'content-type': 'application/json' }, body: '{nope',
    });
    expect(badJson.status).toBe(400);
    expect(mock.requests.map((r) => r.path)).toEqual(['/v1/chat/completions', '/v1/nothing', '/v1/chat/completions', '/v1/chat/completions']);
  });
});
