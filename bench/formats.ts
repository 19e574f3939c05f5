/**
 * Formats benchmark: one Switchyard process on the lean upstream, the same small chat sent
 * whole and streamed through each path, as ratios to the same-format path (an OpenAI client on
 * an OpenAI-format key) measured in the same run:
 * - `sy-gemini`: a Gemini client (`:generateContent`, `:streamGenerateContent?alt=sse`) on a
 *   `gemini` key, the same kind, byte for byte;
 * - `sy-bedrock`: an OpenAI client on a `bedrock` key with an access key ID, Claude through
 *   InvokeModel: translated to Anthropic's Messages, signed with SigV4, its stream deframed
 *   from AWS event-stream and translated back;
 * - `sy-bedrock-api`: the same on a `bedrock` key without an access key ID (a Bedrock API key
 *   as Bearer), so SigV4's share shows;
 * - `sy-anthropic`: the translated path bench:proxy also measures (OpenAI client, `anthropic`
 *   key), so the Bedrock rows' own cost (SigV4, event-stream) shows beside it.
 *
 *   npm run bench:formats                 # 3 s warm-up, 6 s per path and workload in 3 rounds (about 2 minutes)
 *   npm run bench:formats -- --quick      # smoke run: 1 s + 2 s
 *   options: --connections N (default 32), --warmup S, --duration S, --rounds N,
 *            --only sy-bedrock,… (measure only these paths besides direct and switchyard),
 *            --node-flag F (repeatable: a flag for Switchyard's node, e.g. --node-flag --cpu-prof)
 *
 * Ends with one line: `formats vs same format: gemini X / Y, bedrock Z / W` (throughput ratios,
 * non-streamed / streamed).
 */
import { readArgs } from './args';
import { generateAccountKey } from '../server/adapters/security/crypto';
import { bundleEnv, bundleServer } from '../scripts/build/bundle';
import { runBenchmark, startChild, stopAll } from './proxy/children';
import { combine, latencyOf, throughput, timingsAtOne, validate, type Latency, type Target, type Throughput, type Timings, type Workload } from './proxy/load';
import { configureKind, configureSwitchyard, configureTranslated, UPSTREAM_SECRET } from './proxy/switchyard';

interface Options { warmup: number; duration: number; rounds: number; connections: number; only: string[] | null }

function options(argv: string[]): Options {
  const a = readArgs(argv);
  const quick = a.has('--quick');
  return {
    warmup: a.num('--warmup', quick ? 1 : 3), duration: a.num('--duration', quick ? 2 : 6),
    rounds: Math.round(a.num('--rounds', quick ? 1 : 3)), connections: a.num('--connections', 32),
    only: a.text('--only')?.split(',') ?? null,
  };
}

/** Every value after a `--node-flag`. */
const nodeFlags = (argv: string[]) => argv.flatMap((a, i) => (argv[i - 1] === '--node-flag' ? [a] : []));

const GEMINI_MODEL = 'gemini-2.5-flash';
const CONTENTS = [{ role: 'user', parts: [{ text: 'Say hello in five words.' }] }];
const GEMINI_BODY = JSON.stringify({ contents: CONTENTS, generationConfig: { maxOutputTokens: 16 } });
/** The model an OpenAI client names, and the Bedrock inference profile the key maps it to. */
const BEDROCK_PROFILE = 'us.anthropic.claude-haiku-4-5-20251001-v1:0';

/** One Gemini call of each workload, checked for a usable answer (validate() reads OpenAI's). */
async function validateGemini(t: Target, w: Workload): Promise<string | null> {
  const res = await fetch(w === 'stream' ? t.streamUrl! : t.url, { method: 'POST', headers: { 'content-type': 'application/json', ...t.headers }, body: GEMINI_BODY })
    .catch((err: Error) => err);
  if (res instanceof Error) return `request failed: ${res.message}`;
  const text = await res.text();
  if (res.status !== 200) return `HTTP ${res.status}: ${text.slice(0, 300)}`;
  const docs = w === 'whole' ? [text] : text.split(/\r?\n/).filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));
  try {
    const parsed = docs.map((d) => JSON.parse(d) as { candidates?: { content?: { parts?: { text?: unknown }[] }; finishReason?: string }[] });
    if (!parsed.every((d) => typeof d.candidates?.[0]?.content?.parts?.[0]?.text === 'string')) return `a candidate without text: ${text.slice(0, 300)}`;
    if (w === 'stream' && (parsed.length < 3 || parsed.at(-1)!.candidates![0].finishReason !== 'STOP')) return `stream of ${parsed.length} events without a final STOP: ${text.slice(-300)}`;
  } catch {
    return `not JSON: ${text.slice(0, 200)}`;
  }
  return null;
}

interface Row { target: Target; gemini: boolean; problem: string | null; whole?: Throughput; stream?: Throughput; single?: Latency }

const fmt = (n: number | undefined, digits = 0) => (n === undefined || !Number.isFinite(n) ? 'n/a' : n.toFixed(digits));
const cpuPerRequest = (t: Throughput | undefined) => (t?.cpuUs !== undefined && t.requests > 0 ? t.cpuUs / t.requests : undefined);
const usable = (t: Throughput | undefined, seconds: number) => !!t && t.rps > 0 && t.failures <= 0.01 * t.rps * seconds;

async function main(): Promise<number> {
  const o = options(process.argv.slice(2));
  console.log(`formats benchmark: ${o.connections} connections, warm-up ${o.warmup} s, ${o.duration} s per path and workload in ${o.rounds} round(s), on 127.0.0.1`);
  const rootKey = generateAccountKey();
  const bundle = await bundleServer();
  const [upstream, sy] = await Promise.all([
    startChild('bench upstream', ['--import', 'tsx', 'bench/lean-upstream.ts'], {}, /listening (http:\/\/127\.0\.0\.1:\d+)/),
    startChild('Switchyard', [...nodeFlags(process.argv.slice(2)), bundle], {
      PORT: '0', HOST: '127.0.0.1', DATABASE_URL: 'memory://', ROOT_KEY: rootKey, LOG_LEVEL: 'warn', NODE_ENV: 'production', ...bundleEnv(),
    }, /Switchyard is listening on (http:\/\/\S+)/),
  ]);
  const same = await configureSwitchyard(sy.url, rootKey, upstream.url);
  const anthropic = await configureTranslated(sy.url, rootKey, upstream.url);
  const gemini = await configureKind(sy.url, rootKey, upstream.url, { level: 3, name: 'gemini', config: { provider_type: 'gemini' } });
  // SigV4 (an access key ID): the bench upstream checks no signature, but the gateway signs every call.
  const bedrock = await configureKind(sy.url, rootKey, upstream.url, {
    level: 4, name: 'bedrock', config: { provider_type: 'bedrock', region: 'us-east-1', access_key_id: 'AKIABENCH0123456789', models: { 'gpt-4o-mini': BEDROCK_PROFILE } },
  });
  const bedrockApiKey = await configureKind(sy.url, rootKey, upstream.url, {
    level: 5, name: 'bedrockapi', config: { provider_type: 'bedrock', region: 'us-east-1', models: { 'gpt-4o-mini': BEDROCK_PROFILE } },
  });
  console.log(`  upstream ${upstream.url}; Switchyard ${sy.url}`);

  const chat = `${sy.url}/v1/chat/completions`;
  const pid = sy.proc.pid;
  const rows: Row[] = [
    { target: { name: 'direct', url: `${upstream.url}/v1/chat/completions`, headers: { authorization: `Bearer ${UPSTREAM_SECRET}` }, pid: upstream.proc.pid }, gemini: false, problem: null },
    { target: { name: 'switchyard', url: chat, headers: { authorization: `Bearer ${same.key}` }, pid }, gemini: false, problem: null },
    {
      target: {
        name: 'sy-gemini', url: `${sy.url}/v1beta/models/${GEMINI_MODEL}:generateContent`, streamUrl: `${sy.url}/v1beta/models/${GEMINI_MODEL}:streamGenerateContent?alt=sse`,
        headers: { 'x-goog-api-key': gemini.key }, pid, bodies: { whole: GEMINI_BODY, stream: GEMINI_BODY },
      },
      gemini: true, problem: null,
    },
    { target: { name: 'sy-bedrock', url: chat, headers: { authorization: `Bearer ${bedrock.key}` }, pid }, gemini: false, problem: null },
    { target: { name: 'sy-bedrock-api', url: chat, headers: { authorization: `Bearer ${bedrockApiKey.key}` }, pid }, gemini: false, problem: null },
    { target: { name: 'sy-anthropic', url: chat, headers: { authorization: `Bearer ${anthropic.key}` }, pid }, gemini: false, problem: null },
  ];
  for (const r of rows) {
    if (o.only && !['direct', 'switchyard', ...o.only].includes(r.target.name)) r.problem = 'left out (--only)';
    if (r.problem) continue;
    for (const w of ['whole', 'stream'] as Workload[]) {
      const p = await (r.gemini ? validateGemini(r.target, w) : validate(r.target, w));
      if (p) { r.problem = `${w === 'whole' ? 'non-streamed' : 'streamed'} request: ${p}`; break; }
    }
  }
  const live = rows.filter((r) => !r.problem);
  for (const r of live) {
    process.stdout.write(`  warm-up ${r.target.name} ${o.warmup} s\n`);
    await throughput(r.target, 'whole', o.warmup, o.connections);
    await throughput(r.target, 'stream', Math.max(1, o.warmup / 3), o.connections);
  }
  // Rounds alternate the paths, so the shared cores' background load does not favour one.
  const slice = o.duration / o.rounds;
  const runs = new Map<Row, { whole: Throughput[]; stream: Throughput[]; single: Timings[] }>(live.map((r) => [r, { whole: [], stream: [], single: [] }]));
  for (let round = 1; round <= o.rounds; round++) {
    process.stdout.write(`  round ${round}/${o.rounds}\n`);
    for (const w of ['whole', 'stream'] as Workload[]) for (const r of live) runs.get(r)![w].push(await throughput(r.target, w, slice, o.connections));
    for (const r of live) runs.get(r)!.single.push(await timingsAtOne(r.target, 'whole', Math.max(1, slice / 3)));
  }
  for (const r of live) {
    const x = runs.get(r)!;
    r.whole = combine(x.whole);
    r.stream = combine(x.stream);
    r.single = latencyOf(x.single);
  }

  console.log('', `\npath           workload   req/s      p50 ms   p99 ms   CPU µs/req   failures`);
  for (const r of rows) {
    if (r.problem) { console.log(`${r.target.name.padEnd(14)} NOT MEASURED: ${r.problem}`); continue; }
    for (const [w, t] of [['whole', r.whole], ['streamed', r.stream]] as const) {
      const bad = usable(t, o.duration) ? '' : `  <- INVALID: non-2xx/errors ${t?.statuses ?? ''}`;
      console.log(`${r.target.name.padEnd(14)} ${w.padEnd(10)} ${fmt(t?.rps).padStart(7)}  ${fmt(t?.p50, 1).padStart(7)}  ${fmt(t?.p99, 1).padStart(7)}   ${fmt(cpuPerRequest(t), 1).padStart(10)}   ${t?.failures ?? 'n/a'}${bad}`);
    }
  }
  console.log('\nconcurrency 1, non-streamed (high-resolution clock):');
  for (const r of live) console.log(`${r.target.name.padEnd(14)} p50 ${fmt(r.single!.p50, 3)} ms, p99 ${fmt(r.single!.p99, 3)} ms over ${r.single!.count} requests${r.single!.failures ? `, ${r.single!.failures} non-2xx` : ''}`);

  const [direct, base] = rows;
  const measured = (r: Row, w: 'whole' | 'stream') => !r.problem && usable(r[w], o.duration);
  const ratio = (r: Row, w: 'whole' | 'stream') => (measured(r, w) && measured(base, w) ? r[w]!.rps / base[w]!.rps : NaN);
  const cpu = (r: Row, w: 'whole' | 'stream') => (measured(r, w) ? cpuPerRequest(r[w]) : undefined);
  const added = (r: Row) => (!r.problem && !direct.problem && r.single && direct.single ? r.single.p50 - direct.single.p50 : NaN);
  console.log('');
  for (const [name, what] of [['sy-gemini', 'Gemini client, gemini key (same kind, byte for byte)'], ['sy-bedrock', 'OpenAI client, bedrock Claude key (translated, SigV4, event-stream)'], ['sy-bedrock-api', 'OpenAI client, bedrock Claude API key (translated, Bearer, event-stream)'], ['sy-anthropic', 'OpenAI client, anthropic key (translated)']] as const) {
    const r = rows.find((x) => x.target.name === name)!;
    console.log(`${what} vs same format: throughput ratio non-streamed ${fmt(ratio(r, 'whole'), 2)}, streamed ${fmt(ratio(r, 'stream'), 2)}; `
      + `CPU µs/req ${fmt(cpu(r, 'whole'), 1)} vs ${fmt(cpu(base, 'whole'), 1)} non-streamed, ${fmt(cpu(r, 'stream'), 1)} vs ${fmt(cpu(base, 'stream'), 1)} streamed; `
      + `p50 added at concurrency 1 ${fmt(added(r), 3)} vs ${fmt(added(base), 3)} ms`);
  }
  const g = rows.find((x) => x.target.name === 'sy-gemini')!;
  const b = rows.find((x) => x.target.name === 'sy-bedrock')!;
  console.log(`formats vs same format: gemini ${fmt(ratio(g, 'whole'), 2)} / ${fmt(ratio(g, 'stream'), 2)}, bedrock ${fmt(ratio(b, 'whole'), 2)} / ${fmt(ratio(b, 'stream'), 2)}`);
  return rows.every((r) => !r.problem || r.problem === 'left out (--only)') ? 0 : 1;
}

runBenchmark('formats', main, 'formats vs same format: gemini n/a / n/a, bedrock n/a / n/a', () => stopAll());
