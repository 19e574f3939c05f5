/**
 * Proxy benchmark: the same small chat completions, whole and streamed, sent to a lean
 * upstream directly, through nginx as a bare reverse-proxy hop (when nginx is installed),
 * through Switchyard (auth, limits and billing on the path) and through @portkey-ai/gateway,
 * all as child processes on loopback, measured in the same run.
 *
 *   npm run bench:proxy                 # 5 s warm-up + 8 s per measurement (about 2 minutes)
 *   npm run bench:proxy -- --quick      # smoke run: 1 s + 2 s
 *   options: --connections N (default 32), --warmup S, --duration S (per target and measurement),
 *            --rounds N (the duration is split into N rounds alternating the targets; default 2)
 *
 * Ends with one line: `ratio vs portkey: X, vs direct: Y, vs nginx: Z, p50 added ms: W` (non-streamed
 * throughput ratios; p50 latency Switchyard minus direct at concurrency 1); the lines before
 * it give the ratios vs nginx, with shared state (Redis) and with metrics on vs METRICS=off.
 */
import { fileURLToPath } from 'node:url';
import { readArgs } from './args';
import { generateAccountKey } from '../server/adapters/security/crypto';
import { bundleEnv, bundleServer } from '../scripts/build/bundle';
import { freePort, runBenchmark, startChild, stopAll, type Child } from './proxy/children';
import { combine, latencyOf, throughput, timingsAtOne, validate, type Latency, type Target, type Throughput, type Timings, type Workload } from './proxy/load';
import { configureSwitchyard, configureTranslated, UPSTREAM_SECRET } from './proxy/switchyard';
import { findNginx, startNginx } from './proxy/nginx';
import { benchRedisUrl, deleteBenchKeys, sharedStateEnv } from './proxy/shared-state';

interface Options {
  warmup: number;
  /** Seconds per target and measurement, split over the rounds. */
  duration: number;
  rounds: number;
  connections: number;
}

function options(argv: string[]): Options {
  const a = readArgs(argv);
  const quick = a.has('--quick');
  return {
    warmup: a.num('--warmup', quick ? 1 : 5), duration: a.num('--duration', quick ? 2 : 8),
    rounds: Math.round(a.num('--rounds', quick ? 1 : 2)), connections: a.num('--connections', 32),
  };
}

interface TargetResult {
  target: Target;
  /** Why this target could not be measured (a non-2xx answer, a broken stream). */
  problem: string | null;
  whole?: Throughput;
  stream?: Throughput;
  single?: Latency;
}

const fmt = (n: number | undefined, digits = 0) => (n === undefined || !Number.isFinite(n) ? 'n/a' : n.toFixed(digits));
const pad = (s: string, n: number) => s.padEnd(n);
const padL = (s: string, n: number) => s.padStart(n);

/** A throughput figure is usable only when (nearly) every answer was a 2xx. */
function usable(t: Throughput | undefined, seconds: number): boolean {
  return !!t && t.rps > 0 && t.failures <= 0.01 * t.rps * seconds;
}

async function startAll(): Promise<{ upstream: Child; nginx: Child | Error; bareHop: Child | Error; switchyard: Child; switchyardShared: Child | Error; switchyardNoMetrics: Child | Error; portkey: Child | Error; rootKey: string; portkeyPort: number }> {
  const rootKey = generateAccountKey();
  const portkeyPort = await freePort();
  const shim = fileURLToPath(new URL('./portkey-shim.mjs', import.meta.url));
  // Measured as `npm start` runs it: the production bundle on plain node.
  const bundle = await bundleServer();
  const [upstream, switchyard, portkey] = await Promise.all([
    startChild('bench upstream', ['--import', 'tsx', 'bench/lean-upstream.ts'], {}, /listening (http:\/\/127\.0\.0\.1:\d+)/),
    startChild('Switchyard', [bundle], {
      PORT: '0', HOST: '127.0.0.1', DATABASE_URL: 'memory://', ROOT_KEY: rootKey, LOG_LEVEL: 'warn', NODE_ENV: 'production', ...bundleEnv(),
    }, /Switchyard is listening on (http:\/\/\S+)/),
    startChild('Portkey', ['--import', shim, 'node_modules/@portkey-ai/gateway/build/start-server.js', `--port=${portkeyPort}`, '--headless'],
      { NODE_ENV: 'production' }, /(Ready) for connections/).catch((err: Error) => err),
  ]);
  const binary = findNginx();
  const nginx = binary ? await startNginx(binary, upstream.url).catch((err: Error) => err) : new Error('nginx is not installed (apt-get install nginx-light, or set NGINX)');
  const bareHop = await startChild('bare hop', ['--import', 'tsx', 'bench/bare-hop.ts', upstream.url], { NODE_ENV: 'production', ...bundleEnv() }, /listening (http:\/\/127\.0\.0\.1:\d+)/)
    .catch((err: Error) => err);
  // The same bundle with shared state on (REDIS_URL): one instance, its counters in Redis.
  const switchyardShared = await startChild('Switchyard+Redis', [bundle], {
    PORT: '0', HOST: '127.0.0.1', DATABASE_URL: 'memory://', ROOT_KEY: rootKey, LOG_LEVEL: 'warn', NODE_ENV: 'production', ...bundleEnv(), ...sharedStateEnv(),
  }, /Switchyard is listening on (http:\/\/\S+)/).catch((err: Error) => err);
  // The same bundle with METRICS=off: what /metrics costs the proxy is the difference.
  const switchyardNoMetrics = await startChild('Switchyard METRICS=off', [bundle], {
    PORT: '0', HOST: '127.0.0.1', DATABASE_URL: 'memory://', ROOT_KEY: rootKey, LOG_LEVEL: 'warn', NODE_ENV: 'production', ...bundleEnv(), METRICS: 'off',
  }, /Switchyard is listening on (http:\/\/\S+)/).catch((err: Error) => err);
  return { upstream, nginx, bareHop, switchyard, switchyardShared, switchyardNoMetrics, portkey, rootKey, portkeyPort };
}

/**
 * Every measurement is split into rounds that alternate between the targets, so a change in
 * the machine's background load (the cores are shared) does not favour whichever ran first.
 */
async function measureAll(results: TargetResult[], o: Options): Promise<void> {
  const live = results.filter((r) => !r.problem);
  const slice = o.duration / o.rounds;
  for (const r of live) {
    process.stdout.write(`  warm-up ${r.target.name} ${o.warmup} s\n`);
    await throughput(r.target, 'whole', o.warmup, o.connections);
    await throughput(r.target, 'stream', Math.max(1, o.warmup / 5), o.connections);
  }
  const runs = new Map<TargetResult, { whole: Throughput[]; stream: Throughput[]; single: Timings[] }>(
    live.map((r) => [r, { whole: [], stream: [], single: [] }]));
  for (const w of ['whole', 'stream'] as Workload[]) {
    for (let round = 1; round <= o.rounds; round++) {
      process.stdout.write(`  ${w === 'whole' ? 'non-streamed' : 'streamed'}, round ${round}/${o.rounds}: ${live.map((r) => r.target.name).join(', ')}\n`);
      for (const r of live) runs.get(r)![w].push(await throughput(r.target, w, slice, o.connections));
    }
  }
  for (let round = 1; round <= o.rounds; round++) {
    process.stdout.write(`  concurrency 1, round ${round}/${o.rounds}\n`);
    for (const r of live) runs.get(r)!.single.push(await timingsAtOne(r.target, 'whole', slice));
  }
  for (const r of live) {
    const x = runs.get(r)!;
    r.whole = combine(x.whole);
    r.stream = combine(x.stream);
    r.single = latencyOf(x.single);
  }
}

/** CPU time of the target's own process per request answered (its upstream's not included). */
const cpuPerRequest = (t: Throughput | undefined) => (t?.cpuUs !== undefined && t.requests > 0 ? t.cpuUs / t.requests : undefined);

function report(results: TargetResult[], o: Options): string {
  const lines: string[] = [];
  lines.push('', `target       workload   req/s      p50 ms   p99 ms   CPU µs/req   failures`);
  for (const r of results) {
    if (r.problem) {
      lines.push(`${pad(r.target.name, 12)} NOT MEASURED: ${r.problem}`);
      continue;
    }
    for (const [w, t] of [['whole', r.whole], ['streamed', r.stream]] as const) {
      const bad = usable(t, o.duration) ? '' : `  <- INVALID: non-2xx/errors ${t?.statuses ?? ''}`;
      lines.push(`${pad(r.target.name, 12)} ${pad(w, 10)} ${padL(fmt(t?.rps), 7)}  ${padL(fmt(t?.p50, 1), 7)}  ${padL(fmt(t?.p99, 1), 7)}   ${padL(fmt(cpuPerRequest(t), 1), 10)}   ${t?.failures ?? 'n/a'}${bad}`);
    }
  }
  lines.push('', `concurrency 1, non-streamed (high-resolution clock):`);
  for (const r of results) {
    if (r.problem || !r.single) continue;
    lines.push(`${pad(r.target.name, 12)} p50 ${fmt(r.single.p50, 3)} ms, p99 ${fmt(r.single.p99, 3)} ms over ${r.single.count} requests${r.single.failures ? `, ${r.single.failures} non-2xx` : ''}`);
  }
  return lines.join('\n');
}

async function main(): Promise<number> {
  const o = options(process.argv.slice(2));
  console.log(`proxy benchmark: ${o.connections} connections, warm-up ${o.warmup} s, ${o.duration} s per measurement in ${o.rounds} round(s), all on 127.0.0.1`);
  const { upstream, nginx, bareHop, switchyard, switchyardShared, switchyardNoMetrics, portkey, rootKey, portkeyPort } = await startAll();
  const account = await configureSwitchyard(switchyard.url, rootKey, upstream.url);
  const sharedAccount = switchyardShared instanceof Error ? switchyardShared : await configureSwitchyard(switchyardShared.url, rootKey, upstream.url).catch((err: Error) => err);
  const translatedAccount = await configureTranslated(switchyard.url, rootKey, upstream.url).catch((err: Error) => err);
  const noMetricsAccount = switchyardNoMetrics instanceof Error ? switchyardNoMetrics : await configureSwitchyard(switchyardNoMetrics.url, rootKey, upstream.url).catch((err: Error) => err);
  console.log(`  upstream ${upstream.url}; Switchyard ${switchyard.url} (load sent with ${account.who}); Portkey ${portkey instanceof Error ? 'failed to start' : `http://127.0.0.1:${portkeyPort}`}; nginx ${nginx instanceof Error ? 'not measured' : nginx.url}`);

  const upstreamAuth = { authorization: `Bearer ${UPSTREAM_SECRET}` };
  const results: TargetResult[] = [
    { target: { name: 'direct', url: `${upstream.url}/v1/chat/completions`, headers: upstreamAuth, pid: upstream.proc.pid }, problem: null },
    {
      target: { name: 'nginx', url: `${nginx instanceof Error ? '' : nginx.url}/v1/chat/completions`, headers: upstreamAuth, pid: nginx instanceof Error ? undefined : nginx.proc.pid },
      problem: nginx instanceof Error ? nginx.message.split('\n')[0] : null,
    },
    { target: { name: 'switchyard', url: `${switchyard.url}/v1/chat/completions`, headers: { authorization: `Bearer ${account.key}` }, pid: switchyard.proc.pid }, problem: null },
    {
      target: {
        name: 'portkey', url: `http://127.0.0.1:${portkeyPort}/v1/chat/completions`,
        headers: { ...upstreamAuth, 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${upstream.url}/v1` },
        pid: portkey instanceof Error ? undefined : portkey.proc.pid,
      },
      problem: portkey instanceof Error ? `did not start: ${portkey.message.split('\n')[0]}` : null,
    },
    // Last, so the targets above keep their places.
    {
      target: {
        name: 'sy+redis', url: `${switchyardShared instanceof Error ? '' : switchyardShared.url}/v1/chat/completions`,
        headers: { authorization: `Bearer ${sharedAccount instanceof Error ? '' : sharedAccount.key}` },
        pid: switchyardShared instanceof Error ? undefined : switchyardShared.proc.pid,
      },
      problem: sharedAccount instanceof Error ? `REDIS_URL ${benchRedisUrl}: ${sharedAccount.message.split('\n')[0]}` : null,
    },
    {
      target: {
        name: 'sy-nometrics', url: `${switchyardNoMetrics instanceof Error ? '' : switchyardNoMetrics.url}/v1/chat/completions`,
        headers: { authorization: `Bearer ${noMetricsAccount instanceof Error ? '' : noMetricsAccount.key}` },
        pid: switchyardNoMetrics instanceof Error ? undefined : switchyardNoMetrics.proc.pid,
      },
      problem: noMetricsAccount instanceof Error ? `METRICS=off: ${noMetricsAccount.message.split('\n')[0]}` : null,
    },
    {
      target: { name: 'bare-hop', url: `${bareHop instanceof Error ? '' : bareHop.url}/v1/chat/completions`, headers: upstreamAuth, pid: bareHop instanceof Error ? undefined : bareHop.proc.pid },
      problem: bareHop instanceof Error ? `did not start: ${bareHop.message.split('\n')[0]}` : null,
    },
    {
      // The same Switchyard process, its OpenAI-format calls translated for an Anthropic-format key.
      target: { name: 'sy-translate', url: `${switchyard.url}/v1/chat/completions`, headers: { authorization: `Bearer ${translatedAccount instanceof Error ? '' : translatedAccount.key}` }, pid: switchyard.proc.pid },
      problem: translatedAccount instanceof Error ? `Anthropic key: ${translatedAccount.message.split('\n')[0]}` : null,
    },
  ];
  for (const r of results) {
    if (r.problem) continue;
    for (const w of ['whole', 'stream'] as Workload[]) {
      const p = await validate(r.target, w);
      if (p) { r.problem = `${w === 'whole' ? 'non-streamed' : 'streamed'} request: ${p}`; break; }
    }
  }
  await measureAll(results, o);
  console.log(report(results, o));

  const [direct, ngx, sy, pk] = results;
  const ok = (r: TargetResult) => !r.problem && usable(r.whole, o.duration);
  const ratio = (a: TargetResult, b: TargetResult) => (ok(a) && ok(b) ? a.whole!.rps / b.whole!.rps : NaN);
  const streamedRatio = (a: TargetResult, b: TargetResult) => (!a.problem && !b.problem && usable(a.stream, o.duration) && usable(b.stream, o.duration) ? a.stream!.rps / b.stream!.rps : NaN);
  /** Latency a target adds to direct's at concurrency 1. */
  const addedBy = (t: TargetResult, p: 'p50' | 'p99') => (!t.problem && !direct.problem && t.single && direct.single ? t.single[p] - direct.single[p] : NaN);
  const added = (p: 'p50' | 'p99') => addedBy(sy, p);
  console.log('');
  if (ok(sy) && ok(direct)) {
    console.log(`added latency at concurrency 1 (Switchyard minus direct): p50 ${fmt(added('p50'), 3)} ms, p99 ${fmt(added('p99'), 3)} ms`);
    const streamed = (b: TargetResult) => streamedRatio(sy, b);
    console.log(`streamed throughput ratio vs portkey: ${fmt(streamed(pk), 2)}, vs direct: ${fmt(streamed(direct), 2)}`);
    console.log(`throughput ratio vs nginx (a bare hop): non-streamed ${fmt(ratio(sy, ngx), 2)}, streamed ${fmt(streamed(ngx), 2)}; nginx vs direct: ${fmt(ratio(ngx, direct), 2)}`);
  } else {
    console.log(`Switchyard could not be measured: ${sy.problem ?? 'its answers were not 2xx under load'}; the figures below are n/a.`);
  }
  const syr = results.find((r) => r.target.name === 'sy+redis')!;
  console.log(`shared state (REDIS_URL, one instance): throughput ratio vs in-process ${fmt(ratio(syr, sy), 2)}, vs direct ${fmt(ratio(syr, direct), 2)} (in-process ${fmt(ratio(sy, direct), 2)}); p50 added ms ${fmt(addedBy(syr, 'p50'), 3)} (in-process ${fmt(added('p50'), 3)})`);
  const bare = results.find((r) => r.target.name === 'bare-hop')!;
  console.log(`bare uWS hop (this runtime, no gateway work) vs nginx: non-streamed ${fmt(ratio(bare, ngx), 2)}, streamed ${fmt(streamedRatio(bare, ngx), 2)}; Switchyard vs the bare hop: non-streamed ${fmt(ratio(sy, bare), 2)}, streamed ${fmt(streamedRatio(sy, bare), 2)}`);
  const off = results.find((r) => r.target.name === 'sy-nometrics')!;
  console.log(`metrics on vs METRICS=off: throughput ratio non-streamed ${fmt(ratio(sy, off), 3)}, streamed ${fmt(streamedRatio(sy, off), 3)}; p50 added ms on ${fmt(added('p50'), 3)}, off ${fmt(addedBy(off, 'p50'), 3)}`);
  const tr = results.find((r) => r.target.name === 'sy-translate')!;
  console.log(`translated path (OpenAI client, Anthropic-format key) vs same format: throughput ratio non-streamed ${fmt(ratio(tr, sy), 3)}, streamed ${fmt(streamedRatio(tr, sy), 3)}; p50 added ms translated ${fmt(addedBy(tr, 'p50'), 3)}, same format ${fmt(added('p50'), 3)}`);
  console.log(`ratio vs portkey: ${fmt(ratio(sy, pk), 2)}, vs direct: ${fmt(ratio(sy, direct), 2)}, vs nginx: ${fmt(ratio(sy, ngx), 2)}, p50 added ms: ${fmt(added('p50'), 2)}`);
  return ok(sy) && ok(direct) ? 0 : 1;
}

runBenchmark('proxy', main, 'ratio vs portkey: n/a, vs direct: n/a, vs nginx: n/a, p50 added ms: n/a', () => stopAll().then(deleteBenchKeys));
