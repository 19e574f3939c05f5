/**
 * What admission's reservation estimate costs per request, on this machine, for typical and
 * large requests: the input bound (estimateInputTokens on the parsed body and its bytes), the
 * catalogue's limits (modelLimits, memoized per model name) and the maximum cost (maxCostOf at
 * the resolved price), as admission runs them. Also what loading the model catalogue costs
 * once per process (time and RSS).
 *
 *   npm run bench:estimate
 *
 * Prints one line per request shape: `<shape>: <bytes> bytes, <ns> ns per request (<ratio> of
 * JSON.parse of the same body, which every call pays already)`, then
 * `catalogue load: <ms> ms, +<MB> MB RSS`. Then the tokenizer fallback admission takes when the
 * byte bound alone would refuse a call (domain/pricing/token-count.ts): that no tokenizer was
 * loaded by the lines above, what loading o200k costs once, and per shape the counted input
 * against the byte bound and the count's time against the byte bound's. Bounded: a fixed number
 * of rounds, about 20 s.
 */
// The catalogue is imported dynamically below, after the first RSS reading, so its load is measured.
export {};

const rssBefore = process.memoryUsage().rss;
const loadStart = performance.now();
const { modelLimits, estimateInputTokens, maxCostOf, maxOutputTokens, DEFAULT_OUTPUT_LIMIT } = await import('../server/domain/pricing/estimate');
const { priceFor } = await import('../server/domain/pricing/cost');
const { catalogueModel } = await import('../server/domain/pricing/catalogue');
const { countInputTokens, loadTextCounter, loadedEncodings } = await import('../server/domain/pricing/token-count');
const { inputText } = await import('../server/domain/pricing/estimate');
const { claudeCodeChat } = await import('../server/testing/claude-code-request');
catalogueModel('gpt-4o-mini');
const loadMs = performance.now() - loadStart;
const loadMb = (process.memoryUsage().rss - rssBefore) / 1e6;

const english = 'The quick brown fox jumps over the lazy dog while the gateway counts what it may cost. ';
const chinese = '我们今天讨论一下这个问题的解决方案，并且列出所有要点。';
const conversation = (text: string, turns: number) => ({
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'You are a helpful assistant.' },
    ...Array.from({ length: turns }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: text })),
  ],
});

const SHAPES: [string, Record<string, unknown>][] = [
  ['typical chat (6 turns, English)', conversation(english.repeat(3), 6)],
  ['typical chat with tools', { ...conversation(english.repeat(3), 6), tools: Array.from({ length: 5 }, (_, i) => ({ type: 'function', function: { name: `tool_${i}`, description: english, parameters: { type: 'object', properties: { q: { type: 'string' } } } } })) }],
  ['image + question', { model: 'gpt-4o', messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${'iVBORw0KGgo'.repeat(30_000)}` } }] }] }],
  ['large prompt (400 KB English)', conversation(english.repeat(4700), 1)],
  ['large prompt (100,000 Chinese characters)', conversation(chinese.repeat(3600).slice(0, 100_000), 1)],
  ['long conversation (200 turns)', conversation(english.repeat(2), 200)],
  ['Claude Code\'s first request (system prompt, 22 tools)', claudeCodeChat('gpt-4.1')],
];

/** The Owner's parsed PRICING: one object per configuration, as the config store keeps it. */
const PRICING = {};

function run(doc: Record<string, unknown>, raw: Buffer): number {
  const model = doc.model as string;
  const limits = modelLimits(model, DEFAULT_OUTPUT_LIMIT);
  const input = estimateInputTokens(doc, raw, model, limits.context);
  const output = maxOutputTokens(doc, limits.output, false);
  return maxCostOf(input, output, priceFor(model, PRICING), 1, 1);
}

let sink = 0;
/** The best of 5 rounds, in ns per call, after a warm-up; rounds shrink for slow calls. */
function time(f: () => number, n: number): number {
  for (let i = 0; i < Math.min(n, 2000); i++) sink += f();
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < n; i++) sink += f();
    best = Math.min(best, Number(process.hrtime.bigint() - t) / n);
  }
  return best;
}

for (const [name, doc] of SHAPES) {
  const text = JSON.stringify(doc);
  const raw = Buffer.from(text);
  const ns = time(() => run(doc, raw), 20_000);
  const parse = time(() => (JSON.parse(text) ? 1 : 0), Math.max(50, Math.floor(2e7 / raw.length)));
  console.log(`${name}: ${raw.length} bytes, ${ns.toFixed(0)} ns per request (${(ns / parse).toFixed(3)} of JSON.parse)`);
}
console.log(`catalogue load: ${loadMs.toFixed(0)} ms, +${loadMb.toFixed(1)} MB RSS`);

// The fast path above must not have loaded a tokenizer: it is what every call that fits pays.
if (loadedEncodings().length > 0) throw new Error(`the byte bound loaded a tokenizer: ${loadedEncodings().join(', ')}`);
console.log('tokenizers loaded by the byte bound: none');
const rssTokenizer = process.memoryUsage().rss;
const tokenizerStart = performance.now();
const count = await loadTextCounter('o200k_base');
count('warm');
console.log(`o200k load (first call that needs it): ${(performance.now() - tokenizerStart).toFixed(0)} ms, +${((process.memoryUsage().rss - rssTokenizer) / 1e6).toFixed(1)} MB RSS`);

/** The best of 5 rounds of an async call, in ns, after one warm-up round. */
async function timeAsync(f: () => Promise<number>, n: number): Promise<number> {
  for (let i = 0; i < n; i++) sink += await f();
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < n; i++) sink += await f();
    best = Math.min(best, Number(process.hrtime.bigint() - t) / n);
  }
  return best;
}

for (const [name, doc] of SHAPES) {
  const raw = Buffer.from(JSON.stringify(doc));
  const model = doc.model as string;
  const limits = modelLimits(model, DEFAULT_OUTPUT_LIMIT);
  const bytes = estimateInputTokens(doc, raw, model, limits.context);
  const counted = (await countInputTokens(inputText(doc, model, limits.context), count, limits.context)) ?? bytes;
  const byteNs = time(() => run(doc, raw), 20_000);
  const rounds = Math.max(3, Math.floor(4e6 / raw.length));
  // A new counter function each time has no remembered strings: the request's first count.
  const firstNs = await timeAsync(async () => (await countInputTokens(inputText(doc, model, limits.context), (t) => count(t), limits.context)) ?? 0, rounds);
  // The same counter: its long strings (system prompt, tools, history) counted before, as an agent's next call.
  const againNs = await timeAsync(async () => (await countInputTokens(inputText(doc, model, limits.context), count, limits.context)) ?? 0, rounds);
  console.log(`counted, ${name}: ${counted} tokens against ${bytes} by bytes (${(counted / bytes).toFixed(3)}); first count ${(firstNs / 1000).toFixed(0)} µs (${(firstNs / byteNs).toFixed(0)}× the byte bound), again ${(againNs / 1000).toFixed(0)} µs (${(againNs / byteNs).toFixed(0)}×)`);
}
if (!Number.isFinite(sink)) process.exit(1);
