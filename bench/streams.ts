/**
 * Streams benchmark: N concurrent slow streams (CHUNKS chunks INTERVAL_MS apart from a
 * slow-stream upstream) sent through Switchyard (authentication, limits and billing on: a
 * subaccount with credit, as bench:proxy sets it up) and directly to the upstream, for
 * N = 512, 1,024, 2,048 and 4,096. Per stream the worst gap between two reads of its answer;
 * reported as p50/p99 over the streams, with failures and the gateway's resident memory.
 *
 *   npm run bench:streams                       # N = 512 … 4096 (about a minute)
 *   npm run bench:streams -- --quick            # N = 512 and 1024
 *   options: --sizes 512,4096  --chunks 64  --interval 20 (ms)
 *            --redis (Switchyard with REDIS_URL: admission counters in Redis, see proxy/shared-state.ts)
 *            --verbose (when the worst gaps ended, the spread of first bytes)
 *            --cpu-prof DIR (Switchyard runs with node --cpu-prof; the profile lands in DIR when it stops)
 *
 * The client runs in its own process (bench/streams-client.ts, raw sockets), the upstream in
 * another (bench/streams-upstream.ts), Switchyard as `npm start` runs it (dist/main.mjs on
 * plain node, in-memory PGlite) with UPSTREAM_CONNECTIONS raised to the largest N: the
 * default (256 per origin) would queue every stream past the 256th, which is a setting, not
 * what is measured here. Each N runs direct first, then through Switchyard, then through the
 * two reference hops when they start: nginx (one worker, as in bench:proxy) and the bare uWS
 * hop (bench/bare-hop.ts: the gateway's two edges with nothing between), so a ratio to direct
 * can be read against what any hop costs on this machine.
 *
 * Ends with one line: `streams 4096: failed F, worst gap p99 Xms vs direct Yms (ratio R), rss M MB`
 * (for the largest N; rss is Switchyard's peak resident memory during that run).
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { readArgs } from './args';
import { fileURLToPath } from 'node:url';
import { generateAccountKey } from '../server/adapters/security/crypto';
import { bundleEnv, bundleServer } from '../scripts/build/bundle';
import { runBenchmark, startChild, stopAll, type Child } from './proxy/children';
import { configureSwitchyard, UPSTREAM_SECRET } from './proxy/switchyard';
import { benchRedisUrl, deleteBenchKeys, sharedStateEnv } from './proxy/shared-state';
import { cpuMicros } from './proxy/load';
import { findNginx, startNginx } from './proxy/nginx';
import type { ClientMessage, StreamsJob, StreamsResult } from './streams-client';

interface Options {
  sizes: number[];
  chunks: number;
  interval: number;
  redis: boolean;
  /** Also print when the worst gaps happened and the spread of first bytes. */
  verbose: boolean;
  /** Folder for a CPU profile of Switchyard (node --cpu-prof), written when it stops. */
  cpuProf?: string;
}

function options(argv: string[]): Options {
  const a = readArgs(argv);
  const sizes = (a.text('--sizes') ?? (a.has('--quick') ? '512,1024' : '512,1024,2048,4096'))
    .split(',').map(Number).filter((n) => Number.isInteger(n) && n > 0);
  return { sizes: sizes.length ? sizes : [512], chunks: a.num('--chunks', 64), interval: a.num('--interval', 20), redis: a.has('--redis'), verbose: a.has('--verbose'), cpuProf: a.text('--cpu-prof') };
}

const fmt = (n: number | undefined, digits = 0) => (n === undefined || !Number.isFinite(n) ? 'n/a' : n.toFixed(digits));

function pct(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

/** Resident memory of a process in MB (Linux /proc), NaN elsewhere. */
export function rssMb(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

type Measured = StreamsResult & { peakRss: number; upstreamCpu: number; gatewayCpu: number };

/** CPU share of one core a process used since `from` (µs of CPU, ms of wall clock). */
const cpuShare = (pid: number | undefined, from: { cpu?: number; at: number }) => {
  const now = pid === undefined ? undefined : cpuMicros(pid);
  return now === undefined || from.cpu === undefined ? NaN : (now - from.cpu) / 1000 / (performance.now() - from.at);
};

/**
 * Runs one batch of streams from a fresh client process; samples the gateway's RSS meanwhile
 * and measures the CPU the upstream and the gateway used (a process near 100% of its core is
 * the bottleneck of the run).
 */
async function measure(job: StreamsJob, upstreamPid?: number, gatewayPid?: number): Promise<Measured> {
  const client = fork(fileURLToPath(new URL('./streams-client.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let peakRss = NaN;
  const sample = setInterval(() => {
    const r = rssMb(gatewayPid);
    if (!(r <= peakRss)) peakRss = r;
  }, 100);
  try {
    let up: { cpu?: number; at: number } = { at: 0 };
    let gw: { cpu?: number; at: number } = { at: 0 };
    const result = await new Promise<StreamsResult>((resolve, reject) => {
      client.on('message', (m: ClientMessage) => {
        if (m.kind === 'error') return reject(new Error(m.error));
        if (m.kind === 'result') return resolve(m.result);
        // Connected and about to send: the measured part starts.
        up = { cpu: upstreamPid === undefined ? undefined : cpuMicros(upstreamPid), at: performance.now() };
        gw = { cpu: gatewayPid === undefined ? undefined : cpuMicros(gatewayPid), at: performance.now() };
      });
      client.once('exit', (code) => reject(new Error(`the client process exited (${code}) without a result`)));
      client.send(job);
    });
    return { ...result, peakRss, upstreamCpu: cpuShare(upstreamPid, up), gatewayCpu: cpuShare(gatewayPid, gw) };
  } finally {
    clearInterval(sample);
    if (client.exitCode === null) client.kill('SIGKILL');
  }
}

interface Row {
  n: number;
  direct: Measured;
  sy: Measured;
  /** The reference hops' runs, by name, for those that started. */
  hops: [string, Measured][];
}

const reasons = (r: StreamsResult) => Object.entries(r.reasons).map(([why, n]) => `${n}× ${why}`).join('; ');
const share = (x: number) => `${fmt(x * 100)}%`.padStart(5);

function line(name: string, n: number, r: Measured, gateway: boolean): string {
  return `${name.padEnd(10)} ${String(n).padStart(5)}  ${fmt(pct(r.worstGaps, 0.5), 1).padStart(7)} ${fmt(pct(r.worstGaps, 0.99), 1).padStart(7)} ${fmt(Math.max(...r.worstGaps), 0).padStart(6)}`
    + `  ${fmt(pct(r.firstBytes, 0.5), 1).padStart(7)} ${fmt(pct(r.firstBytes, 0.99), 1).padStart(7)}  ${String(r.failed).padStart(6)} ${String(r.peakOpen).padStart(5)}`
    + `   ${share(r.clientCpu)}  ${share(r.upstreamCpu)}  ${gateway ? `${share(r.gatewayCpu)}  ${fmt(r.peakRss).padStart(5)} MB` : ''}${r.failed ? `   failures: ${reasons(r)}` : ''}`;
}

async function main(): Promise<number> {
  const o = options(process.argv.slice(2));
  const largest = Math.max(...o.sizes);
  const ideal = (o.chunks - 1) * o.interval;
  console.log(`streams benchmark: ${o.sizes.join(', ')} concurrent streams of ${o.chunks} chunks ${o.interval} ms apart (a stream lasts ${ideal} ms), all on 127.0.0.1${o.redis ? `, Switchyard with REDIS_URL ${benchRedisUrl}` : ''}`);
  const rootKey = generateAccountKey();
  const bundle = await bundleServer();
  const upstream: Child = await startChild('streams upstream', ['--import', 'tsx', fileURLToPath(new URL('./streams-upstream.ts', import.meta.url))],
    { CHUNKS: String(o.chunks), INTERVAL_MS: String(o.interval) }, /listening (http:\/\/127\.0\.0\.1:\d+)/);
  const profile = o.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProf}`] : [];
  const switchyard = await startChild('Switchyard', [...profile, bundle], {
    PORT: '0', HOST: '127.0.0.1', DATABASE_URL: 'memory://', ROOT_KEY: rootKey, LOG_LEVEL: 'warn', NODE_ENV: 'production', ...bundleEnv(),
    UPSTREAM_CONNECTIONS: String(Math.max(256, largest)), ...(o.redis ? sharedStateEnv() : {}),
  }, /Switchyard is listening on (http:\/\/\S+)/);
  const account = await configureSwitchyard(switchyard.url, rootKey, upstream.url);
  const pid = switchyard.proc.pid;
  const nginxBinary = findNginx();
  const references = await Promise.all([
    nginxBinary ? startNginx(nginxBinary, upstream.url, largest).catch((err: Error) => err) : new Error('nginx is not installed'),
    startChild('bare hop', ['--import', 'tsx', fileURLToPath(new URL('./bare-hop.ts', import.meta.url)), upstream.url],
      { NODE_ENV: 'production', ...bundleEnv(), UPSTREAM_CONNECTIONS: String(Math.max(256, largest)) }, /listening (http:\/\/127\.0\.0\.1:\d+)/).catch((err: Error) => err),
  ]);
  const hops = (['nginx', 'bare-hop'] as const).flatMap((name, i) => {
    const child = references[i];
    if (child instanceof Error) {
      console.log(`  ${name} not measured: ${child.message.split('\n')[0]}`);
      return [];
    }
    return [{ name, child }];
  });
  // Idle: started, configured, and left alone long enough for start-up garbage to be collected.
  await new Promise((r) => setTimeout(r, 3000));
  const idleRss = rssMb(pid);
  console.log(`  upstream ${upstream.url}; Switchyard ${switchyard.url} (streams sent with ${account.who}); Switchyard idle RSS ${fmt(idleRss)} MB`);

  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Count slowly.' }], max_tokens: 128, stream: true, stream_options: { include_usage: true } });
  const job = (url: string, headers: Record<string, string>, streams: number): StreamsJob => ({
    url: `${url}/v1/chat/completions`, headers, body, streams, events: o.chunks + 2, deadlineMs: ideal + 60_000,
  });
  const direct = (n: number) => job(upstream.url, { authorization: `Bearer ${UPSTREAM_SECRET}` }, n);
  const through = (n: number) => job(switchyard.url, { authorization: `Bearer ${account.key}` }, n);
  const via = (hop: Child, n: number) => job(hop.url, { authorization: `Bearer ${UPSTREAM_SECRET}` }, n);

  // One stream each first: a target that cannot stream at all is reported as such.
  for (const [name, j] of [['direct', direct(1)], ['switchyard', through(1)]] as const) {
    const r = await measure(j);
    if (r.failed) throw new Error(`a single stream ${name} failed: ${reasons(r)}`);
  }
  // Then a warm-up at the smallest N, not reported: a gateway that has been serving for a
  // while has its code optimized and upstream connections open.
  console.log(`  warm-up: ${Math.min(...o.sizes)} streams each way${hops.length ? ' and through each reference hop' : ''}`);
  await measure(direct(Math.min(...o.sizes)));
  await measure(through(Math.min(...o.sizes)));
  for (const hop of hops) await measure(via(hop.child, Math.min(...o.sizes)));

  const rows: Row[] = [];
  console.log('', `                   worst gap, ms           1st byte, ms               CPU (share of a core)    gateway`);
  console.log(`target         N      p50     p99    max      p50     p99  failed  open   client upstream gateway  RSS peak`);
  for (const n of o.sizes) {
    const d = await measure(direct(n), upstream.proc.pid);
    console.log(line('direct', n, d, false));
    await new Promise((r) => setTimeout(r, 1000));
    const s = await measure(through(n), upstream.proc.pid, pid);
    console.log(line('switchyard', n, s, true));
    const hopRuns: [string, Measured][] = [];
    for (const hop of hops) {
      await new Promise((r) => setTimeout(r, 1000));
      const h = await measure(via(hop.child, n), upstream.proc.pid, hop.child.proc.pid);
      console.log(line(hop.name, n, h, true));
      hopRuns.push([hop.name, h]);
    }
    if (o.verbose) {
      for (const [name, r] of [['direct', d], ['switchyard', s]] as const) {
        const at = [...r.worstAts].sort((a, b) => a - b);
        console.log(`  ${name}: worst gaps ended at p10 ${fmt(pct(at, 0.1))} p50 ${fmt(pct(at, 0.5))} p90 ${fmt(pct(at, 0.9))} ms; 1st byte p10 ${fmt(pct(r.firstBytes, 0.1))} max ${fmt(Math.max(...r.firstBytes))}; wall ${fmt(r.wallMs)} ms`);
      }
    }
    rows.push({ n, direct: d, sy: s, hops: hopRuns });
    await new Promise((r) => setTimeout(r, 1000));
  }
  await new Promise((r) => setTimeout(r, 3000));
  console.log('', `Switchyard RSS: idle ${fmt(idleRss)} MB before the streams, ${fmt(rssMb(pid))} MB 3 s after the last (peak ${fmt(Math.max(...rows.map((r) => r.sy.peakRss)))} MB)`);
  console.log(`(gap: per stream, the longest time between two reads of its answer; ideal ${o.interval} ms. open: most streams between first byte and end at once)`);

  const last = rows.find((r) => r.n === largest)!;
  const p99 = pct(last.sy.worstGaps, 0.99);
  const p99d = pct(last.direct.worstGaps, 0.99);
  for (const [name, h] of last.hops) {
    console.log(`${name} ${largest} (reference hop): failed ${h.failed}, worst gap p99 ${fmt(pct(h.worstGaps, 0.99))}ms vs direct ${fmt(p99d)}ms (ratio ${fmt(pct(h.worstGaps, 0.99) / p99d, 2)})`);
  }
  console.log(`streams ${largest}: failed ${last.sy.failed}, worst gap p99 ${fmt(p99)}ms vs direct ${fmt(p99d)}ms (ratio ${fmt(p99 / p99d, 2)}), rss ${fmt(last.sy.peakRss)} MB`);
  return last.sy.failed === 0 && last.direct.failed === 0 ? 0 : 1;
}

runBenchmark('streams', main, `streams n/a: failed n/a, worst gap p99 n/a vs direct n/a (ratio n/a), rss n/a MB`, () => stopAll().then(deleteBenchKeys));
