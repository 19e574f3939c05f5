/**
 * The OpenAI Agents SDK (`@openai/agents`, its default OpenAI provider: the Responses API) through
 * Switchyard on every key kind: an agent with a tool of its own (`tool()`) run to its end with
 * `run()` (the mock asks for the tool, then answers with text), whole and streamed, and a second
 * conversation turn from the first run's history.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, OpenAIProvider, Runner, tool, user, type AgentInputItem } from '@openai/agents';
import { z } from 'zod';
import { KEY_KINDS, MOCK_USAGE, describeRequest, kindAccount, servedAndBilled, startAgentGateway, versionOf, type AgentGateway, type KindAccount } from './harness';

const AGENT = `OpenAI Agents SDK @openai/agents@${versionOf('@openai/agents')}`;

let g: AgentGateway;
beforeAll(async () => { g = await startAgentGateway(); });
afterAll(async () => { await g?.close(); });

/** What only the tool's output holds: found in a later call, it shows the tool's result went back. */
const TOOL_MARK = 'station-7731';
const weather = tool({
  name: 'weather',
  description: 'The weather in a city',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => JSON.stringify({ city, sky: 'sunny', station: TOOL_MARK }),
});
const ANSWER = 'It is sunny in Paris.';
const AGAIN = 'Still sunny in Paris.';

/** A runner whose provider is the gateway with the account's key, no tracing (no call to OpenAI's tracing endpoint). */
function runnerFor(a: KindAccount): Runner {
  return new Runner({ modelProvider: new OpenAIProvider({ apiKey: a.user.key, baseURL: `${g.url}/v1` }), tracingDisabled: true });
}

const agent = new Agent({ name: 'Forecaster', instructions: 'Answer with the weather tool.', model: 'gpt-4.1', tools: [weather] });

/** One user turn, whole or streamed, to its end: the final text, the history to continue from, and the SDK's usage. */
async function turn(runner: Runner, input: AgentInputItem[], streamed: boolean) {
  if (!streamed) {
    const r = await runner.run(agent, input, { maxTurns: 3 });
    return { text: r.finalOutput, history: r.history, usage: r.state.usage };
  }
  const s = await runner.run(agent, input, { stream: true, maxTurns: 3 });
  await s.completed;
  if (s.error) throw s.error;
  return { text: s.finalOutput, history: s.history, usage: s.state.usage };
}

describe('OpenAI Agents SDK', () => {
  for (const kind of KEY_KINDS) {
    const scenarios = [
      { name: 'two-step tool task', streamed: false, turns: 1 },
      { name: 'second conversation turn', streamed: false, turns: 2 },
      { name: 'streamed two-step tool task and second turn', streamed: true, turns: 2 },
    ];
    for (const s of scenarios) {
      it(`${kind}: ${s.name}`, async () => {
        const a = await kindAccount(g, kind, `agents-${s.turns}${s.streamed ? 's' : ''}`);
        const from = g.requests.length;
        const runner = runnerFor(a);
        a.behave({ toolCall: { name: 'weather', arguments: { city: 'Paris' } }, text: ANSWER });
        const one = await turn(runner, [user('What is the weather in Paris?')], s.streamed).catch((e) => { throw fault(e); });
        const served = await servedAndBilled(g, a, AGENT, from);
        expect(served.faults, served.faults.join('\n')).toEqual([]);
        expect(one.text).toBe(ANSWER);
        expect(a.upstreamCalls().length).toBe(2);
        expect({ requests: one.usage.requests, input: one.usage.inputTokens, output: one.usage.outputTokens }, `${AGENT}: first run's usage`)
          .toEqual({ requests: 2, input: 2 * MOCK_USAGE.prompt_tokens, output: 2 * MOCK_USAGE.completion_tokens });
        if (s.turns === 1) return;

        a.behave({ toolCall: { name: 'weather', arguments: { city: 'Paris' } }, text: AGAIN });
        const two = await turn(runner, [...one.history, user('And now?')], s.streamed).catch((e) => { throw fault(e); });
        const again = await servedAndBilled(g, a, AGENT, from);
        expect(again.faults, again.faults.join('\n')).toEqual([]);
        expect(two.text).toBe(AGAIN);
        expect(a.upstreamCalls().length).toBe(4);
        // The first run's tool round and answer reached the provider again.
        const resent = JSON.stringify(a.upstreamCalls()[2].body);
        expect(resent).toContain(TOOL_MARK);
        expect(resent).toContain(ANSWER);
        expect(again.rows.length).toBe(4);
        expect({ requests: two.usage.requests, input: two.usage.inputTokens, output: two.usage.outputTokens }, `${AGENT}: second run's usage`)
          .toEqual({ requests: 2, input: 2 * MOCK_USAGE.prompt_tokens, output: 2 * MOCK_USAGE.completion_tokens });
      });
    }
  }
});

/** An SDK error with what the gateway answered, for the failure message. */
function fault(e: unknown): Error {
  const last = g.requests.filter((r) => r.status >= 300).at(-1);
  return new Error(`${AGENT}: ${(e as Error)?.message ?? String(e)}${last ? `\n  last refused request: ${describeRequest(AGENT, last)}` : ''}`);
}
