/**
 * Hosted and grouped tools on keys that lack them (formats/tools.ts): Codex's own request (a
 * `namespace` tool and a `web_search` tool, captured from Codex CLI 0.171.0) on chat-only,
 * Anthropic and Vertex-Claude keys; OpenAI's web search run as Anthropic's and billed per
 * search; Anthropic's server tools on an OpenAI-format key; UNSUPPORTED_TOOLS=refuse.
 */
import { readFileSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drain, secret, startProxyFixture, type ProxyFixture } from '../test-fixture';
import { defaultPrice } from '../../domain/pricing/cost';

let f: ProxyFixture;
const PRICE = { InputText: 1, OutputText: 5, WebSearch: 10 };
const CLAUDE = 'claude-tools-1';
const GPT = 'gpt-tools-1';
beforeAll(async () => {
  f = await startProxyFixture();
  await f.config({ PRICING: JSON.stringify({ ChatPricing: { [CLAUDE]: PRICE, [GPT]: PRICE } }) });
});
afterAll(async () => { await f?.close(); });

/** The first request Codex CLI 0.171.0 (`codex exec`) sent to its model provider, as it sent it. */
const CODEX = JSON.parse(readFileSync(new URL('./fixtures/codex-0.171.0-request.json', import.meta.url), 'utf8'));
const NAMESPACED = ['close_agent', 'resume_agent', 'send_input', 'spawn_agent', 'wait_agent'];

const lastBody = () => f.mock.requests.at(-1)!.body as Record<string, any>;
const toolNamesSent = (kind: Kind, body: Record<string, any>): string[] => body.tools.map((t: any) => (kind === 'chat-only' ? t.function.name : t.name));

type Kind = 'chat-only' | 'anthropic' | 'vertex-anthropic';
const UPSTREAM_PATH: Record<Kind, RegExp> = { 'chat-only': /^\/v1\/chat\/completions$/, anthropic: /^\/v1\/messages$/, 'vertex-anthropic': /\/publishers\/anthropic\/models\/claude-tools-1:(?:stream)?[rR]awPredict$/ };

/** A key of that kind on a Level of its own, the mock credential its behaviour is set on, and a user routed there. */
async function keyOf(kind: Kind, level: number, label: string) {
  const up = secret(label);
  if (kind === 'vertex-anthropic') {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const email = `${label}@proj-t.iam.gserviceaccount.com`;
    f.mock.trustServiceAccount(email, publicKey.export({ type: 'spki', format: 'pem' }) as string);
    await f.addKey(level, up, { config: { provider_type: 'vertex', publisher: 'anthropic', base_url: f.mock.url, project_id: 'proj-t', client_email: email, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }) } });
    return { credential: email, user: await f.account({ level }) };
  }
  await f.addKey(level, up, { config: kind === 'anthropic' ? { provider_type: 'anthropic' } : { provider_type: 'standard', responses: false } });
  return { credential: up, user: await f.account({ level }) };
}

async function requestLog(key: string) {
  await f.gw.gateway.usage.flush();
  return (await f.gw.as(key).get('/dashboard/requests')).body.data as Record<string, any>[];
}

describe("Codex's request on keys without the Responses API", () => {
  const kinds: [Kind, number][] = [['chat-only', 401], ['anthropic', 402], ['vertex-anthropic', 403]];
  for (const [kind, level] of kinds) {
    it(`runs on a ${kind} key: the namespace flattened and answered under Codex's names, web_search dropped and said so, whole and streamed`, async () => {
      const { credential, user } = await keyOf(kind, level, `codex-${kind}`);
      f.mock.behave(credential, { toolCall: { name: 'close_agent', arguments: { target: 'agent-7' } }, text: 'Closed it.' });
      const client = f.openai(user.key);
      const model = kind === 'chat-only' ? GPT : CLAUDE;
      for (const stream of [false, true]) {
        const request = { ...CODEX, model, stream };
        let call: any;
        let dropped: string | null;
        if (stream) {
          const { data, response } = await client.responses.create(request).withResponse();
          dropped = response.headers.get('x-switchyard-dropped');
          const events = (await drain(data as unknown as AsyncIterable<any>)).items;
          const added = events.find((e) => e.type === 'response.output_item.added' && e.item.type === 'function_call');
          expect(added.item).toMatchObject({ name: 'close_agent', namespace: 'multi_agent_v1' });
          const done = events.at(-1);
          expect(done.type).toBe('response.completed');
          call = done.response.output.find((o: any) => o.type === 'function_call');
        } else {
          const { data, response } = await client.responses.create(request).withResponse();
          dropped = response.headers.get('x-switchyard-dropped');
          call = (data as any).output.find((o: any) => o.type === 'function_call');
        }
        // The client sees its own function under its own namespace, as Codex routes it.
        expect(call).toMatchObject({ type: 'function_call', name: 'close_agent', namespace: 'multi_agent_v1', arguments: '{"target":"agent-7"}' });
        expect(dropped).toBe('web_search');
        // Upstream: the namespace's five functions beside Codex's own, nothing the provider lacks.
        expect(f.mock.requests.at(-1)!.path).toMatch(UPSTREAM_PATH[kind]);
        const sent = lastBody();
        const names = toolNamesSent(kind, sent);
        expect(names).toEqual(expect.arrayContaining(NAMESPACED));
        expect(names).toHaveLength(CODEX.tools.length - 2 + NAMESPACED.length);
        expect(JSON.stringify(sent.tools)).not.toMatch(/"type":"(?:namespace|web_search)/);
        if (kind === 'chat-only') expect(sent.tools.every((t: any) => t.type === 'function')).toBe(true);
        else expect(sent.tools.every((t: any) => t.type === undefined)).toBe(true);

        // The next turn sends the call back as Codex does (name and namespace): it reaches the provider under its flat name.
        const next = { ...request, input: [...CODEX.input, call, { type: 'function_call_output', call_id: call.call_id, output: 'closed' }] };
        const { data: second, response: head } = await client.responses.create({ ...next, stream: false }).withResponse();
        expect(head.headers.get('x-switchyard-dropped')).toBe('web_search');
        expect((second as any).output_text).toBe('Closed it.');
        const again = lastBody();
        if (kind === 'chat-only') {
          expect(again.messages.at(-2).tool_calls[0].function).toEqual({ name: 'close_agent', arguments: '{"target":"agent-7"}' });
        } else {
          expect(again.messages.at(-2).content.at(-1)).toMatchObject({ type: 'tool_use', name: 'close_agent', input: { target: 'agent-7' } });
        }
      }
      const log = await requestLog(user.key);
      expect(log).toHaveLength(4);
      expect(log.every((r) => r.status === 'ok' && JSON.stringify(r.dropped_tools) === '["web_search"]')).toBe(true);
    });
  }

  it('is refused with 400 unsupported_by_provider naming the tool under UNSUPPORTED_TOOLS=refuse, no key called', async () => {
    const { credential, user } = await keyOf('chat-only', 404, 'codex-refuse');
    f.mock.behave(credential, { text: 'never' });
    await f.config({ UNSUPPORTED_TOOLS: 'refuse' });
    try {
      const n = f.mock.requests.length;
      for (const stream of [false, true]) {
        const err: any = await f.openai(user.key).responses.create({ ...CODEX, model: GPT, stream }).catch((e) => e);
        expect(err.status).toBe(400);
        expect(err.error).toMatchObject({ code: 'unsupported_by_provider', message: expect.stringContaining('a key without the Responses API has no web_search tool') });
      }
      expect(f.mock.requests.length).toBe(n);
      expect(await requestLog(user.key)).toEqual([]);
    } finally {
      await f.config({ UNSUPPORTED_TOOLS: '' });
    }
  });
});

describe('web search on an Anthropic key', () => {
  const search = { query: 'switchyard gateway', results: [{ url: 'https://example.com/a', title: 'A' }, { url: 'https://example.com/b', title: 'B' }] };
  const usage = { prompt_tokens: 1000, completion_tokens: 40 };
  // 1,000 input and 40 output tokens, and one search at 10 USD per thousand.
  const BILLED = (1000 * PRICE.InputText + 40 * PRICE.OutputText) / 1e6 + 10 / 1000;

  it("runs OpenAI's web_search as Anthropic's, answered as web_search_call items and billed per search, whole and streamed", async () => {
    const { credential, user } = await keyOf('anthropic', 410, 'search-responses');
    f.mock.behave(credential, { webSearch: search, text: 'Switchyard routes calls.', usage });
    const client = f.openai(user.key);
    const request = { model: CLAUDE, input: 'What is switchyard?', tools: [{ type: 'web_search' as const, filters: { allowed_domains: ['example.com'] } }], include: ['web_search_call.action.sources' as const] };
    const whole = await client.responses.create(request).withResponse();
    expect(whole.response.headers.get('x-switchyard-dropped')).toBeNull();
    expect(lastBody().tools).toEqual([{ type: 'web_search_20250305', name: 'web_search', allowed_domains: ['example.com'] }]);
    const item = { type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'switchyard gateway', sources: [{ type: 'url', url: 'https://example.com/a' }, { type: 'url', url: 'https://example.com/b' }] } };
    expect(whole.data.output.map((o) => o.type)).toEqual(['web_search_call', 'message']);
    expect(whole.data.output[0]).toMatchObject(item);
    expect(whole.data.output_text).toBe('Switchyard routes calls.');

    const events = (await drain(await client.responses.create({ ...request, stream: true }))).items as any[];
    expect(events.filter((e) => e.type.startsWith('response.web_search_call.')).map((e) => e.type))
      .toEqual(['response.web_search_call.in_progress', 'response.web_search_call.searching', 'response.web_search_call.completed']);
    const done = events.at(-1);
    expect(done.type).toBe('response.completed');
    expect(done.response.output[0]).toMatchObject(item);

    const rows = await f.usage(user.id);
    expect(rows.map((r) => [r.prompt, r.completion])).toEqual([[1000, 40], [1000, 40]]);
    for (const r of rows) expect(r.credit_used).toBeCloseTo(BILLED, 12);
    const log = await requestLog(user.key);
    expect(log.map((r) => r.units)).toEqual([{ web_searches: 1 }, { web_searches: 1 }]);
  });

  it("bills an Anthropic client's own web search at the catalogue's 10 USD per thousand searches", async () => {
    const model = 'claude-sonnet-4-6';
    const price = defaultPrice(model)!;
    expect(price.WebSearch).toBe(10);
    const { credential, user } = await keyOf('anthropic', 411, 'search-messages');
    f.mock.behave(credential, { webSearch: search, text: 'Found it.', usage });
    const client = f.anthropic(user.key);
    const params = { model, max_tokens: 200, messages: [{ role: 'user' as const, content: 'Search it' }], tools: [{ type: 'web_search_20250305' as const, name: 'web_search' as const, max_uses: 2 }] };
    const whole = await client.messages.create(params);
    expect(whole.usage.server_tool_use).toEqual({ web_search_requests: 1 });
    expect(whole.content.map((b) => b.type)).toEqual(['server_tool_use', 'web_search_tool_result', 'text']);
    await client.messages.stream(params).finalMessage();
    const rows = await f.usage(user.id);
    const expected = (1000 * price.InputText + 40 * price.OutputText) / 1e6 + (1 * 10) / 1000;
    expect(rows).toHaveLength(2);
    for (const r of rows) expect(r.credit_used).toBeCloseTo(expected, 12);
  });

  it('is refused by the mock as Anthropic refuses a server tool version it does not know', async () => {
    const { user } = await keyOf('anthropic', 412, 'search-unknown');
    const err: any = await f.anthropic(user.key).messages.create({
      model: CLAUDE, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'web_search_20990101', name: 'web_search' } as any],
    }).catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.error.error.message).toMatch(/^tools\.0: Input tag 'web_search_20990101' found using 'type' does not match any of the expected tags: /);
  });
});

describe("Anthropic's server tools on an OpenAI-format key", () => {
  const weather = { name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } };
  const tools = [weather, { type: 'web_search_20250305', name: 'web_search', max_uses: 3 }, { type: 'code_execution_20250825', name: 'code_execution' }] as any[];

  it('are dropped and said so, whole and streamed; under UNSUPPORTED_TOOLS=refuse the call gets 400 naming the tool', async () => {
    const up = secret('a2o-server-tools');
    await f.addKey(420, up);
    const user = await f.account({ level: 420 });
    f.mock.behave(up, { text: 'Sunny.' });
    const client = f.anthropic(user.key);
    const params = { model: CLAUDE, max_tokens: 100, messages: [{ role: 'user' as const, content: 'Weather in Oslo?' }], tools };
    const whole = await client.messages.create(params).withResponse();
    expect(whole.response.headers.get('x-switchyard-dropped')).toBe('web_search,code_execution');
    expect(whole.data.content).toEqual([{ type: 'text', text: 'Sunny.' }]);
    expect(lastBody().tools).toEqual([{ type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: weather.input_schema } }]);
    const streamed = await client.messages.create({ ...params, stream: true }).withResponse();
    expect(streamed.response.headers.get('x-switchyard-dropped')).toBe('web_search,code_execution');
    await drain(streamed.data);
    const log = await requestLog(user.key);
    expect(log.map((r) => r.dropped_tools)).toEqual([['web_search', 'code_execution'], ['web_search', 'code_execution']]);

    // Only server tools: the provider gets no tools at all.
    await client.messages.create({ ...params, tools: tools.slice(1) });
    expect(lastBody().tools).toBeUndefined();

    await f.config({ UNSUPPORTED_TOOLS: 'refuse' });
    try {
      const err: any = await client.messages.create(params).catch((e) => e);
      expect(err.status).toBe(400);
      expect(err.error.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringContaining('an OpenAI-format key has no Anthropic server tool web_search_20250305') });
    } finally {
      await f.config({ UNSUPPORTED_TOOLS: '' });
    }
  });
});
