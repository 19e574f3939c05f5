/**
 * The agents' suite harness: a gateway on PGlite in front of the mock upstream, one provider key
 * of a given kind on a Level of its own, an account with credit routed there, and the agent run
 * as a child process with a HOME and working directory of its own, every network feature off.
 *
 * Between the agent and the gateway sits a recorder (a loopback pass-through) that notes each
 * request's method, path, status and body, so a test can assert that every request got 2xx
 * and, when one did not, name the request by its body's shape (keys and types, never contents).
 *
 * Conventions shared by every file in test/agents/ (docs/conformance.md is written from them):
 * `describe('<agent row name>')` and `it('<kind>: <scenario>')`, kind one of KEY_KINDS.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { secret, startProxyFixture, type ProxyFixture, type UsageRow } from '../../server/gateway/test-fixture';
import type { Behaviour, RecordedRequest, Usage } from '../../server/testing/mock-upstream';
import type { TestAccount } from '../../server/testing/accounts';
import { kindKey } from '../../server/testing/key-kinds';

export { KEY_KINDS, KIND_CONFIG, type KeyKind } from './kinds';
import type { KeyKind } from './kinds';

/** The model each key kind's provider serves in the suite (each account's ModelMapper sends every model there). */
export const KIND_MODEL: Record<KeyKind, string> = {
  standard: 'gpt-4.1',
  'chat-only': 'gpt-4.1',
  anthropic: 'claude-sonnet-4-5',
  'vertex-claude': 'claude-sonnet-4-5@20250929',
  azure: 'gpt-4.1',
  gemini: 'gemini-2.5-pro',
  // The client-facing name; the key's `models` maps it to the Bedrock inference profile (BEDROCK_MODELS).
  bedrock: 'claude-sonnet-4-5',
};
/** The Owner's price of every KIND_MODEL (per million tokens, in PRICING): Claude Sonnet 4.5's list price. */
export const PRICE = { InputText: 3, OutputText: 15 };

/** What the mock reports for every call of the suite: billing must show exactly this. */
export const MOCK_USAGE: Usage = { prompt_tokens: 1200, completion_tokens: 30 };
/** The credit one call with MOCK_USAGE costs (PRICE is per million tokens). */
export const CALL_COST = (MOCK_USAGE.prompt_tokens * PRICE.InputText + MOCK_USAGE.completion_tokens * PRICE.OutputText) / 1e6;

/** One request as it went from the agent to the gateway. */
export interface AgentRequest {
  method: string;
  path: string;
  status: number;
  /** The account key the request carried (Bearer, x-api-key, api-key, x-goog-api-key or `?key=`), to tell tests apart. */
  key: string | null;
  body: unknown;
  /** The start of a non-2xx answer's body (the gateway's error message: no secrets). */
  error?: string;
}

/** The gateway of an agents' test file: the proxy fixture, the recorder in front, and the helpers. */
export interface AgentGateway {
  f: ProxyFixture;
  /** The recorder's origin: give this to the agent as the gateway's URL. */
  url: string;
  requests: AgentRequest[];
  close(): Promise<void>;
}

/** Starts the gateway fixture (PGlite, mock upstream) and the recorder in front of it, with PRICING for every kind's model. */
export async function startAgentGateway(): Promise<AgentGateway> {
  const f = await startProxyFixture();
  const models = [...new Set(Object.values(KIND_MODEL))];
  await f.config({ PRICING: JSON.stringify({ ChatPricing: Object.fromEntries(models.map((m) => [m, PRICE])) }) });
  const requests: AgentRequest[] = [];
  const recorder = await startRecorder(f.gw.url, requests);
  return {
    f,
    url: recorder.url,
    requests,
    async close() {
      await recorder.close();
      await f.close();
    },
  };
}

function keyOf(req: IncomingMessage): string | null {
  const h = req.headers;
  const bearer = /^Bearer\s+(\S+)$/i.exec(h.authorization ?? '');
  const query = new URL(req.url ?? '/', 'http://recorder').searchParams.get('key');
  return (h['x-api-key'] as string | undefined) || (h['api-key'] as string | undefined) || (h['x-goog-api-key'] as string | undefined) || bearer?.[1] || query || null;
}

/** A loopback pass-through to `target` that records every request; answers are streamed back as they come. */
async function startRecorder(target: string, requests: AgentRequest[]): Promise<{ url: string; close(): Promise<void> }> {
  const to = new URL(target);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: unknown = undefined;
      if (raw.length > 0) {
        try { body = JSON.parse(raw.toString('utf8')); } catch { body = `<${raw.length} bytes, not JSON>`; }
      }
      const rec: AgentRequest = { method: req.method ?? 'GET', path: (req.url ?? '/').split('?')[0], status: 0, key: keyOf(req), body };
      requests.push(rec);
      const headers = { ...req.headers, host: to.host };
      const up = httpRequest({ hostname: to.hostname, port: to.port, method: req.method, path: req.url, headers }, (answer) => {
        rec.status = answer.statusCode ?? 0;
        res.writeHead(rec.status, answer.headers);
        if (rec.status >= 300) {
          const head: Buffer[] = [];
          answer.on('data', (c: Buffer) => { if (head.length < 4) head.push(c); });
          answer.on('end', () => { rec.error = Buffer.concat(head).toString('utf8').slice(0, 500); });
        }
        answer.pipe(res);
      });
      up.on('error', (e) => {
        rec.status = 599;
        rec.error = `recorder: ${e.message}`;
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: rec.error } }));
      });
      // The agent left before the answer's end: the gateway sees it leave too.
      res.on('close', () => { if (!res.writableFinished) up.destroy(); });
      up.end(raw);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

/** A key of one kind on a Level of its own and an account routed there. */
export interface KindAccount {
  kind: KeyKind;
  level: number;
  user: TestAccount;
  /** The model the provider serves (the account maps every model to it). */
  model: string;
  /** Sets how the mock answers this key's calls (usage is always MOCK_USAGE). */
  behave(b: Behaviour): void;
  /** The mock's recorded model calls made with this key (token exchanges and token counts left out). */
  upstreamCalls(): RecordedRequest[];
}

let levelSerial = 700;

/**
 * Adds one provider key of `kind` on a new Level and an account with `credit` routed there,
 * whose ModelMapper sends every model to the kind's model (as an Owner would for an agent
 * whose model names the provider does not know).
 */
export async function kindAccount(g: AgentGateway, kind: KeyKind, label: string, credit = 20): Promise<KindAccount> {
  const { f } = g;
  const level = ++levelSerial;
  const up = secret(`${label}-${kind}`);
  const model = KIND_MODEL[kind];
  // Each key has a mock credential of its own (a Vertex key: a service account in a project of its own, which its calls carry).
  const key = kindKey(kind, f.mock, up, `${label}-${level}`);
  await f.addKey(level, up, { config: key.config, provider: key.provider });
  const user = await f.account({ level, credit, modelMapper: `*=${model}` });
  // Token counts (Anthropic's count_tokens, Bedrock's count-tokens, Gemini's :countTokens) are no model calls.
  const isModelCall = (r: RecordedRequest) => r.path !== '/token' && !/count[_-]?tokens/i.test(r.path) && r.method === 'POST';
  return {
    kind, level, user, model,
    behave: (b) => f.mock.behave(key.credential, { ...b, usage: MOCK_USAGE }),
    upstreamCalls: () => f.mock.requests.filter((r) => isModelCall(r) && (key.project ? r.project === key.project : r.credential === up)),
  };
}

/** The shape of a JSON value: its keys and their types, arrays as their items' distinct shapes; never its strings or numbers. */
export function shapeOf(v: unknown, depth = 0): unknown {
  if (v === null) return 'null';
  if (Array.isArray(v)) {
    if (depth >= SHAPE_DEPTH) return `array(${v.length})`;
    // An array's items as one shape per kind: objects merged by key (a `type` field told apart), so a
    // conversation of 40 messages or 20 tools reads as the few kinds of item it holds.
    const kinds = new Map<string, unknown>();
    for (const x of v) {
      const kind = x && typeof x === 'object' && !Array.isArray(x) ? `object:${String((x as { type?: unknown; role?: unknown }).type ?? (x as { role?: unknown }).role ?? '')}` : JSON.stringify(shapeOf(x, depth + 1));
      kinds.set(kind, mergeShapes(kinds.get(kind), shapeOf(x, depth + 1)));
    }
    return [...kinds.values()];
  }
  if (typeof v === 'object') {
    if (depth >= SHAPE_DEPTH) return 'object';
    const o = v as Record<string, unknown>;
    // The `type` and `role` of an item are its kind, not its contents: they stay, as literals.
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k,
      (k === 'type' || k === 'role') && typeof x === 'string' ? `=${x}`
        // A tool's JSON Schema is the agent's own and long: its presence is the shape.
        : SCHEMA_KEYS.has(k) && x && typeof x === 'object' ? 'JSON Schema'
          : shapeOf(x, depth + 1)]));
  }
  return typeof v;
}

const SHAPE_DEPTH = 5;
const SCHEMA_KEYS = new Set(['input_schema', 'parameters', 'schema']);

function mergeShapes(a: unknown, b: unknown): unknown {
  if (a === undefined) return b;
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const out: Record<string, unknown> = { ...(a as Record<string, unknown>) };
    for (const [k, x] of Object.entries(b as Record<string, unknown>)) out[k] = k in out ? mergeShapes(out[k], x) : x;
    return out;
  }
  return JSON.stringify(a) === JSON.stringify(b) ? a : `${JSON.stringify(a)}|${JSON.stringify(b)}`.replace(/"/g, '');
}

/** One failed request, told for a test's failure message: the agent and its version, the route, status, error and the body's shape. */
export function describeRequest(agent: string, r: AgentRequest): string {
  const model = r.body && typeof r.body === 'object' && typeof (r.body as { model?: unknown }).model === 'string' ? ` model=${(r.body as { model: string }).model}` : '';
  return `${agent}: ${r.method} ${r.path}${model} answered ${r.status}${r.error ? ` (${r.error.replace(/\s+/g, ' ').slice(0, 300)})` : ''}\n  body shape: ${JSON.stringify(shapeOf(r.body)).slice(0, 4000)}`;
}

/** The installed version of a package (its package.json), e.g. `@anthropic-ai/claude-code@2.1.332`. */
export function versionOf(pkg: string): string {
  const require = createRequire(import.meta.url);
  // A package whose `exports` leave out package.json (@openai/agents) is found where Node looks for it.
  const path = require.resolve.paths(pkg)!.map((dir) => join(dir, pkg, 'package.json')).find((p) => existsSync(p))
    ?? require.resolve(`${pkg}/package.json`);
  return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
}

export interface AgentRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/**
 * Runs an agent to its end with only the environment given (plus PATH), in its own process
 * group so a timeout ends it and its children; stdin is closed (non-interactive).
 */
export function runAgent(command: string, args: string[], opts: { cwd: string; env: Record<string, string>; timeoutMs?: number; input?: string }): Promise<AgentRun> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: opts.cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* already gone */ }
    }, opts.timeoutMs ?? 90_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut });
    });
    child.stdin.end(opts.input ?? '');
  });
}

/** A directory of the test's own (HOME, working dir), removed by the returned function. */
export function tempDir(label: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `switchyard-agent-${label}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The requests of one account, from index `from` of the recorder's list. */
export const requestsOf = (g: AgentGateway, user: TestAccount, from = 0) => g.requests.slice(from).filter((r) => r.key === user.key);

/**
 * What every agents' test asserts after its runs, as one message per fault (empty when all holds):
 * - every request the agent sent got 2xx (named by its body's shape otherwise);
 * - every model call reached the provider once and was billed once, with exactly the provider's usage and price.
 */
export async function servedAndBilled(g: AgentGateway, a: KindAccount, agent: string, from = 0): Promise<{ faults: string[]; rows: UsageRow[]; sent: AgentRequest[] }> {
  const sent = requestsOf(g, a.user, from);
  const faults: string[] = [];
  // A refused request an agent retried as it was is told once, with how many times it was sent.
  const refused = new Map<string, { r: AgentRequest; times: number }>();
  for (const r of sent) {
    if (r.status >= 200 && r.status < 300) continue;
    const told = describeRequest(agent, r).replace(/"request_id":"[^"]*"/, '');
    const seen = refused.get(told);
    if (seen) seen.times++;
    else refused.set(told, { r, times: 1 });
  }
  for (const [told, { times }] of refused) faults.push(times > 1 ? `${told}\n  (sent ${times} times)` : told);
  // An agent may exit on the answer's last byte, before the gateway has settled that call: wait for it (bounded).
  for (let i = 0; i < 250 && g.f.gw.gateway.proxy.inFlight > 0; i++) await new Promise((r) => setTimeout(r, 20));
  const rows = await g.f.usage(a.user.id);
  const calls = a.upstreamCalls();
  if (rows.length !== calls.length) faults.push(`${agent}: ${calls.length} calls reached the provider but ${rows.length} were billed`);
  for (const row of rows) {
    if (row.status !== 'ok' || row.model !== a.model || row.prompt !== MOCK_USAGE.prompt_tokens || row.completion !== MOCK_USAGE.completion_tokens || Math.abs(row.credit_used - CALL_COST) > 1e-12) {
      faults.push(`${agent}: billed ${JSON.stringify(row)}; the provider reported ${MOCK_USAGE.prompt_tokens} in, ${MOCK_USAGE.completion_tokens} out on ${a.model} (${CALL_COST} credit)`);
    }
  }
  return { faults, rows, sent };
}
