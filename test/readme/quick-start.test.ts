/**
 * The README's quick start, run as a reader would on a fresh machine without network: the
 * gateway on an empty embedded database, the demo upstream, then every marked shell and
 * JavaScript block in order in one shell. The only thing changed in the blocks is the Root key
 * the reader pastes (and, when 8080 or 9999 is taken on this machine, those two ports).
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markedBlocks, ROOT, type MarkedBlock } from './blocks';
import { freePort, portFree, ReaderShell, Terminal, type BlockRun } from './reader';
import { needs } from '../../server/testing/requirements';
import { DESKTOP, ensureConsoleBuilt, launchChromium, signIn } from '../../console/test-support';

const README_GATEWAY = '127.0.0.1:8080';
const README_UPSTREAM = '127.0.0.1:9999';
/** A reader takes longer than this between two blocks; usage reaches bills in a fraction of it. */
const READER_PAUSE_MS = 1000;
/** The blocks of step 7 that run a coding agent (Claude Code, Codex, Gemini CLI). */
const AGENT_BLOCK = /^npx (claude|codex|gemini) /m;

let work: string;
let gateway: Terminal | undefined;
let upstream: Terminal | undefined;
let shell: ReaderShell | undefined;
let rootKey: string;
let rewrite: (code: string) => string;
/** The console address and key step 9 printed, for signing in as carol. */
let carol: { console: string; key: string } | undefined;
const blocks = markedBlocks();

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'switchyard-readme-'));
  // The reader works in the repository folder: its node_modules (openai among them) resolve the same here.
  await symlink(path.join(ROOT, 'node_modules'), path.join(work, 'node_modules'), 'dir');
  const gatewayPort = (await portFree(8080)) ? 8080 : await freePort();
  const upstreamPort = (await portFree(9999)) ? 9999 : await freePort();
  const rewritePorts = (code: string) => code
    .replaceAll(README_GATEWAY, `127.0.0.1:${gatewayPort}`)
    .replaceAll(README_UPSTREAM, `127.0.0.1:${upstreamPort}`);
  // A fresh machine's shell: no variables of this test run, nothing from a profile.
  const base = {
    PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? '/usr/bin:/bin'}`, HOME: work, LANG: 'C.UTF-8',
    // The coding agents of step 7 call only the gateway: their own traffic (updates, telemetry) stays off, as on a machine without network.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1', NPM_CONFIG_UPDATE_NOTIFIER: 'false',
  };

  const scripts = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts as Record<string, string>;
  const demo = /^tsx (\S+)$/.exec(scripts['demo:upstream'] ?? '');
  if (!demo) throw new Error(`package.json: demo:upstream should be "tsx <script>", is ${scripts['demo:upstream']}`);
  upstream = Terminal.start('demo upstream', ['--import', 'tsx', demo[1]], { ...base, DEMO_UPSTREAM_PORT: String(upstreamPort) }, ROOT);
  // `npm start` runs the bundle of server/app/main.ts; the sources are the same program without the build.
  // It builds the console first, which the gateway reads once at start (step 9 signs in to it).
  ensureConsoleBuilt();
  gateway = Terminal.start('gateway', ['--import', 'tsx', 'server/app/main.ts'], { ...base, PORT: String(gatewayPort), DATA_DIR: path.join(work, 'data') }, ROOT);
  await upstream.waitFor(/Demo upstream listening on http:\/\/127\.0\.0\.1:\d+/, 60_000);
  await gateway.waitFor(/Switchyard is listening on http:\/\/127\.0\.0\.1:\d+/, 90_000);
  rootKey = (await gateway.waitFor(/Root API key[^\n]*\n\s+(\S+)/, 5_000))[1];
  rewrite = (code) => rewritePorts(code).replace(/^export ROOT_KEY=.*$/m, `export ROOT_KEY=${rootKey}`);
  shell = new ReaderShell(work, base);
}, 180_000);

afterAll(async () => {
  shell?.close();
  await Promise.all([gateway?.stop(), upstream?.stop()]);
  if (work) await rm(work, { recursive: true, force: true });
});

const json = (run: BlockRun) => JSON.parse(run.stdout);
const blockNamed = (what: string, pattern: RegExp): MarkedBlock => {
  const found = blocks.filter((b) => b.kind === 'sh' && pattern.test(b.code));
  if (found.length !== 1) throw new Error(`README quick start: expected one block that ${what}, found ${found.length}`);
  return found[0];
};

/** What each step must show, found by what the block does; every step has one. */
const checks: [what: string, pattern: RegExp, check: (run: BlockRun) => void][] = [
  ['adds a provider key', /-X POST http:\/\/127\.0\.0\.1:8080\/x-keys/, (r) => {
    expect(json(r)).toMatchObject({ Action: 'add', Key: { Level: 1, Status: true, SecretHint: expect.any(String) } });
    expect(r.stdout).not.toMatch(/sk-demo-0123456789abcdef/);
  }],
  ['creates alice', /-X POST http:\/\/127\.0\.0\.1:8080\/x-users[^]*"Name":"alice"/, (r) => {
    // The README says: DNA `.1.2.`, a Balance of 10 and the key in User.SecretKey.
    expect(json(r)).toMatchObject({ Action: 'add', User: { Name: 'alice', DNA: '.1.2.', Balance: 10, SecretKey: expect.stringMatching(/^sk-Xvs/) } });
  }],
  ['grants more credit', /-X PUT http:\/\/127\.0\.0\.1:8080\/x-users\/alice/, (r) => {
    expect(json(r)).toMatchObject({ Action: 'update', Transfer: { Kind: 'grant', Credited: 5 }, User: { Balance: 15 } });
  }],
  ['calls a chat completion with curl', /\/v1\/chat\/completions/, (r) => {
    expect(json(r).choices[0].message.content).toContain('mock answer from gpt-4o-mini');
  }],
  ['runs the SDK script', /^node hello\.mjs$/, (r) => {
    expect(r.stdout.match(/mock answer from gpt-4o-mini/g)).toHaveLength(2);
    expect(r.stdout).toContain('prompt_tokens');
  }],
  ['reads alice\'s bill', /\/dashboard\/bill/, (r) => {
    const bill = json(r);
    expect(bill.total_requests).toBe(3);
    expect(bill.total_credit_used).toBeGreaterThan(0);
    expect(bill.usage_summary['gpt-4o-mini'].model_stats).toMatchObject({ Requests: 3, CreditUsed: bill.total_credit_used });
  }],
  ['runs Claude Code through the gateway', /^npx claude -p /m, (r) => {
    expect(r.stdout).toContain('This is a mock answer from');
  }],
  ['runs Codex through the gateway', /^npx codex exec /m, (r) => {
    expect(r.stdout).toContain('This is a mock answer from');
  }],
  ['runs Gemini CLI through the gateway', /^npx gemini /m, (r) => {
    expect(r.stdout).toContain('This is a mock answer from gemini-2.5-flash');
  }],
  ['runs the @google/genai script', /^node gemini\.mjs$/, (r) => {
    expect(r.stdout).toContain('mock answer from gemini-2.5-flash');
    expect(r.stdout).toContain('promptTokenCount');
  }],
  ['reads the Owner\'s bill of alice', /\/x-bill\?user=alice/, (r) => {
    const bill = json(r);
    expect(bill.usage_users).toHaveLength(1);
    expect(bill.usage_users[0]).toMatchObject({ name: 'alice', total_requests: 3 });
    expect(bill.usage_users[0].total_credit_used).toBeGreaterThan(0);
  }],
  ['creates carol and prints where to sign in', /-X POST http:\/\/127\.0\.0\.1:8080\/x-users[^]*"Name":"carol"/, (r) => {
    const printed = /^Open (http:\/\/127\.0\.0\.1:\d+\/console\/) and sign in with (sk-Xvs\S+)$/m.exec(r.stdout);
    expect(printed, r.stdout).not.toBeNull();
    carol = { console: printed![1], key: printed![2] };
  }],
  ['reads carol\'s live figures with her key', /\/dashboard\/live/, (r) => {
    // The README says: balance 5, rates 1.5, usage still empty.
    expect(json(r)).toMatchObject({ object: 'user_info', name: 'carol', role: 'user', balance: 5, rates: 1.5, daily_usage: { Requests: 0 }, monthly_usage: { Requests: 0 } });
  }],
];

describe('README quick start', () => {
  it('marks the start commands, the demo upstream and the steps, the Root key pasted once', () => {
    expect(blocks.map((b) => b.kind).slice(0, 2)).toEqual(['gateway', 'demo-upstream']);
    expect(blocks[0].code).toBe('npm ci && npm start');
    expect(blocks[1].code).toBe('npm run demo:upstream');
    const scripts = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts;
    expect(scripts.start).toMatch(/node dist\/main\.mjs$/);
    expect(blocks.filter((b) => /^export ROOT_KEY=/m.test(b.code))).toHaveLength(1);
    for (const [what, pattern] of checks) expect(blockNamed(what, pattern)).toBeDefined();
    // Every curl that sends a body says it is JSON (the gateway refuses anything else with 415).
    for (const b of blocks.filter((x) => x.kind === 'sh' && /curl[^\n]*(\\\n[^\n]*)*-d /.test(x.code))) {
      expect(b.code, `README line ${b.line}`).toContain("-H 'content-type: application/json'");
    }
  });

  it('works as written: each block succeeds, and the bill shows the calls with their cost', async () => {
    const ran = new Set<MarkedBlock>();
    for (const b of blocks) {
      if (b.kind === 'gateway' || b.kind === 'demo-upstream') continue;
      if (b.kind === 'js') {
        await writeFile(path.join(work, b.file!), rewrite(b.code));
        continue;
      }
      await new Promise((r) => setTimeout(r, READER_PAUSE_MS));
      // A coding agent reports its progress on stderr; its answer is on stdout.
      const agent = AGENT_BLOCK.test(b.code);
      const run = await shell!.run(rewrite(b.code), agent ? 120_000 : undefined);
      const where = `README line ${b.line}:\n${b.code}\n--- stdout:\n${run.stdout}\n--- stderr:\n${run.stderr}\n--- gateway:\n${gateway!.output.slice(-2000)}`;
      expect(run.ok, where).toBe(true);
      if (!agent) expect(run.stderr, where).toBe('');
      if (run.stdout.trimStart().startsWith('{')) expect(json(run), where).not.toHaveProperty('error');
      const check = checks.find(([, pattern]) => pattern.test(b.code));
      if (check) {
        try {
          check[2](run);
        } catch (err) {
          throw new Error(`${check[0]}: ${(err as Error).message}\n${where}`);
        }
      }
      ran.add(b);
    }
    for (const [what, pattern] of checks) expect(ran.has(blockNamed(what, pattern)), what).toBe(true);
  }, 420_000);

  it('opens carol\'s own console with the key step 9 printed', needs('chromium', { timeout: 60_000 }), async () => {
    expect(carol, 'step 9 ran and printed the console address and key').toBeDefined();
    const browser = await launchChromium();
    try {
      const page = await (await browser.newContext({ viewport: DESKTOP })).newPage();
      page.setDefaultTimeout(15_000);
      await page.goto(carol!.console);
      await page.getByRole('heading', { name: 'Switchyard console', exact: true }).waitFor();
      await signIn(page, carol!.key);
      await page.getByRole('heading', { name: 'Balance', exact: true }).waitFor();
      expect(await page.locator('header.topbar .whoami').textContent()).toBe('carol Account');
      expect(await page.locator('header.topbar .brand-sub').textContent()).toBe('Account console');
    } finally {
      await browser.close();
    }
  });
});
