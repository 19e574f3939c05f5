/**
 * previous_response_id on keys without the Responses API: the gateway keeps the conversations it
 * answered through translation and continues them by their ID — the real openai SDK over
 * loopback, an Anthropic key and a chat-only key of the mock upstream, whole and streamed, on
 * one instance and across two sharing the database or Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { drain, secret, startInstancePair, startProxyFixture, type InstancePair, type ProxyFixture } from '../test-fixture';
import { insertAccount } from '../../testing/accounts';
import { needs } from '../../testing/requirements';
import { until } from '../../testing/until';
import { signThinking } from '../../testing/mock-upstream/anthropic';

type Kind = 'anthropic' | 'chat-only';
type Params = Record<string, unknown>;

const CLAUDE = 'claude-test-1';
const NATIVE = 'gpt-native-test-1';
const NATIVE_LEVEL = 249;
const PRICE = { InputText: 1, OutputText: 5 };
const PRICING = JSON.stringify({ ChatPricing: { [CLAUDE]: PRICE, [NATIVE]: PRICE } });
const tools = [{ type: 'function' as const, name: 'shell', description: 'Runs a command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } }, strict: false }];
const THINKING = 'I should list them.';
const behaviour = { toolCall: { name: 'shell', arguments: { cmd: 'ls' } }, thinking: THINKING, text: 'Two files.', usage: { prompt_tokens: 300, completion_tokens: 12 } };
const keyConfig = (kind: Kind) => (kind === 'anthropic' ? { provider_type: 'anthropic' } : { provider_type: 'standard', responses: false });

/** One Responses call, whole or streamed; a stream must end with response.completed. */
async function respond(client: OpenAI, streamed: boolean, params: Params): Promise<Record<string, any>> {
  if (!streamed) return (await client.responses.create(params as any)) as any;
  const stream = (await client.responses.create({ ...params, stream: true } as any)) as unknown as AsyncIterable<any>;
  const { items, error } = await drain(stream);
  expect(error).toBeUndefined();
  const done = items.at(-1) as any;
  expect(done.type).toBe('response.completed');
  expect((items[0] as any).response.id).toBe(done.response.id);
  return done.response;
}

/** What the key of `kind` was sent, as roles and their parts, to compare with the conversation so far. */
function history(kind: Kind, body: Record<string, any>) {
  if (kind === 'chat-only') {
    return body.messages.map((m: any) => ({ role: m.role, content: m.content, ...(m.tool_calls ? { calls: m.tool_calls.map((t: any) => t.id) } : {}), ...(m.tool_call_id ? { call: m.tool_call_id } : {}) }));
  }
  const blocks = (c: any) => (typeof c === 'string' ? [{ type: 'text', text: c }] : c);
  return [
    ...(body.system ? [{ role: 'system', content: typeof body.system === 'string' ? body.system : body.system.map((b: any) => b.text).join('') }] : []),
    ...body.messages.map((m: any) => ({ role: m.role, blocks: blocks(m.content).map((b: any) => b.type === 'tool_use' ? `tool_use:${b.id}` : b.type === 'tool_result' ? `tool_result:${b.tool_use_id}` : b.type === 'thinking' ? `thinking:${b.signature === signThinking(b.thinking) ? 'signed' : 'unsigned'}` : `text:${b.text}`) })),
  ];
}

/** The history the key should have been sent, built from the client's side of the conversation. */
function expected(kind: Kind, turns: { instructions?: string; user: string; callId: string; answered: boolean; next?: string }) {
  if (kind === 'chat-only') {
    return [
      ...(turns.instructions ? [{ role: 'system', content: turns.instructions }] : []),
      { role: 'user', content: turns.user },
      { role: 'assistant', content: null, calls: [turns.callId] },
      { role: 'tool', content: 'a.txt b.txt', call: turns.callId },
      ...(turns.answered ? [{ role: 'assistant', content: 'Two files.' }, { role: 'user', content: turns.next }] : []),
    ];
  }
  return [
    ...(turns.instructions ? [{ role: 'system', content: turns.instructions }] : []),
    { role: 'user', blocks: [`text:${turns.user}`] },
    { role: 'assistant', blocks: ['thinking:signed', `tool_use:${turns.callId}`] },
    { role: 'user', blocks: [`tool_result:${turns.callId}`] },
    ...(turns.answered ? [{ role: 'assistant', blocks: ['thinking:signed', 'text:Two files.'] }, { role: 'user', blocks: [`text:${turns.next}`] }] : []),
  ];
}

describe('previous_response_id on keys without the Responses API, on one instance', () => {
  let f: ProxyFixture;
  beforeAll(async () => {
    f = await startProxyFixture();
    await f.config({ PRICING, LEVEL_MAPPER: `${NATIVE}=${NATIVE_LEVEL}` });
  });
  afterAll(async () => { await f?.close(); });

  const lastBody = () => f.mock.requests.at(-1)!.body as Record<string, any>;
  let levelSerial = 240;

  for (const kind of ['anthropic', 'chat-only'] as const) {
    it(`continues a three-turn conversation with a function call on an ${kind} key, whole and streamed, each call billed once`, async () => {
      const up = secret(`stored-${kind}`);
      await f.addKey(++levelSerial, up, { config: keyConfig(kind) });
      const user = await f.account({ level: levelSerial });
      f.mock.behave(up, behaviour);
      const client = f.openai(user.key);
      const reasoning = { effort: 'low' };
      for (const streams of [[false, true, false], [true, false, true]]) {
        const first = await respond(client, streams[0], { model: CLAUDE, instructions: 'Be brief.', input: 'List the files', tools, reasoning });
        expect(first.id).toMatch(/^resp_gw_[0-9a-f]{48}$/);
        expect(first.store).toBe(true);
        const call = first.output.find((o: any) => o.type === 'function_call');
        expect(call).toMatchObject({ name: 'shell', arguments: '{"cmd":"ls"}' });

        // The function's output is the whole input of the next turn; the instructions are not carried over.
        const second = await respond(client, streams[1], { model: CLAUDE, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'a.txt b.txt' }], previous_response_id: first.id, tools, reasoning });
        expect(second.output.find((o: any) => o.type === 'message')).toMatchObject({ content: [{ type: 'output_text', text: 'Two files.' }] });
        expect(f.mock.requests.at(-1)!.credential).toBe(up);
        expect(lastBody().previous_response_id).toBeUndefined();
        expect(history(kind, lastBody())).toEqual(expected(kind, { user: 'List the files', callId: call.call_id, answered: false }));

        const third = await respond(client, streams[2], { model: CLAUDE, instructions: 'Answer in French.', input: 'And their sizes?', previous_response_id: second.id, tools, reasoning });
        expect(third.output.some((o: any) => o.type === 'function_call')).toBe(true);
        expect(history(kind, lastBody())).toEqual(expected(kind, { instructions: 'Answer in French.', user: 'List the files', callId: call.call_id, answered: true, next: 'And their sizes?' }));
      }
      const rows = await f.usage(user.id);
      expect(rows.map((r) => [r.endpoint, r.status, r.prompt, r.completion])).toEqual(Array(6).fill(['/v1/responses', 'ok', 300, 12]));
    });
  }

  it('serves an expanded conversation on a key with the Responses API too, which then continues it natively', async () => {
    const claude = secret('stored-mixed-anthropic');
    const native = secret('stored-mixed-native');
    await f.addKey(++levelSerial, claude, { config: keyConfig('anthropic') });
    await f.addKey(NATIVE_LEVEL, native);
    f.mock.behave(claude, behaviour);
    const user = await f.account({ level: levelSerial });
    const client = f.openai(user.key);
    const first = await respond(client, false, { model: CLAUDE, input: 'List the files', tools });
    const call = first.output.find((o: any) => o.type === 'function_call');
    const output = { type: 'function_call_output', call_id: call.call_id, output: 'a.txt b.txt' };
    const second = await respond(client, true, { model: NATIVE, input: [output], previous_response_id: first.id });
    expect(f.mock.requests.at(-1)).toMatchObject({ path: '/v1/responses', credential: native });
    expect(lastBody().previous_response_id).toBeUndefined();
    expect(lastBody().input).toEqual([{ type: 'message', role: 'user', content: 'List the files' }, ...first.output, output]);
    expect(second.id).not.toMatch(/^resp_gw_/);
    // The provider's own ID: pinned to its key, passed on as it is.
    await respond(client, false, { model: NATIVE, input: 'Thanks', previous_response_id: second.id });
    expect(lastBody().previous_response_id).toBe(second.id);
  });

  it('refuses a continuation it does not keep: store:false, unknown, another account\'s or another Owner\'s, calling no key', async () => {
    const up = secret('stored-refusals');
    await f.addKey(++levelSerial, up, { config: keyConfig('anthropic') });
    f.mock.behave(up, { text: 'Hello.' });
    const user = await f.account({ level: levelSerial });
    const client = f.openai(user.key);
    const unkept = await respond(client, true, { model: CLAUDE, input: 'Hi', store: false });
    expect(unkept.store).toBe(false);
    const kept = await respond(client, false, { model: CLAUDE, input: 'Hi' });
    const sibling = await f.account({ level: levelSerial });
    const owner = await insertAccount(f.gw, { role: 'owner', credit: 50 });
    const n = f.mock.requests.length;
    const refusals = [
      [client, unkept.id], [client, `resp_gw_${'0'.repeat(48)}`], [f.openai(sibling.key), kept.id], [f.openai(owner.key), kept.id],
    ] as const;
    for (const [who, id] of refusals) {
      const err: any = await who.responses.create({ model: CLAUDE, input: 'More', previous_response_id: id }).catch((e) => e);
      expect(err.status).toBe(400);
      expect(err.error).toMatchObject({ type: 'invalid_request_error', code: 'previous_response_not_found', message: expect.stringContaining(id) });
    }
    expect(f.mock.requests.length).toBe(n);
    // Its own continuation goes on.
    await respond(client, false, { model: CLAUDE, input: 'More', previous_response_id: kept.id });
    expect(history('anthropic', lastBody())).toEqual([
      { role: 'user', blocks: ['text:Hi'] }, { role: 'assistant', blocks: ['text:Hello.'] }, { role: 'user', blocks: ['text:More'] },
    ]);
  });

  it('holds the cost of the whole conversation at admission', async () => {
    const up = secret('stored-admission');
    await f.addKey(++levelSerial, up, { config: keyConfig('chat-only') });
    // A long answer, billed small: only the continuation's input is large.
    f.mock.behave(up, { text: 'x'.repeat(100_000), usage: { prompt_tokens: 10, completion_tokens: 5 } });
    // Above the minimum balance of 2 by 5 cents: a short call fits, 100 kB of input (at 1 USD per million tokens) does not.
    const user = await f.account({ level: levelSerial, credit: 2.05 });
    const client = f.openai(user.key);
    const first = await respond(client, false, { model: CLAUDE, input: 'Write a lot', max_output_tokens: 16 });
    const n = f.mock.requests.length;
    const err: any = await client.responses.create({ model: CLAUDE, input: 'More', max_output_tokens: 16, previous_response_id: first.id }).catch((e) => e);
    expect(err.status).toBe(402);
    expect(err.error.code).toBe('insufficient_balance');
    expect(f.mock.requests.length).toBe(n);
    await respond(client, false, { model: CLAUDE, input: 'More', max_output_tokens: 16 });
  });
});

/** A reference to each of `items` (as the AI SDK sends back the assistant's earlier items). */
const references = (items: { id: string }[]) => items.map((o) => ({ type: 'item_reference', id: o.id }));

describe('item_reference to items the gateway keeps', () => {
  let f: ProxyFixture;
  beforeAll(async () => {
    f = await startProxyFixture();
    await f.config({ PRICING, LEVEL_MAPPER: `${NATIVE}=${NATIVE_LEVEL - 1}` });
  });
  afterAll(async () => { await f?.close(); });

  const lastBody = () => f.mock.requests.at(-1)!.body as Record<string, any>;
  let levelSerial = 220;

  for (const kind of ['anthropic', 'chat-only'] as const) {
    it(`resolves references to earlier turns' items on an ${kind} key, whole and streamed, each call billed once`, async () => {
      const up = secret(`referenced-${kind}`);
      await f.addKey(++levelSerial, up, { config: keyConfig(kind) });
      const user = await f.account({ level: levelSerial });
      f.mock.behave(up, behaviour);
      const client = f.openai(user.key);
      const reasoning = { effort: 'low' };
      for (const streams of [[false, true, false], [true, false, true]]) {
        const user1 = { role: 'user', content: 'List the files' };
        const first = await respond(client, streams[0], { model: CLAUDE, input: [user1], tools, reasoning });
        const call = first.output.find((o: any) => o.type === 'function_call');
        expect(call.id).toMatch(/^fc_gw_[0-9a-f]{48}_\d+$/);
        if (kind === 'anthropic') expect(first.output[0].id).toMatch(/^rs_gw_[0-9a-f]{48}_0$/);
        // The client's own state: its message, references to the answer's items, the function's output.
        const output = { type: 'function_call_output', call_id: call.call_id, output: 'a.txt b.txt' };
        const turn2 = [user1, ...references(first.output), output];
        const second = await respond(client, streams[1], { model: CLAUDE, input: turn2, tools, reasoning });
        const message = second.output.find((o: any) => o.type === 'message');
        expect(message).toMatchObject({ id: expect.stringMatching(/^msg_gw_/), content: [{ type: 'output_text', text: 'Two files.' }] });
        expect(f.mock.requests.at(-1)!.credential).toBe(up);
        expect(history(kind, lastBody())).toEqual(expected(kind, { user: 'List the files', callId: call.call_id, answered: false }));

        const third = await respond(client, streams[2], { model: CLAUDE, input: [...turn2, ...references(second.output), { role: 'user', content: 'And their sizes?' }], tools, reasoning });
        expect(third.output.some((o: any) => o.type === 'function_call')).toBe(true);
        expect(history(kind, lastBody())).toEqual(expected(kind, { user: 'List the files', callId: call.call_id, answered: true, next: 'And their sizes?' }));
      }
      const rows = await f.usage(user.id);
      expect(rows.map((r) => [r.endpoint, r.status, r.prompt, r.completion])).toEqual(Array(6).fill(['/v1/responses', 'ok', 300, 12]));
    });
  }

  it('resolves a reference to a gateway item on a key with the Responses API, and passes the provider\'s own references through', async () => {
    const claude = secret('referenced-mixed-anthropic');
    const native = secret('referenced-mixed-native');
    await f.addKey(++levelSerial, claude, { config: keyConfig('anthropic') });
    await f.addKey(NATIVE_LEVEL - 1, native);
    f.mock.behave(claude, behaviour);
    const user = await f.account({ level: levelSerial });
    const client = f.openai(user.key);
    const first = await respond(client, false, { model: CLAUDE, input: 'List the files', tools });
    const output = { type: 'function_call_output', call_id: first.output[0].call_id, output: 'a.txt b.txt' };
    const turn2 = [{ role: 'user', content: 'List the files' }, ...references(first.output), output];
    const second = await respond(client, true, { model: NATIVE, input: turn2 });
    expect(f.mock.requests.at(-1)).toMatchObject({ path: '/v1/responses', credential: native });
    // The provider never saw the gateway's item: it gets the item itself.
    expect(lastBody().input).toEqual([turn2[0], ...first.output, output]);
    expect(second.output[0].id).not.toMatch(/_gw_/);
    // The provider's own item goes as a reference, which it resolves itself.
    const turn3 = [...turn2, ...references(second.output), { role: 'user', content: 'Thanks' }];
    await respond(client, false, { model: NATIVE, input: turn3 });
    expect(lastBody().input).toEqual([turn2[0], ...first.output, output, { type: 'item_reference', id: second.output[0].id }, turn3.at(-1)]);
  });

  it('refuses a reference it does not find with 400 naming it: unknown, store:false, another account\'s or another Owner\'s, calling no key', async () => {
    const up = secret('referenced-refusals');
    await f.addKey(++levelSerial, up, { config: keyConfig('chat-only') });
    f.mock.behave(up, { text: 'Hello.' });
    const user = await f.account({ level: levelSerial });
    const client = f.openai(user.key);
    const unkept = await respond(client, true, { model: CLAUDE, input: 'Hi', store: false });
    const kept = await respond(client, false, { model: CLAUDE, input: 'Hi' });
    const sibling = await f.account({ level: levelSerial });
    const owner = await insertAccount(f.gw, { role: 'owner', credit: 50 });
    const n = f.mock.requests.length;
    const refusals = [
      [client, unkept.output[0].id], [client, `msg_gw_${'0'.repeat(48)}_0`], [client, `${kept.output[0].id.replace(/_\d+$/, '')}_9`],
      [f.openai(sibling.key), kept.output[0].id], [f.openai(owner.key), kept.output[0].id],
    ] as const;
    for (const [who, id] of refusals) {
      for (const stream of [false, true]) {
        const err: any = await who.responses.create({ model: CLAUDE, input: [{ type: 'item_reference', id }, { role: 'user', content: 'More' }] as any, stream }).catch((e) => e);
        expect(err.status).toBe(400);
        expect(err.error).toMatchObject({ type: 'invalid_request_error', code: 'item_reference_not_found', message: expect.stringContaining(`item_reference ${id} was not found`) });
      }
    }
    // A provider's item, on a key without the Responses API: named too.
    const err: any = await client.responses.create({ model: CLAUDE, input: [{ type: 'item_reference', id: 'msg_67ccd2bed1ec8190' }] as any }).catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.error.message).toContain('item_reference msg_67ccd2bed1ec8190 was not found');
    expect(f.mock.requests.length).toBe(n);
    // Its own reference resolves.
    await respond(client, false, { model: CLAUDE, input: [{ role: 'user', content: 'Hi' }, { type: 'item_reference', id: kept.output[0].id }, { role: 'user', content: 'More' }] });
    expect(history('chat-only', lastBody())).toEqual([{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello.' }, { role: 'user', content: 'More' }]);
  });
});

/** Two gateways on one PostgreSQL database, sharing the conversations through Redis or the database alone. */
for (const shared of ['Redis', 'the database'] as const) {
  describe.runIf(process.env.TEST_DATABASE_URL)(`previous_response_id on keys without the Responses API across two instances sharing ${shared}`, shared === 'Redis' ? needs('redis') : {}, () => {
    let pair: InstancePair;
    beforeAll(async () => { pair = await startInstancePair('stored-responses', shared === 'Redis'); });
    afterAll(async () => { await pair?.close(); });

    it('keeps a conversation on one instance and continues it on the other, whole and streamed', async () => {
      const { gws, mock } = pair;
      const up = secret(`stored-shared-${shared === 'Redis' ? 'redis' : 'db'}`);
      expect((await gws[0].root.put('/x-config', { PRICING })).status).toBe(200);
      expect((await gws[0].root.post('/x-keys', { Level: 248, Provider: mock.url, SecretKey: up, Status: true, config: keyConfig('anthropic') })).status).toBe(201);
      mock.behave(up, { text: 'Hello.' });
      const user = await insertAccount(gws[0], { credit: 50, level: 248 });
      const clients = gws.map((g) => new OpenAI({ apiKey: user.key, baseURL: `${g.url}/v1`, maxRetries: 0 }));
      // The second instance hears of the key and the prices through the change feed.
      await until(async () => (await clients[1].responses.create({ model: CLAUDE, input: 'ready?', store: false }).then(() => true, () => false)));
      let previous = (await respond(clients[0], false, { model: CLAUDE, input: 'Start' })).id;
      for (let turn = 0; turn < 4; turn++) {
        // Alternate instances: the one that did not answer the last turn must read the conversation.
        const client = clients[(turn + 1) % 2];
        const r = await respond(client, turn % 2 === 0, { model: CLAUDE, input: `Turn ${turn}`, previous_response_id: previous });
        const body = mock.requests.at(-1)!.body as Record<string, any>;
        // Every earlier turn reached the key: two messages per turn, and this one.
        expect(body.messages.length).toBe(2 * (turn + 1) + 1);
        previous = r.id;
      }
    });

    it('resolves an item_reference on the instance that did not answer, whole and streamed', async () => {
      const { gws, mock } = pair;
      const up = secret(`referenced-shared-${shared === 'Redis' ? 'redis' : 'db'}`);
      expect((await gws[0].root.put('/x-config', { PRICING })).status).toBe(200);
      expect((await gws[0].root.post('/x-keys', { Level: 247, Provider: mock.url, SecretKey: up, Status: true, config: keyConfig('chat-only') })).status).toBe(201);
      mock.behave(up, { text: 'Hello.' });
      const user = await insertAccount(gws[0], { credit: 50, level: 247 });
      const clients = gws.map((g) => new OpenAI({ apiKey: user.key, baseURL: `${g.url}/v1`, maxRetries: 0 }));
      await until(async () => (await clients[1].responses.create({ model: CLAUDE, input: 'ready?', store: false }).then(() => true, () => false)));
      const input: unknown[] = [{ role: 'user', content: 'Start' }];
      for (let turn = 0; turn < 4; turn++) {
        const r = await respond(clients[turn % 2], turn % 2 === 1, { model: CLAUDE, input });
        const body = mock.requests.at(-1)!.body as Record<string, any>;
        // Every earlier answer reached the key as the message it was.
        expect(body.messages.filter((m: any) => m.role === 'assistant')).toEqual(Array(turn).fill({ role: 'assistant', content: 'Hello.' }));
        input.push(...references(r.output), { role: 'user', content: `Turn ${turn}` });
      }
    });
  });
}
