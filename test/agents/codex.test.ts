/**
 * Codex CLI (`@openai/codex`, bin/codex.js and its native binary) run with `codex exec` through
 * Switchyard on every key kind, with a CODEX_HOME of its own whose config.toml names the gateway as
 * a Responses provider: a two-step tool task (the mock asks for Codex's own `exec_command`, Codex
 * runs it, then the mock answers with text), then a second conversation turn with `exec resume --last`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  KEY_KINDS, MOCK_USAGE, kindAccount, runAgent, servedAndBilled, startAgentGateway, tempDir, versionOf,
  type AgentGateway, type AgentRun, type KindAccount,
} from './harness';

const VERSION = versionOf('@openai/codex');
const AGENT = `Codex CLI ${VERSION}`;
const CODEX = createRequire(import.meta.url).resolve('@openai/codex/bin/codex.js');

let g: AgentGateway;
beforeAll(async () => { g = await startAgentGateway(); });
afterAll(async () => { await g?.close(); });

/**
 * A CODEX_HOME whose config.toml points Codex at the gateway (the key in SWITCHYARD_API_KEY),
 * runs commands without approval or sandbox (the test's own temporary directory), and turns
 * off what would reach the internet: update checks, analytics, retries.
 */
function codexHome(dir: string): string {
  const home = join(dir, '.codex');
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, 'config.toml'), `model = "gpt-5.2-codex"
model_provider = "switchyard"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.switchyard]
name = "Switchyard"
base_url = "${g.url}/v1"
env_key = "SWITCHYARD_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 60000
`);
  return home;
}

function codex(a: KindAccount, home: string, cwd: string, args: string[]): Promise<AgentRun> {
  return runAgent(process.execPath, [CODEX, 'exec', ...args], {
    cwd,
    timeoutMs: 120_000,
    env: { HOME: home, CODEX_HOME: join(home, '.codex'), SWITCHYARD_API_KEY: a.user.key },
  });
}

/** What `codex exec --json` printed: its last message and the turn's token counts. */
interface CodexTurn {
  text: string | undefined;
  usage: { input_tokens: number; output_tokens: number; cached_input_tokens: number } | undefined;
  failed: string[];
}

function parse(run: AgentRun, step: string): CodexTurn {
  const events = run.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, any>);
  const turn: CodexTurn = { text: undefined, usage: undefined, failed: [] };
  for (const e of events) {
    if (e.type === 'item.completed' && e.item?.type === 'agent_message') turn.text = e.item.text;
    if (e.type === 'turn.completed') turn.usage = e.usage;
    if (e.type === 'turn.failed' || e.type === 'error') turn.failed.push(JSON.stringify(e).slice(0, 500));
  }
  if (run.code !== 0 || turn.failed.length > 0) {
    throw new Error(`${AGENT} ${step}: exit ${run.code}${run.timedOut ? ' (timed out)' : ''}\n${turn.failed.join('\n')}\nstderr: ${run.stderr.slice(-2000)}`);
  }
  return turn;
}

describe('Codex CLI', () => {
  for (const kind of KEY_KINDS) {
    it(`${kind}: runs a command with its exec_command tool, answers, and resumes the session`, async () => {
      const a = await kindAccount(g, kind, 'cx');
      const home = tempDir(`cx-home-${kind}`);
      const work = tempDir(`cx-work-${kind}`);
      const from = g.requests.length;
      try {
        codexHome(home.dir);
        a.behave({ toolCall: { name: 'exec_command', arguments: { cmd: 'echo first through Switchyard > first.txt' } }, text: 'FIRST-DONE' });
        const one = await codex(a, home.dir, work.dir, ['--skip-git-repo-check', '--json', 'Write first.txt, then say FIRST-DONE.']);
        const served = await servedAndBilled(g, a, AGENT, from);
        expect(served.faults, served.faults.join('\n')).toEqual([]);
        const calls1 = a.upstreamCalls().length;
        const t1 = parse(one, 'first turn');
        expect(t1.text).toBe('FIRST-DONE');
        expect(readFileSync(join(work.dir, 'first.txt'), 'utf8')).toBe('first through Switchyard\n');

        a.behave({ toolCall: { name: 'exec_command', arguments: { cmd: 'echo second > second.txt' } }, text: 'SECOND-DONE' });
        const two = await codex(a, home.dir, work.dir, ['resume', '--last', '--skip-git-repo-check', '--json', 'Now write second.txt, then say SECOND-DONE.']);
        const again = await servedAndBilled(g, a, AGENT, from);
        expect(again.faults, again.faults.join('\n')).toEqual([]);
        const t2 = parse(two, 'second turn (exec resume --last)');
        expect(t2.text).toBe('SECOND-DONE');
        expect(readFileSync(join(work.dir, 'second.txt'), 'utf8')).toBe('second\n');
        // The resumed turn carries the first one: the earlier tool call and answer went back upstream.
        const resumed = again.sent.filter((r) => r.path === '/v1/responses').at(-1)?.body as { input?: unknown[] } | undefined;
        expect(JSON.stringify(resumed?.input ?? [])).toContain('FIRST-DONE');

        // Codex's own token count (the session's total so far): the provider's usage of the calls it made.
        const n = a.upstreamCalls().length;
        expect(t1.usage, `${AGENT} first turn`).toMatchObject({ input_tokens: calls1 * MOCK_USAGE.prompt_tokens, output_tokens: calls1 * MOCK_USAGE.completion_tokens });
        expect(t2.usage, `${AGENT} second turn`).toMatchObject({ input_tokens: n * MOCK_USAGE.prompt_tokens, output_tokens: n * MOCK_USAGE.completion_tokens });
      } finally {
        home.remove();
        work.remove();
      }
    }, 300_000);
  }
});
