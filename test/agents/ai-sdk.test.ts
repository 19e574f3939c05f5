/**
 * The Vercel AI SDK (`ai`) through Switchyard on every key kind, with each of its providers an app
 * would point at the gateway: `@ai-sdk/openai` (its default, the Responses API, and `.chat()`),
 * `@ai-sdk/anthropic` and `@ai-sdk/openai-compatible`. Each runs a two-step tool task with a tool
 * of the app's own (the mock asks for it, then answers with text), whole and streamed, and a
 * second conversation turn from the first result's messages: there the Responses provider sends
 * `item_reference`s to the items of the answers it got.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateText, stepCountIs, streamText, tool, type LanguageModel, type LanguageModelUsage, type ModelMessage } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { z } from 'zod';
import { KEY_KINDS, MOCK_USAGE, describeRequest, kindAccount, servedAndBilled, startAgentGateway, versionOf, type AgentGateway, type KindAccount } from './harness';

const AI = `ai@${versionOf('ai')}`;

let g: AgentGateway;
beforeAll(async () => { g = await startAgentGateway(); });
afterAll(async () => { await g?.close(); });

/** What only the tool's output holds: found in a later call, it shows the tool's result went back. */
const TOOL_MARK = 'station-7731';
/** The app's own tool: what it returns is the app's, never the model's. */
const weather = tool({
  description: 'The weather in a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, sky: 'sunny', station: TOOL_MARK }),
});
const ANSWER = 'It is sunny in Paris.';
const AGAIN = 'Still sunny in Paris.';

interface Row {
  /** The conformance matrix's row. */
  name: string;
  /** The package whose version a failure names. */
  pkg: string;
  model(a: KindAccount): LanguageModel;
  /** The provider sends the earlier answers back as `item_reference`s (the Responses API with `store`). */
  references?: boolean;
}

const rows: Row[] = [
  {
    name: 'AI SDK (@ai-sdk/openai responses)', pkg: '@ai-sdk/openai', references: true,
    model: (a) => createOpenAI({ baseURL: `${g.url}/v1`, apiKey: a.user.key })('gpt-4.1'),
  },
  {
    name: 'AI SDK (@ai-sdk/openai chat)', pkg: '@ai-sdk/openai',
    model: (a) => createOpenAI({ baseURL: `${g.url}/v1`, apiKey: a.user.key }).chat('gpt-4.1'),
  },
  {
    name: 'AI SDK (@ai-sdk/anthropic)', pkg: '@ai-sdk/anthropic',
    model: (a) => createAnthropic({ baseURL: `${g.url}/v1`, apiKey: a.user.key })('claude-sonnet-4-5'),
  },
  {
    name: 'AI SDK (@ai-sdk/openai-compatible)', pkg: '@ai-sdk/openai-compatible',
    model: (a) => createOpenAICompatible({ name: 'switchyard', baseURL: `${g.url}/v1`, apiKey: a.user.key, includeUsage: true })('gpt-4.1'),
  },
];

/** One user turn of the app: the tool task, whole or streamed, to its end; the text, the messages to send back, and the SDK's usage. */
async function turn(model: LanguageModel, messages: ModelMessage[], streamed: boolean, providerOptions?: Record<string, Record<string, string>>): Promise<{ text: string; messages: ModelMessage[]; usage: LanguageModelUsage; steps: number }> {
  const options = { model, messages, tools: { weather }, stopWhen: stepCountIs(3), maxRetries: 0, providerOptions };
  if (!streamed) {
    const r = await generateText(options);
    return { text: r.text, messages: r.responseMessages, usage: r.totalUsage, steps: r.steps.length };
  }
  let failure: unknown;
  const r = streamText({ ...options, onError: ({ error }) => { failure = error; } });
  const text = await r.text;
  if (failure) throw failure;
  return { text, messages: await r.responseMessages, usage: await r.totalUsage, steps: (await r.steps).length };
}

/** The SDK's own token figures are the provider's usage of the calls made. */
function expectUsage(usage: LanguageModelUsage, calls: number, what: string): void {
  expect({ input: usage.inputTokens, output: usage.outputTokens }, what).toEqual({ input: calls * MOCK_USAGE.prompt_tokens, output: calls * MOCK_USAGE.completion_tokens });
}

for (const row of rows) {
  const agent = `${row.name} ${row.pkg}@${versionOf(row.pkg)} ${AI}`;
  describe(row.name, () => {
    for (const kind of KEY_KINDS) {
      const scenarios = [
        { name: 'two-step tool task', streamed: false, turns: 1 },
        { name: 'second conversation turn', streamed: false, turns: 2 },
        { name: 'streamed two-step tool task and second turn', streamed: true, turns: 2 },
      ];
      for (const s of scenarios) {
        it(`${kind}: ${s.name}`, async () => {
          const a = await kindAccount(g, kind, `ai-${rows.indexOf(row)}-${s.turns}${s.streamed ? 's' : ''}`);
          const from = g.requests.length;
          const model = row.model(a);
          a.behave({ toolCall: { name: 'weather', arguments: { city: 'Paris' } }, text: ANSWER });
          const user1: ModelMessage = { role: 'user', content: 'What is the weather in Paris?' };
          const one = await turn(model, [user1], s.streamed).catch((e) => { throw fault(e); });
          const served = await servedAndBilled(g, a, agent, from);
          expect(served.faults, served.faults.join('\n')).toEqual([]);
          expect(one.text).toBe(ANSWER);
          expect(one.steps).toBe(2);
          const calls1 = a.upstreamCalls().length;
          expect(calls1).toBe(2);
          expectUsage(one.usage, calls1, `${agent}: first turn's totalUsage`);
          if (s.turns === 1) return;

          // The app sends the conversation so far back, as the AI SDK's chat apps do.
          a.behave({ toolCall: { name: 'weather', arguments: { city: 'Paris' } }, text: AGAIN });
          const sentBefore = g.requests.length;
          const two = await turn(model, [user1, ...one.messages, { role: 'user', content: 'And now?' }], s.streamed).catch((e) => { throw fault(e); });
          if (row.references) {
            // What makes this turn worth testing: the earlier assistant messages go back as references.
            const input = (g.requests[sentBefore]?.body as { input?: { type?: string }[] } | undefined)?.input ?? [];
            expect(input.filter((i) => i.type === 'item_reference').length, `${agent}: item_reference items sent`).toBeGreaterThan(0);
          }
          const again = await servedAndBilled(g, a, agent, from);
          expect(again.faults, again.faults.join('\n')).toEqual([]);
          expect(two.text).toBe(AGAIN);
          expect(a.upstreamCalls().length).toBe(4);
          // The first turn's tool round reached the provider again, with the earlier answer.
          const resent = JSON.stringify(a.upstreamCalls()[2].body);
          expect(resent).toContain(TOOL_MARK);
          // (On a standard key the Responses provider's references go to the provider as they came.)
          if (!row.references || kind !== 'standard') expect(resent).toContain(ANSWER);
          expectUsage(two.usage, 2, `${agent}: second turn's totalUsage`);
          expect(again.rows.length).toBe(4);
        });
      }
    }

    // A reasoning model's app: the earlier answers' reasoning goes back as references too (`rs_…`),
    // and on a Claude key its signed thinking must reach the next call intact.
    if (row.references) {
      for (const kind of ['anthropic', 'vertex-claude'] as const) {
        for (const streamed of [false, true]) {
          it(`${kind}: ${streamed ? 'streamed ' : ''}reasoning model's tool task and second turn`, async () => {
            const a = await kindAccount(g, kind, `ai-reasoning${streamed ? 's' : ''}`);
            const from = g.requests.length;
            const model = createOpenAI({ baseURL: `${g.url}/v1`, apiKey: a.user.key })('gpt-5');
            const providerOptions = { openai: { reasoningEffort: 'low' } };
            a.behave({ toolCall: { name: 'weather', arguments: { city: 'Paris' } }, text: ANSWER, thinking: 'The tool knows.' });
            const user1: ModelMessage = { role: 'user', content: 'What is the weather in Paris?' };
            const one = await turn(model, [user1], streamed, providerOptions).catch((e) => { throw fault(e); });
            expect(one.text).toBe(ANSWER);
            const sentBefore = g.requests.length;
            const two = await turn(model, [user1, ...one.messages, { role: 'user', content: 'And now?' }], streamed, providerOptions).catch((e) => { throw fault(e); });
            expect(two.text).toBe(ANSWER);
            const input = (g.requests[sentBefore].body as { input: { type?: string; id?: string }[] }).input;
            expect(input.filter((i) => i.type === 'item_reference').map((i) => i.id!.slice(0, 6))).toEqual(expect.arrayContaining(['rs_gw_', 'msg_gw']));
            // Each earlier turn's thinking reached the key signed (the mock refuses a forged signature).
            const sent = a.upstreamCalls().at(-2)!.body as { messages: { role: string; content: { type: string }[] | string }[] };
            const thinking = sent.messages.filter((m) => m.role === 'assistant' && Array.isArray(m.content) && m.content.some((b) => b.type === 'thinking'));
            expect(thinking.length).toBe(2);
            const served = await servedAndBilled(g, a, agent, from);
            expect(served.faults, served.faults.join('\n')).toEqual([]);
            expect(served.rows.length).toBe(4);
            expectUsage(two.usage, 2, `${agent}: second turn's totalUsage`);
          });
        }
      }
    }

    /** An SDK error with what the gateway answered, for the failure message (never a secret: the key is the test's). */
    function fault(e: unknown): Error {
      const err = e as { message?: string; statusCode?: number; responseBody?: string };
      const last = g.requests.filter((r) => r.status >= 300).at(-1);
      return new Error(`${agent}: ${err.message ?? String(e)}${err.statusCode ? ` (${err.statusCode}: ${String(err.responseBody).slice(0, 400)})` : ''}${last ? `\n  last refused request: ${describeRequest(agent, last)}` : ''}`);
    }
  });
}
