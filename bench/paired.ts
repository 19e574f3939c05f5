/**
 * Paired benchmark: this tree's production bundle against another checkout's (an earlier commit),
 * both on one lean upstream at once, measured in short alternating slices so the shared cores'
 * background load falls on both alike. It answers "is the same-format path as fast as before?"
 * more steadily than two separate bench:proxy runs can.
 *
 *   git worktree add /tmp/before <commit> && (cd /tmp/before && npm ci)
 *   npm run bench:paired -- --against /tmp/before            # 8 rounds of 3 s per workload
 *   options: --rounds N, --slice S (seconds per bundle and round), --connections N (default 32),
 *            --mixed (this tree's process first serves translated calls, OpenAI client → Anthropic
 *            key, so its same-format path is measured as a gateway with both kinds of key runs it)
 *
 * The other checkout's bundle is built with its own `npm run build:server`. Ends with one line:
 * `paired vs <commit>: p50 added ms X vs Y (ratio R), CPU µs/req non-streamed A vs B, streamed C vs D`.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { readArgs } from './args';
import { generateAccountKey } from '../server/adapters/security/crypto';
import { bundleEnv, bundleServer } from '../scripts/build/bundle';
import { startChild, stopAll, type Child } from './proxy/children';
import { throughput, timingsAtOne, validate, type Target, type Throughput, type Workload } from './proxy/load';
import { configureSwitchyard, configureTranslated } from './proxy/switchyard';

interface Options {
  against: string;
  /** This tree's process also serves translated calls first, as a gateway with mixed key kinds does. */
  mixed: boolean;
  rounds: number;
  slice: number;
  connections: number;
}

function options(argv: string[]): Options {
  const a = readArgs(argv);
  const against = a.text('--against');
  if (!against) throw new Error('--against <checkout> is required: a worktree of the commit to compare with, after npm ci');
  return { against: path.resolve(against), mixed: a.has('--mixed'), rounds: Math.round(a.num('--rounds', 8)), slice: a.num('--slice', 3), connections: a.num('--connections', 32) };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN;
};

async function startSwitchyard(name: string, bundle: string, rootKey: string): Promise<Child> {
  return startChild(name, [bundle], {
    PORT: '0', HOST: '127.0.0.1', DATABASE_URL: 'memory://', ROOT_KEY: rootKey, LOG_LEVEL: 'warn', NODE_ENV: 'production', ...bundleEnv(),
  }, /Switchyard is listening on (http:\/\/\S+)/);
}

interface Side {
  name: string;
  target: Target;
  p50: number[];
  cpu: Record<Workload, number[]>;
  rps: Record<Workload, number[]>;
}

const cpuPerRequest = (t: Throughput) => (t.cpuUs !== undefined && t.requests > 0 ? t.cpuUs / t.requests : NaN);

async function main(): Promise<void> {
  const o = options(process.argv.slice(2));
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: o.against, encoding: 'utf8' }).trim();
  execFileSync('npm', ['run', '--silent', 'build:server'], { cwd: o.against, stdio: 'inherit' });
  const rootKey = generateAccountKey();
  const upstream = await startChild('bench upstream', ['--import', 'tsx', 'bench/lean-upstream.ts'], {}, /listening (http:\/\/127\.0\.0\.1:\d+)/);
  const [now, before] = await Promise.all([
    startSwitchyard('this tree', await bundleServer(), rootKey),
    startSwitchyard(commit, path.join(o.against, 'dist', 'main.mjs'), rootKey),
  ]);
  const sides: Side[] = [];
  for (const [name, child] of [['this tree', now], [commit, before]] as const) {
    const account = await configureSwitchyard(child.url, rootKey, upstream.url);
    const target: Target = { name, url: `${child.url}/v1/chat/completions`, headers: { authorization: `Bearer ${account.key}` }, pid: child.proc.pid };
    for (const w of ['whole', 'stream'] as Workload[]) {
      const problem = await validate(target, w);
      if (problem) throw new Error(`${name}, ${w}: ${problem}`);
    }
    await throughput(target, 'whole', 3, o.connections);
    if (o.mixed && name === 'this tree') {
      const tr = await configureTranslated(child.url, rootKey, upstream.url);
      const tt: Target = { name: 'translated', url: target.url, headers: { authorization: `Bearer ${tr.key}` }, pid: child.proc.pid };
      await throughput(tt, 'whole', 3, o.connections);
      await throughput(tt, 'stream', 3, o.connections);
    }
    sides.push({ name, target, p50: [], cpu: { whole: [], stream: [] }, rps: { whole: [], stream: [] } });
  }
  console.log(`paired: this tree vs ${commit}, ${o.rounds} rounds of ${o.slice} s per bundle and workload, the order swapped each round`);
  for (let round = 0; round < o.rounds; round++) {
    const order = round % 2 ? [...sides].reverse() : sides;
    for (const s of order) {
      const single = await timingsAtOne(s.target, 'whole', o.slice);
      s.p50.push(median(single.samples));
      for (const w of ['whole', 'stream'] as Workload[]) {
        const t = await throughput(s.target, w, o.slice, o.connections);
        s.cpu[w].push(cpuPerRequest(t));
        s.rps[w].push(t.rps);
      }
    }
    process.stdout.write(`  round ${round + 1}/${o.rounds}: ${sides.map((s) => `${s.name} p50 ${s.p50[round].toFixed(3)} ms`).join(', ')}\n`);
  }
  const direct = await timingsAtOne({ name: 'direct', url: `${upstream.url}/v1/chat/completions`, headers: {} }, 'whole', o.slice);
  const directP50 = median(direct.samples);
  const [a, b] = sides.map((s) => ({
    added: median(s.p50) - directP50,
    cpuWhole: median(s.cpu.whole), cpuStream: median(s.cpu.stream), rpsWhole: median(s.rps.whole), rpsStream: median(s.rps.stream),
  }));
  console.log(`req/s ÷ ${commit} (median of rounds): non-streamed ${(a.rpsWhole / b.rpsWhole).toFixed(2)}, streamed ${(a.rpsStream / b.rpsStream).toFixed(2)}`);
  console.log(`paired vs ${commit}: p50 added ms ${a.added.toFixed(3)} vs ${b.added.toFixed(3)} (ratio ${(a.added / b.added).toFixed(2)}), `
    + `CPU µs/req non-streamed ${a.cpuWhole.toFixed(1)} vs ${b.cpuWhole.toFixed(1)}, streamed ${a.cpuStream.toFixed(1)} vs ${b.cpuStream.toFixed(1)}`);
}

main().then(() => stopAll(), async (err: Error) => {
  console.error(err.message);
  await stopAll();
  process.exitCode = 1;
});
