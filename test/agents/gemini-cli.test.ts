/**
 * Gemini CLI (`@google/gemini-cli`, bundle/gemini.js) run headless (`gemini -p … --output-format json`)
 * through Switchyard on every key kind: GOOGLE_GEMINI_BASE_URL names the gateway (the CLI calls
 * streamGenerateContent under it) and GEMINI_API_KEY carries the account key. Its HOME has a
 * `.gemini/settings.json` of its own with telemetry, usage statistics, update checks, IDE integration
 * and ripgrep's download off. Per key kind:
 * - headless, a two-step tool task: the mock asks for the CLI's own `write_file`, the CLI writes the
 *   file, then the mock answers with text; its own token figures (`stats.models`) are the provider's;
 * - a second conversation turn in one Agent Client Protocol session (`gemini --acp`, as editors run
 *   it): two prompts, each a two-step tool task, the second carrying the first upstream.
 *
 * Not `--resume latest` for the second turn: Gemini CLI 0.61 resumes a session with each tool result
 * sent twice (google-gemini/gemini-cli#29365, fix proposed in #29400), which Google refuses ("the
 * number of function response parts is equal to the number of function call parts of the function
 * call turn") and so does the gateway (400 in Google's shape), on every key kind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  KEY_KINDS, MOCK_USAGE, kindAccount, runAgent, servedAndBilled, startAgentGateway, tempDir, versionOf,
  type AgentGateway, type AgentRun, type KindAccount,
} from './harness';

const VERSION = versionOf('@google/gemini-cli');
const AGENT = `Gemini CLI ${VERSION}`;
const GEMINI = createRequire(import.meta.url).resolve('@google/gemini-cli/bundle/gemini.js');
/** The model the CLI names (each account's ModelMapper sends it to the kind's model); named so the CLI does not route through its classifier. */
const CLI_MODEL = 'gemini-2.5-pro';

let g: AgentGateway;
beforeAll(async () => { g = await startAgentGateway(); });
afterAll(async () => { await g?.close(); });

/** A HOME whose `.gemini/settings.json` turns off everything that would reach the internet or wait for a person. */
function geminiHome(dir: string): void {
  const home = join(dir, '.gemini');
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, 'settings.json'), JSON.stringify({
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, checkpointing: { enabled: false } },
    ide: { enabled: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    tools: { useRipgrep: false },
    security: { folderTrust: { enabled: false }, auth: { selectedType: 'gemini-api-key' } },
  }, null, 2));
}

function gemini(a: KindAccount, home: string, cwd: string, args: string[]): Promise<AgentRun> {
  return runAgent(process.execPath, [GEMINI, '--model', CLI_MODEL, '--approval-mode', 'yolo', '--output-format', 'json', ...args], {
    cwd,
    timeoutMs: 120_000,
    env: {
      HOME: home,
      GEMINI_API_KEY: a.user.key,
      GOOGLE_GEMINI_BASE_URL: g.url,
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
      NO_COLOR: '1',
    },
  });
}

/** What `--output-format json` printed: the answer and the session's token counts per model. */
interface GeminiTurn {
  text: string | undefined;
  tokens: { prompt: number; candidates: number; requests: number };
}

function parse(run: AgentRun, step: string): GeminiTurn {
  const start = run.stdout.indexOf('{');
  let out: Record<string, any> | undefined;
  try { out = start >= 0 ? JSON.parse(run.stdout.slice(start)) : undefined; } catch { out = undefined; }
  if (run.code !== 0 || !out || out.error) {
    throw new Error(`${AGENT} ${step}: exit ${run.code}${run.timedOut ? ' (timed out)' : ''}\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-2000)}`);
  }
  const models = Object.values((out.stats?.models ?? {}) as Record<string, { tokens?: Record<string, number>; api?: Record<string, number> }>);
  const sum = (f: (m: (typeof models)[number]) => number | undefined) => models.reduce((n, m) => n + (f(m) ?? 0), 0);
  return {
    text: typeof out.response === 'string' ? out.response.trim() : undefined,
    tokens: { prompt: sum((m) => m.tokens?.prompt), candidates: sum((m) => m.tokens?.candidates), requests: sum((m) => m.api?.totalRequests) },
  };
}

/**
 * Gemini CLI as an Agent Client Protocol agent (`gemini --acp`, JSON-RPC lines over stdio, as
 * editors run it): one session, prompted turn after turn. Each prompt resolves with the agent's
 * text of that turn once the CLI answers the `session/prompt` request.
 */
class AcpSession {
  private nextId = 0;
  private pending = new Map<number, { resolve(v: any): void; reject(e: Error): void }>();
  private text = '';
  private stderr = '';
  private sessionId = '';
  private readonly child;

  constructor(a: KindAccount, home: string, cwd: string) {
    this.child = spawn(process.execPath, [GEMINI, '--acp', '--model', CLI_MODEL, '--approval-mode', 'yolo'], {
      cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', HOME: home, GEMINI_API_KEY: a.user.key, GOOGLE_GEMINI_BASE_URL: g.url, GEMINI_CLI_TRUST_WORKSPACE: 'true', NO_COLOR: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    this.child.stderr.on('data', (c: Buffer) => { this.stderr += c.toString('utf8'); });
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      let msg: any;
      try { msg = JSON.parse(line); } catch { return; }
      if (msg.id !== undefined && msg.method === undefined) {
        const p = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (msg.error) p?.reject(new Error(`${AGENT} (ACP): ${JSON.stringify(msg.error).slice(0, 1500)}\nstderr: ${this.stderr.slice(-1500)}`));
        else p?.resolve(msg.result);
      } else if (msg.method === 'session/update') {
        const u = msg.params?.update;
        if (u?.sessionUpdate === 'agent_message_chunk' && u.content?.type === 'text') this.text += u.content.text;
      } else if (msg.id !== undefined && msg.method === 'session/request_permission') {
        // YOLO mode asks nothing; were it to ask, the first option (allow) is chosen.
        const option = msg.params?.options?.[0]?.optionId;
        this.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { outcome: { outcome: 'selected', optionId: option } } }) + '\n');
      } else if (msg.id !== undefined) {
        this.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'not offered by this client' } }) + '\n');
      }
    });
  }

  private call(method: string, params: unknown): Promise<any> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    });
  }

  async start(cwd: string): Promise<void> {
    await this.call('initialize', { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false } });
    this.sessionId = (await this.call('session/new', { cwd, mcpServers: [] })).sessionId;
  }

  /** One turn: the agent's text of it and why it stopped. */
  async prompt(text: string): Promise<{ text: string; stopReason: string }> {
    this.text = '';
    const r = await this.call('session/prompt', { sessionId: this.sessionId, prompt: [{ type: 'text', text }] });
    return { text: this.text.trim(), stopReason: r?.stopReason };
  }

  close(): void {
    try { process.kill(-this.child.pid!, 'SIGKILL'); } catch { /* already gone */ }
  }
}

describe('Gemini CLI', () => {
  for (const kind of KEY_KINDS) {
    it(`${kind}: writes a file with its write_file tool and answers`, async () => {
      const a = await kindAccount(g, kind, 'gm');
      const home = tempDir(`gm-home-${kind}`);
      const work = tempDir(`gm-work-${kind}`);
      const from = g.requests.length;
      try {
        geminiHome(home.dir);
        a.behave({ toolCall: { name: 'write_file', arguments: { file_path: join(work.dir, 'first.txt'), content: 'first through Switchyard\n' } }, text: 'FIRST-DONE' });
        const one = await gemini(a, home.dir, work.dir, ['--prompt', 'Write first.txt, then say FIRST-DONE.']);
        const served = await servedAndBilled(g, a, AGENT, from);
        expect(served.faults, served.faults.join('\n')).toEqual([]);
        expect(served.sent.length, `${AGENT}: its requests reached the gateway with the account key`).toBeGreaterThanOrEqual(2);
        const calls1 = a.upstreamCalls().length;
        const t1 = parse(one, 'first turn');
        // Two model calls: the one that asked for write_file, the one that answered after its result.
        expect(calls1).toBe(2);
        expect(t1.text).toBe('FIRST-DONE');
        expect(readFileSync(join(work.dir, 'first.txt'), 'utf8')).toBe('first through Switchyard\n');
        // The CLI's own token figures for its turn: the provider's usage of the calls it made.
        expect(t1.tokens, `${AGENT} first turn`).toEqual({ prompt: calls1 * MOCK_USAGE.prompt_tokens, candidates: calls1 * MOCK_USAGE.completion_tokens, requests: calls1 });
      } finally {
        home.remove();
        work.remove();
      }
    }, 300_000);
    it(`${kind}: continues an ACP session for a second turn`, async () => {
      const a = await kindAccount(g, kind, 'gma');
      const home = tempDir(`gma-home-${kind}`);
      const work = tempDir(`gma-work-${kind}`);
      const from = g.requests.length;
      geminiHome(home.dir);
      const acp = new AcpSession(a, home.dir, work.dir);
      try {
        await acp.start(work.dir);
        a.behave({ toolCall: { name: 'write_file', arguments: { file_path: join(work.dir, 'first.txt'), content: 'first through Switchyard\n' } }, text: 'FIRST-DONE' });
        const t1 = await acp.prompt('Write first.txt, then say FIRST-DONE.');
        expect(t1).toEqual({ text: 'FIRST-DONE', stopReason: 'end_turn' });
        expect(readFileSync(join(work.dir, 'first.txt'), 'utf8')).toBe('first through Switchyard\n');

        a.behave({ toolCall: { name: 'write_file', arguments: { file_path: join(work.dir, 'second.txt'), content: 'second\n' } }, text: 'SECOND-DONE' });
        const t2 = await acp.prompt('Now write second.txt, then say SECOND-DONE.');
        expect(t2).toEqual({ text: 'SECOND-DONE', stopReason: 'end_turn' });
        expect(readFileSync(join(work.dir, 'second.txt'), 'utf8')).toBe('second\n');
        const served = await servedAndBilled(g, a, AGENT, from);
        expect(served.faults, served.faults.join('\n')).toEqual([]);
        expect(a.upstreamCalls()).toHaveLength(4);
        // The second turn carries the first: its tool call and answer went back upstream.
        const last = served.sent.filter((r) => /:(stream)?[gG]enerateContent$/.test(r.path)).at(-1)?.body as { contents?: unknown[] } | undefined;
        expect(JSON.stringify(last?.contents ?? [])).toContain('FIRST-DONE');
      } finally {
        acp.close();
        home.remove();
        work.remove();
      }
    }, 300_000);
  }
});
