/**
 * Claude Code (`@anthropic-ai/claude-code`, its native binary) run with `-p` through Switchyard on
 * every key kind: a two-step tool task (the mock asks for its own `Write` tool, Claude Code writes
 * the file, then the mock answers with text), then a second conversation turn with `--continue`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CALL_COST, KEY_KINDS, MOCK_USAGE, kindAccount, runAgent, servedAndBilled, startAgentGateway, tempDir, versionOf,
  type AgentGateway, type AgentRun, type KindAccount,
} from './harness';

const VERSION = versionOf('@anthropic-ai/claude-code');
const AGENT = `Claude Code ${VERSION}`;
/** The platform package's binary: the one `bin/claude.exe` is replaced with at install, found without relying on that. */
const CLAUDE = createRequire(import.meta.url).resolve(`@anthropic-ai/claude-code-${process.platform}-${process.arch}/claude`);

let g: AgentGateway;
beforeAll(async () => { g = await startAgentGateway(); });
afterAll(async () => { await g?.close(); });

/** Claude Code's result line (`--output-format json`). */
interface ClaudeResult {
  type: string;
  subtype: string;
  is_error: boolean;
  result: string;
  session_id: string;
  num_turns: number;
  total_cost_usd: number;
  usage: { input_tokens: number; output_tokens: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number };
  modelUsage?: Record<string, { inputTokens: number; outputTokens: number; cacheReadInputTokens: number; cacheCreationInputTokens: number }>;
}

/** Runs `claude -p` with a HOME of its own, pointed at the gateway with the account's key, every network feature off. */
function claude(a: KindAccount, home: string, cwd: string, prompt: string, extra: string[] = []): Promise<AgentRun> {
  // Claude Code's own default model, as its users run it (the account maps every model to the key's).
  return runAgent(CLAUDE, ['-p', prompt, '--output-format', 'json', '--allowedTools', 'Write', '--strict-mcp-config', ...extra], {
    cwd,
    timeoutMs: 120_000,
    env: {
      HOME: home,
      CLAUDE_CONFIG_DIR: join(home, '.claude'),
      ANTHROPIC_BASE_URL: g.url,
      ANTHROPIC_API_KEY: a.user.key,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      DISABLE_BUG_COMMAND: '1',
      DISABLE_NON_ESSENTIAL_MODEL_CALLS: '1',
      CLAUDE_CODE_DISABLE_AUTO_MEMORY: '1',
      CLAUDE_CODE_DISABLE_TERMINAL_TITLE: '1',
      CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL: '1',
      // Bounded: a hung call fails the test rather than the suite's timeout.
      API_TIMEOUT_MS: '60000',
      CLAUDE_CODE_MAX_RETRIES: '0',
      CI: '1',
    },
  });
}

function parse(run: AgentRun, step: string): ClaudeResult {
  const line = run.stdout.trim().split('\n').filter((l) => l.startsWith('{')).at(-1);
  if (run.code !== 0 || !line) {
    throw new Error(`${AGENT} ${step}: exit ${run.code}${run.timedOut ? ' (timed out)' : ''}\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-2000)}`);
  }
  return JSON.parse(line) as ClaudeResult;
}

describe('Claude Code', () => {
  for (const kind of KEY_KINDS) {
    it(`${kind}: writes a file with its Write tool, answers, and continues the conversation`, async () => {
      const a = await kindAccount(g, kind, 'cc');
      const home = tempDir(`cc-home-${kind}`);
      const work = tempDir(`cc-work-${kind}`);
      const from = g.requests.length;
      try {
        const first = join(work.dir, 'first.txt');
        a.behave({ toolCall: { name: 'Write', arguments: { file_path: first, content: 'written through Switchyard\n' } }, text: 'FIRST-DONE' });
        const one = await claude(a, home.dir, work.dir, 'Write first.txt, then say FIRST-DONE.');
        const served = await servedAndBilled(g, a, AGENT, from);
        const calls1 = a.upstreamCalls().length;
        expect(served.faults, served.faults.join('\n')).toEqual([]);
        const r1 = parse(one, 'first turn');
        expect(r1, `${AGENT}: ${JSON.stringify(r1)}`).toMatchObject({ type: 'result', subtype: 'success', is_error: false, result: 'FIRST-DONE' });
        expect(readFileSync(first, 'utf8')).toBe('written through Switchyard\n');

        const second = join(work.dir, 'second.txt');
        a.behave({ toolCall: { name: 'Write', arguments: { file_path: second, content: 'and again\n' } }, text: 'SECOND-DONE' });
        const two = await claude(a, home.dir, work.dir, 'Now write second.txt, then say SECOND-DONE.', ['--continue']);
        const again = await servedAndBilled(g, a, AGENT, from);
        expect(again.faults, again.faults.join('\n')).toEqual([]);
        const r2 = parse(two, 'second turn (--continue)');
        expect(r2).toMatchObject({ type: 'result', subtype: 'success', is_error: false, result: 'SECOND-DONE', session_id: r1.session_id });
        expect(existsSync(second)).toBe(true);

        // Claude Code's own figures: its tokens are the provider's usage of the calls it made (its
        // per-model figures of the resumed session are the conversation's so far).
        const n1 = calls1;
        const n = a.upstreamCalls().length;
        expect(r1.usage, `${AGENT} first turn`).toMatchObject({ input_tokens: n1 * MOCK_USAGE.prompt_tokens, output_tokens: n1 * MOCK_USAGE.completion_tokens });
        expect(r2.usage, `${AGENT} second turn`).toMatchObject({ input_tokens: (n - n1) * MOCK_USAGE.prompt_tokens, output_tokens: (n - n1) * MOCK_USAGE.completion_tokens });
        const total = (r: ClaudeResult) => Object.values(r.modelUsage ?? {}).reduce((t, m) => ({ in: t.in + m.inputTokens, out: t.out + m.outputTokens }), { in: 0, out: 0 });
        expect(total(r2), `${AGENT} session total`).toEqual({ in: n * MOCK_USAGE.prompt_tokens, out: n * MOCK_USAGE.completion_tokens });
        // Its cost is by its own price table for each model it named (the bill is by the Owner's PRICING):
        // what compares is that it priced what it was told, more for the longer session.
        expect(r1.total_cost_usd).toBeGreaterThan(0);
        expect(r2.total_cost_usd).toBeGreaterThan(r1.total_cost_usd);
        expect(again.rows.reduce((sum, row) => sum + row.credit_used, 0)).toBeCloseTo(n * CALL_COST, 12);
      } finally {
        home.remove();
        work.remove();
      }
    }, 300_000);
  }
});
