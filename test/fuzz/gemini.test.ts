import { afterAll, beforeAll, describe, it } from 'vitest';
import fc from 'fast-check';
import { secret, startProxyFixture, type ProxyFixture } from '../../server/gateway/test-fixture';
import { KEY_KINDS, kindKey, type KeyKind } from '../../server/testing/key-kinds';
import { thoughtSignatureOf } from '../../server/testing/mock-upstream/gemini';
import { Findings } from './support/findings';
import { forEachLimited } from './support/limited';
import { fuzzPasses, replayHint, scaled } from './support/seeds';

/**
 * Gemini bodies, broken in generated ways, on every key kind a Gemini client reaches through
 * translation (formats/gemini.ts, gemini-stream.ts, gemini-embed.ts): whatever the body, the
 * answer is never a 5xx, an error is in Google's envelope `{"error":{"code","message","status"}}`,
 * and a 200 is Gemini's answer (a JSON array or events for a stream, `embedding(s)` for embeddings).
 */

const CASES = scaled(240);
const CONCURRENCY = 6;
const FILE = 'test/fuzz/gemini.test.ts';

const MODEL: Record<KeyKind, string> = { standard: 'gpt-4o-mini', 'chat-only': 'gpt-4o-mini', anthropic: 'claude-haiku-4-5', 'vertex-claude': 'claude-haiku-4-5', azure: 'gpt-4o-mini', gemini: 'gemini-2.5-flash', bedrock: 'claude-haiku-4-5' };
type Method = 'generateContent' | 'streamGenerateContent' | 'streamGenerateContent?alt=sse' | 'countTokens' | 'embedContent' | 'batchEmbedContents';
const METHODS: readonly Method[] = ['generateContent', 'streamGenerateContent', 'streamGenerateContent?alt=sse', 'countTokens', 'embedContent', 'batchEmbedContents'];

let f: ProxyFixture;
const callers = new Map<KeyKind, string>();

beforeAll(async () => {
  f = await startProxyFixture();
  await f.config({ UNPRICED_MODEL_POLICY: 'bill:1,1' });
  let level = 950;
  for (const kind of KEY_KINDS) {
    const up = secret(`gfuzz-${kind}`);
    const key = kindKey(kind, f.mock, up, `gfuzz-${kind}`);
    await f.addKey(++level, up, { config: key.config, provider: key.provider });
    callers.set(kind, (await f.account({ level, credit: 1_000_000 })).key);
  }
});
afterAll(async () => { await f?.close(); });

/** A valid body of each method: every part kind the adapter reads, a function-calling turn, each config. */
function validBody(method: Method, model: string): Record<string, any> {
  if (method === 'embedContent') return { content: { parts: [{ text: 'embed me' }] }, outputDimensionality: 8 };
  // Each request of a batch names the batch's model (https://ai.google.dev/api/embeddings#method:-models.batchembedcontents).
  if (method === 'batchEmbedContents') return { requests: [{ model: `models/${model}`, content: { parts: [{ text: 'a' }] } }, { model: `models/${model}`, content: { parts: [{ text: 'b' }] } }] };
  const request = {
    systemInstruction: { parts: [{ text: 'Be brief.' }] },
    contents: [
      { role: 'user', parts: [{ text: 'Weather?' }, { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }] },
      { role: 'model', parts: [{ text: 'Hmm', thought: true }, { functionCall: { id: 'c1', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: thoughtSignatureOf('get_weather', { city: 'Paris' }) }] },
      { role: 'user', parts: [{ functionResponse: { id: 'c1', name: 'get_weather', response: { output: 'sunny' } } }, { text: 'And now?' }] },
    ],
    tools: [{ functionDeclarations: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] } }] }],
    toolConfig: { functionCallingConfig: { mode: 'AUTO' } },
    generationConfig: { maxOutputTokens: 200, temperature: 0.3, topP: 0.9, stopSequences: ['END'], responseMimeType: 'text/plain', thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } },
  };
  // countTokens takes `contents` alone (or a whole request wrapped): https://ai.google.dev/api/tokens#method:-models.counttokens
  return method === 'countTokens' ? { contents: request.contents } : request;
}

/** Where a mutation lands: a path into the valid body (the generator picks among them). */
const PATHS: readonly string[][] = [
  [], ['contents'], ['contents', '0'], ['contents', '0', 'role'], ['contents', '0', 'parts'], ['contents', '0', 'parts', '0'], ['contents', '0', 'parts', '0', 'text'],
  ['contents', '0', 'parts', '1', 'inlineData'], ['contents', '0', 'parts', '1', 'inlineData', 'mimeType'], ['contents', '1', 'parts', '1', 'functionCall'],
  ['contents', '1', 'parts', '1', 'functionCall', 'args'], ['contents', '1', 'parts', '1', 'functionCall', 'name'], ['contents', '2', 'parts', '0', 'functionResponse'],
  ['contents', '2', 'parts', '0', 'functionResponse', 'id'], ['contents', '2', 'parts', '0', 'functionResponse', 'response'], ['systemInstruction'], ['systemInstruction', 'parts'],
  ['tools'], ['tools', '0'], ['tools', '0', 'functionDeclarations', '0', 'parameters'], ['tools', '0', 'functionDeclarations', '0', 'parameters', 'type'],
  ['toolConfig', 'functionCallingConfig', 'mode'], ['toolConfig', 'functionCallingConfig', 'allowedFunctionNames'], ['generationConfig'], ['generationConfig', 'maxOutputTokens'],
  ['generationConfig', 'candidateCount'], ['generationConfig', 'responseMimeType'], ['generationConfig', 'responseSchema'], ['generationConfig', 'thinkingConfig'],
  ['generationConfig', 'thinkingConfig', 'thinkingBudget'], ['generationConfig', 'stopSequences'], ['cachedContent'], ['content'], ['content', 'parts'], ['requests'], ['requests', '0', 'content'],
];

interface Mutation { path: string[]; value: unknown; remove: boolean }
const mutation: fc.Arbitrary<Mutation> = fc.record({ path: fc.constantFrom(...PATHS), value: fc.jsonValue({ maxDepth: 3 }), remove: fc.boolean() });

function mutate(doc: Record<string, any>, ms: Mutation[]): string[] {
  const notes: string[] = [];
  for (const m of ms) {
    if (m.path.length === 0) continue;
    let at: any = doc;
    for (const k of m.path.slice(0, -1)) {
      if (at === null || typeof at !== 'object') { at = undefined; break; }
      at = at[k];
    }
    if (at === null || typeof at !== 'object') continue;
    const last = m.path.at(-1)!;
    if (m.remove) delete at[last];
    else at[last] = m.value;
    notes.push(`${m.path.join('.')} ${m.remove ? 'removed' : `= ${JSON.stringify(m.value).slice(0, 60)}`}`);
  }
  return notes;
}

interface Answer { status: number; contentType: string; text: string }

async function send(kind: KeyKind, method: Method, body: string): Promise<Answer | { error: string }> {
  try {
    const r = await fetch(`${f.gw.url}/v1beta/models/${MODEL[kind]}:${method}`, { method: 'POST', headers: { 'x-goog-api-key': callers.get(kind)!, 'content-type': 'application/json' }, body });
    return { status: r.status, contentType: r.headers.get('content-type') ?? '', text: await r.text() };
  } catch (err) {
    return { error: String((err as Error).cause ?? err) };
  }
}

function googleErrorProblem(text: string): string | null {
  let doc: any;
  try { doc = JSON.parse(text); } catch { return `not JSON: ${text.slice(0, 120)}`; }
  const e = doc?.error;
  if (typeof e?.code !== 'number' || typeof e.message !== 'string' || !e.message || typeof e.status !== 'string' || !/^[A-Z_]+$/.test(e.status)) return `not Google's error shape: ${text.slice(0, 200)}`;
  return null;
}

function answerProblem(method: Method, a: Answer): string | null {
  if (method === 'streamGenerateContent?alt=sse') {
    if (!/^text\/event-stream/i.test(a.contentType)) return `content-type ${a.contentType}`;
    const finishes = a.text.match(/"finishReason"/g)?.length ?? 0;
    return finishes === 1 ? null : `${finishes} finishReasons in the stream`;
  }
  let doc: any;
  try { doc = JSON.parse(a.text); } catch { return `not JSON: ${a.text.slice(0, 120)}`; }
  if (method === 'streamGenerateContent') {
    if (!Array.isArray(doc)) return 'not a JSON array';
    const finishes = doc.filter((c) => c?.candidates?.[0]?.finishReason).length;
    return finishes === 1 && doc.at(-1)?.usageMetadata ? null : `${finishes} finishReasons, last usage ${JSON.stringify(doc.at(-1)?.usageMetadata)}`;
  }
  if (method === 'countTokens') return typeof doc?.totalTokens === 'number' ? null : 'no totalTokens';
  if (method === 'embedContent') return Array.isArray(doc?.embedding?.values) ? null : 'no embedding';
  if (method === 'batchEmbedContents') return Array.isArray(doc?.embeddings) ? null : 'no embeddings';
  return Array.isArray(doc?.candidates) && doc.usageMetadata ? null : `not a generateContent answer: ${a.text.slice(0, 160)}`;
}

describe('Gemini methods', () => {
  it('serve each method\'s valid body on every key kind (else the fuzz below reaches no translator)', async () => {
    const failed: string[] = [];
    for (const kind of KEY_KINDS) {
      for (const method of METHODS) {
        const a = await send(kind, method, JSON.stringify(validBody(method, MODEL[kind])));
        // Embeddings exist only on OpenAI-format and Gemini keys (the Claude kinds answer a 400 naming it).
        const served = !method.includes('mbed') || kind === 'standard' || kind === 'chat-only' || kind === 'azure' || kind === 'gemini';
        const problem = 'error' in a ? a.error : served ? (a.status !== 200 ? `${a.status} ${a.text.slice(0, 200)}` : answerProblem(method, a)) : a.status !== 400 ? `${a.status}, expected 400` : googleErrorProblem(a.text);
        if (problem) failed.push(`${method} on ${kind}: ${problem}`);
      }
    }
    if (failed.length) throw new Error(`valid calls fail:\n  ${failed.join('\n  ')}`);
  });
});

describe.each(fuzzPasses())('Gemini fuzz ($label seed $seed)', ({ seed }) => {
  it(`answers ${CASES} generated broken bodies on every key kind without a 5xx, in Google's shape`, async () => {
    const cases = fc.sample(fc.record({ kind: fc.constantFrom(...KEY_KINDS), method: fc.constantFrom(...METHODS), mutations: fc.array(mutation, { minLength: 1, maxLength: 3 }) }), { seed, numRuns: CASES });
    const findings = new Findings(`Gemini fuzz (${cases.length} calls)`, seed, replayHint(seed, FILE));
    const statuses = new Map<string, number>();
    await forEachLimited(cases, CONCURRENCY, async (c, index) => {
      const doc = validBody(c.method, MODEL[c.kind]);
      const note = mutate(doc, c.mutations).join('; ');
      const body = JSON.stringify(doc);
      const a = await send(c.kind, c.method, body);
      const where = `${c.method} on ${c.kind}`;
      const request = { index, method: 'POST', path: `/v1beta/models/${MODEL[c.kind]}:${c.method}`, headers: {}, body, note: `${where}: ${note}` };
      const finding = (what: string, detail: string) => findings.add({ key: `${where}: ${what}`, detail, request });
      if ('error' in a) return finding('no answer', a.error);
      statuses.set(`${a.status}`, (statuses.get(`${a.status}`) ?? 0) + 1);
      if (a.status >= 500) return finding(`${a.status}`, a.text.slice(0, 300));
      if (a.status >= 400) {
        const problem = googleErrorProblem(a.text);
        if (problem) finding(`${a.status} not in Google's error shape`, problem);
      } else if (a.status === 200) {
        const problem = answerProblem(c.method, a);
        if (problem) finding('200 not in Gemini\'s format', problem);
      }
    });
    console.log(`Gemini fuzz: ${cases.length} calls; statuses ${[...statuses].map(([s, n]) => `${s}×${n}`).join(', ')}`);
    findings.assertNone();
  }, 300_000);
});
