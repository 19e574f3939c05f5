/**
 * Reasoning items that cross providers: one Level holding a key with the Responses API and an
 * Anthropic key, so consecutive calls of a conversation land on the two kinds in turn. The real
 * openai SDK's responses.create with thinking and a function call; each next turn, sent as the
 * whole history or by the previous_response_id of a conversation the gateway keeps, goes to the
 * other kind. The mock refuses what the real providers refuse (OpenAI: a reasoning item it did
 * not make; Anthropic: a thinking signature it did not make, or a last tool-use turn without
 * signed thinking while thinking is on), so every 200 here is an answer they would give too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type OpenAI from 'openai';
import { drain, nextLevel, secret, startProxyFixture, type ProxyFixture } from '../test-fixture';
import { signThinking } from '../../testing/mock-upstream/anthropic';

type Kind = 'native' | 'anthropic';
type Item = Record<string, any>;

const MODEL = 'claude-test-1';
const THINKING = 'I should list them.';
const behaviour = { toolCall: { name: 'shell', arguments: { cmd: 'ls' } }, thinking: THINKING, text: 'Two files.', usage: { prompt_tokens: 300, completion_tokens: 12 } };
const tools = [{ type: 'function' as const, name: 'shell', description: 'Runs a command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } }, strict: false }];
// As Codex asks: thinking, its summary, and the encrypted content to send back.
const params = { model: MODEL, tools, reasoning: { effort: 'low', summary: 'auto' }, include: ['reasoning.encrypted_content'] };
const ask = { type: 'message', role: 'user', content: 'List the files' };
const resultOf = (call: Item) => ({ type: 'function_call_output', call_id: call.call_id, output: 'a.txt b.txt' });
const isGateways = (v: unknown) => typeof v === 'string' && v.startsWith('rs_gw_');

let f: ProxyFixture;
beforeAll(async () => {
  f = await startProxyFixture();
  await f.config({ PRICING: JSON.stringify({ ChatPricing: { [MODEL]: { InputText: 1, OutputText: 5 } } }) });
});
afterAll(async () => { await f?.close(); });

/** A Level of its own with one key of each kind, and the client of an account routed to it. */
async function mixedLevel(label: string) {
  const level = nextLevel();
  const keys = { native: secret(`${label}-native`), anthropic: secret(`${label}-anthropic`) };
  await f.addKey(level, keys.native);
  await f.addKey(level, keys.anthropic, { config: { provider_type: 'anthropic' } });
  f.mock.behave(keys.native, behaviour);
  f.mock.behave(keys.anthropic, behaviour);
  const user = await f.account({ level });
  return { client: f.openai(user.key), user, served: (): Kind => (f.mock.requests.at(-1)!.credential === keys.native ? 'native' : 'anthropic') };
}

/** One Responses call, whole or streamed; a stream must end with response.completed. */
async function respond(client: OpenAI, streamed: boolean, body: Item): Promise<Item> {
  if (!streamed) return (await client.responses.create(body as any)) as any;
  const { items, error } = await drain((await client.responses.create({ ...body, stream: true } as any)) as unknown as AsyncIterable<any>);
  expect(error).toBeUndefined();
  expect(items.at(-1)!.type).toBe('response.completed');
  return (items.at(-1) as any).response;
}

const lastBody = () => f.mock.requests.at(-1)!.body as Item;

/**
 * What the last upstream request carried that a real provider checks: for the native key, no
 * reasoning item of the gateway's (the OpenAI ones it made stay); for the Anthropic key, whether
 * thinking is on and each assistant turn's blocks, thinking marked by whether it is signed.
 */
function sent(kind: Kind) {
  const body = lastBody();
  if (kind === 'native') {
    const reasoning = (body.input as Item[]).filter((i) => i.type === 'reasoning');
    expect(reasoning.filter((r) => isGateways(r.id) || isGateways(r.encrypted_content))).toEqual([]);
    return { reasoning: reasoning.map((r) => r.id as string), previous: body.previous_response_id };
  }
  const turns = (body.messages as Item[]).filter((m) => m.role === 'assistant').map((m) => (m.content as Item[]).map((b) =>
    b.type === 'thinking' ? `thinking:${b.signature === signThinking(b.thinking) ? 'signed' : 'unsigned'}` : b.type));
  return { thinking: body.thinking?.type ?? 'off', turns };
}

describe('reasoning items on a Level mixing a key with the Responses API and an Anthropic key', () => {
  it('sends the whole history to the other kind each turn, both ways, whole and streamed', async () => {
    const { client, served, user } = await mixedLevel('origin-history');
    const starts: Kind[] = [];
    for (const streamed of [false, true]) {
      // First turn: thinking and a function call, on whichever key comes first.
      const first = await respond(client, streamed, { ...params, input: [ask] });
      const x = served();
      const y: Kind = x === 'native' ? 'anthropic' : 'native';
      starts.push(x);
      const reasoning1 = first.output.find((o: Item) => o.type === 'reasoning');
      expect(reasoning1.encrypted_content).toEqual(expect.any(String));
      expect(isGateways(reasoning1.id)).toBe(x === 'anthropic');
      const call1 = first.output.find((o: Item) => o.type === 'function_call');
      expect(call1).toMatchObject({ name: 'shell', arguments: '{"cmd":"ls"}' });

      // Second turn, on the other kind, its last assistant turn the first's tool call.
      const history2 = [ask, ...first.output, resultOf(call1)];
      const second = await respond(client, streamed, { ...params, input: history2 });
      expect(served()).toBe(y);
      expect(second.output.find((o: Item) => o.type === 'message')).toMatchObject({ content: [{ type: 'output_text', text: 'Two files.' }] });
      if (y === 'native') {
        // The gateway's reasoning item is left out; the call and its output go.
        expect(sent(y)).toEqual({ reasoning: [], previous: undefined });
        expect(lastBody().input).toEqual([ask, call1, resultOf(call1)]);
      } else {
        // OpenAI's reasoning has no Anthropic signature: its tool-use turn goes without thinking, so thinking is off for this call.
        expect(sent(y)).toEqual({ thinking: 'off', turns: [['tool_use']] });
      }

      // Third turn, back on the first kind, with the reasoning of both.
      const history3 = [...history2, ...second.output, { type: 'message', role: 'user', content: 'And their sizes?' }];
      const third = await respond(client, streamed, { ...params, input: history3 });
      expect(served()).toBe(x);
      expect(third.output.some((o: Item) => o.type === 'function_call')).toBe(true);
      if (x === 'native') {
        // Its own reasoning item goes back (the mock made it, as OpenAI would have); the gateway's, if any, does not.
        expect(sent(x)).toEqual({ reasoning: [reasoning1.id], previous: undefined });
      } else {
        // Its own signed thinking goes back; OpenAI's text is left out; thinking is on.
        expect(sent(x)).toEqual({ thinking: 'enabled', turns: [['thinking:signed', 'tool_use'], ['text']] });
      }
    }
    // The round-robin made the second conversation start on the other kind: each kind received the other's tool-use turn.
    expect(new Set(starts)).toEqual(new Set(['native', 'anthropic']));
    const rows = await f.usage(user.id);
    expect(rows.map((r) => [r.endpoint, r.status])).toEqual(Array(6).fill(['/v1/responses', 'ok']));
  });

  it('continues a conversation the gateway keeps on the other kind, by previous_response_id, both ways', async () => {
    const { client, served } = await mixedLevel('origin-previous');
    // Whichever key the Level starts with, the conversation starts on the Anthropic key.
    await respond(client, false, { model: MODEL, input: 'Hello' });
    if (served() === 'anthropic') await respond(client, false, { model: MODEL, input: 'Hello' });

    const first = await respond(client, false, { ...params, input: [ask] });
    expect(served()).toBe('anthropic');
    expect(first.id).toMatch(/^resp_gw_/);
    const call1 = first.output.find((o: Item) => o.type === 'function_call');

    // Anthropic → native: the kept items go without the gateway's reasoning item.
    const second = await respond(client, true, { ...params, input: [resultOf(call1)], previous_response_id: first.id });
    expect(served()).toBe('native');
    expect(sent('native')).toEqual({ reasoning: [], previous: undefined });
    expect(lastBody().input).toEqual([ask, call1, resultOf(call1)]);
    const nativeReasoning = second.output.find((o: Item) => o.type === 'reasoning');
    expect(isGateways(nativeReasoning.id)).toBe(false);

    // The whole history, OpenAI's reasoning in it, on the Anthropic key: kept by the gateway.
    const history3 = [ask, ...first.output, resultOf(call1), ...second.output, { type: 'message', role: 'user', content: 'And their sizes?' }];
    const third = await respond(client, false, { ...params, input: history3 });
    expect(served()).toBe('anthropic');
    expect(sent('anthropic')).toEqual({ thinking: 'enabled', turns: [['thinking:signed', 'tool_use'], ['text']] });
    const call3 = third.output.find((o: Item) => o.type === 'function_call');

    // Its continuation on the native key: OpenAI's own reasoning item stays, the gateway's two go.
    await respond(client, false, { ...params, input: [resultOf(call3)], previous_response_id: third.id });
    expect(served()).toBe('native');
    expect(sent('native')).toEqual({ reasoning: [nativeReasoning.id], previous: undefined });

    // And again on the Anthropic key (a kept conversation may be continued more than once): OpenAI's reasoning left out, the last tool-use turn signed.
    await respond(client, true, { ...params, input: [resultOf(call3)], previous_response_id: third.id });
    expect(served()).toBe('anthropic');
    expect(sent('anthropic')).toEqual({ thinking: 'enabled', turns: [['thinking:signed', 'tool_use'], ['text'], ['thinking:signed', 'tool_use']] });
  });
});
