import { afterAll, beforeAll, describe, it } from 'vitest';
import fc from 'fast-check';
import { secret, startProxyFixture, type ProxyFixture } from '../../server/gateway/test-fixture';
import { KEY_KINDS, kindKey, type KeyKind } from '../../server/testing/key-kinds';
import { CLIENT_PATHS, PINNED, generalized, mutate, mutations, validBody, type ClientFormat } from './proxy/translation-cases';
import { proxyErrorProblem } from './support/envelope';
import { Findings } from './support/findings';
import { forEachLimited } from './support/limited';
import { fuzzPasses, replayHint, scaled } from './support/seeds';

/**
 * Every client format against every key kind, with bodies broken in generated ways: each
 * translator (Anthropic ⇄ chat, Responses → chat and → Anthropic, the cloud platforms' forms)
 * and each same-format pass-through meets them. Whatever the body, the answer is never a 5xx,
 * and an error is in the client's own shape (Anthropic's on /v1/messages, OpenAI's envelope
 * on the others); a 200 is the client's format. In-process (server/gateway/test-fixture.ts):
 * the process fuzzer (proxy.test.ts) watches for crashes, this one for how each pair answers.
 */

const CASES = scaled(450);
const CONCURRENCY = 6;
const STREAM_SHARE = 0.3;
const FILE = 'test/fuzz/proxy-translation.test.ts';

const CLIENTS: readonly ClientFormat[] = ['chat', 'messages', 'responses'];
/** A model each key kind serves as it is (an Anthropic model for the Anthropic kinds). */
const MODEL: Record<KeyKind, string> = { standard: 'gpt-4o-mini', 'chat-only': 'gpt-4o-mini', anthropic: 'claude-haiku-4-5', 'vertex-claude': 'claude-haiku-4-5', azure: 'gpt-4o-mini', gemini: 'gemini-2.5-flash', bedrock: 'claude-haiku-4-5' };

let f: ProxyFixture;
/** Per key kind, the key of an account on a Level served by one key of that kind alone. */
const callers = new Map<KeyKind, string>();

beforeAll(async () => {
  f = await startProxyFixture();
  // The fuzzer's models are billed at a fallback price where the catalogue has none.
  await f.config({ UNPRICED_MODEL_POLICY: 'bill:1,1' });
  let level = 900;
  for (const kind of KEY_KINDS) {
    const up = secret(`tfuzz-${kind}`);
    const key = kindKey(kind, f.mock, up, `tfuzz-${kind}`);
    await f.addKey(++level, up, { config: key.config, provider: key.provider });
    callers.set(kind, (await f.account({ level, credit: 1_000_000 })).key);
  }
});
afterAll(async () => { await f?.close(); });

interface Answer { status: number; contentType: string; text: string }

async function send(kind: KeyKind, client: ClientFormat, body: string): Promise<Answer | { error: string }> {
  const headers: Record<string, string> = { authorization: `Bearer ${callers.get(kind)}`, 'content-type': 'application/json' };
  if (client === 'messages') headers['anthropic-version'] = '2023-06-01';
  try {
    const r = await fetch(`${f.gw.url}${CLIENT_PATHS[client]}`, { method: 'POST', headers, body });
    return { status: r.status, contentType: r.headers.get('content-type') ?? '', text: await r.text() };
  } catch (err) {
    return { error: String((err as Error).cause ?? err) };
  }
}

/** Why a 200 is not an answer in the client's format, or null. */
function answerProblem(client: ClientFormat, stream: boolean, a: Answer): string | null {
  if (stream) {
    if (!/^text\/event-stream/i.test(a.contentType)) return `content-type ${a.contentType}`;
    // The translation's own error event (formats/index.ts): an upstream event it could not convert.
    if (a.text.includes('The upstream answer could not be read')) return 'a converter failed on the upstream stream';
    const last = { chat: 'data: [DONE]', messages: 'event: message_stop', responses: 'event: response.' }[client];
    return a.text.includes(last) ? null : `no ${last} in the stream: …${a.text.slice(-160)}`;
  }
  let doc: any;
  try { doc = JSON.parse(a.text); } catch { return `not JSON: ${a.text.slice(0, 120)}`; }
  const ok = client === 'chat' ? doc?.object === 'chat.completion' : client === 'messages' ? doc?.type === 'message' : doc?.object === 'response';
  return ok ? null : `not a ${client} answer: ${a.text.slice(0, 160)}`;
}

describe('translation pairs', () => {
  it('serve each format\'s valid request on every key kind, whole and streamed (else the fuzz below reaches no translator)', async () => {
    const failed: string[] = [];
    for (const kind of KEY_KINDS) {
      for (const client of CLIENTS) {
        for (const stream of [false, true]) {
          const body = JSON.stringify({ ...validBody(client, MODEL[kind]), ...(stream ? { stream: true } : {}) });
          const a = await send(kind, client, body);
          const problem = 'error' in a ? a.error : a.status !== 200 ? `${a.status} ${a.text.slice(0, 200)}` : answerProblem(client, stream, a);
          if (problem) failed.push(`${client}${stream ? ' (stream)' : ''} on ${kind}: ${problem}`);
        }
      }
    }
    if (failed.length) throw new Error(`valid calls fail:\n  ${failed.join('\n  ')}`);
  });
});

describe.each(fuzzPasses())('translation fuzz ($label seed $seed)', ({ seed }) => {
  it(`answers ${CASES} generated broken bodies and ${KEY_KINDS.length * CLIENTS.length * PINNED.length} pinned ones, every client format on every key kind, without a 5xx and in the client's shape`, async () => {
    const pinned = KEY_KINDS.flatMap((kind) => CLIENTS.flatMap((client) => PINNED.map((m, i) => ({ kind, client, mutations: m, stream: i % 2 === 1 }))));
    const cases = [...pinned, ...fc.sample(fc.record({
      kind: fc.constantFrom(...KEY_KINDS), client: fc.constantFrom(...CLIENTS), mutations, stream: fc.double({ min: 0, max: 1, noNaN: true }).map((x) => x < STREAM_SHARE),
    }), { seed, numRuns: CASES })];
    const findings = new Findings(`translation fuzz (${cases.length} calls)`, seed, replayHint(seed, FILE));
    const statuses = new Map<string, number>();
    await forEachLimited(cases, CONCURRENCY, async (c, index) => {
      const { doc, note } = mutate(validBody(c.client, MODEL[c.kind]), c.mutations);
      if (c.stream) doc.stream = true;
      const body = JSON.stringify(doc);
      const a = await send(c.kind, c.client, body);
      const pair = `${c.client} on ${c.kind}`;
      const request = { index, method: 'POST', path: CLIENT_PATHS[c.client], headers: {}, body, note: `${pair}: ${note}` };
      const finding = (what: string, detail: string) => findings.add({ key: `${pair}: ${what} (${generalized(note)})`, detail, request });
      if ('error' in a) return finding('no answer', a.error);
      statuses.set(`${a.status}`, (statuses.get(`${a.status}`) ?? 0) + 1);
      if (a.status >= 500) return finding(`${a.status}`, a.text.slice(0, 300));
      if (a.status >= 400) {
        const problem = proxyErrorProblem(a.text, c.client === 'messages');
        if (problem) finding(`${a.status} not in the client's error shape`, problem);
      } else if (a.status === 200) {
        const problem = answerProblem(c.client, c.stream, a);
        if (problem) finding('200 not in the client\'s format', problem);
      }
    });
    console.log(`translation fuzz: ${cases.length} calls (${pinned.length} pinned); statuses ${[...statuses].map(([s, n]) => `${s}×${n}`).join(', ')}`);
    findings.assertNone();
  }, 300_000);
});
