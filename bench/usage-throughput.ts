/**
 * Record throughput: the proxy under load (autocannon, non-streamed chat completions to the
 * lean upstream) with every answered call recorded as usage, into PostgreSQL (or the embedded
 * database without DATABASE_URL). Counts the usage records written while the load runs
 * (records/s) and, after the last flush, the records written against the responses served
 * (the ratio must be 1.00: every answered call billed once).
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:usage
 *     (a scratch database is created on that server and dropped afterwards)
 *
 * BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 64), BENCH_ACCOUNTS (default 8: the
 * load is spread over that many charged accounts, one autocannon process each, so batches touch
 * several cards and rollups).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { freshDatabaseUrl } from '../server/testing/database';
import { startGateway } from '../server/app/gateway';
import { readSettings } from '../server/core/settings';
import { createLogger } from '../server/core/log';
import { generateAccountKey } from '../server/adapters/security/crypto';
import { startChild, stopAll } from './proxy/children';
import { configureSwitchyard } from './proxy/switchyard';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 8);

/** A database of its own on DATABASE_URL's server (dropped afterwards), else the embedded one (url undefined). */
async function scratchDatabase(): Promise<{ url: string | undefined; drop: () => Promise<void> }> {
  if (!process.env.DATABASE_URL) return { url: undefined, drop: async () => {} };
  return freshDatabaseUrl(process.env.DATABASE_URL, 'sy_bench_usage');
}

/** autocannon with one key per connection group: the load spread over the accounts. */
function load(url: string, keys: string[]): Promise<{ served: number; non2xx: number; rps: number; p99: number }> {
  const bin = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
  const runs = keys.map((key, i, all) => new Promise<{ served: number; non2xx: number; rps: number; p99: number }>((resolve, reject) => {
    const c = Math.max(1, Math.floor(CONNECTIONS / all.length));
    const child = spawn(process.execPath, [bin, '-j', '-c', String(c), '-d', String(SECONDS), '-m', 'POST',
      '-H', `authorization=Bearer ${key}`, '-H', 'content-type=application/json', '-b', body, `${url}/v1/chat/completions`], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.on('close', () => {
      try {
        const r = JSON.parse(out);
        resolve({ served: r['2xx'], non2xx: r.non2xx + r.errors + r.timeouts, rps: r.requests.average, p99: r.latency.p99 });
      } catch {
        reject(new Error(`autocannon ${i} gave no JSON`));
      }
    });
  }));
  return Promise.all(runs).then((all) => ({
    served: all.reduce((s, r) => s + r.served, 0), non2xx: all.reduce((s, r) => s + r.non2xx, 0),
    rps: all.reduce((s, r) => s + r.rps, 0), p99: Math.max(...all.map((r) => r.p99)),
  }));
}

async function main() {
  const scratch = await scratchDatabase();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'sy-bench-usage-'));
  const upstream = await startChild('bench upstream', ['--import', 'tsx', 'bench/lean-upstream.ts'], {}, /listening (http:\/\/127\.0\.0\.1:\d+)/);
  const rootKey = generateAccountKey();
  const gateway = await startGateway({
    ...readSettings({}), port: 0, host: '127.0.0.1', databaseUrl: scratch.url, dataDir, rootKey, masterKey: 'switchyard-bench-master-key-0123456789',
  }, { log: createLogger(() => {}, 'error') });
  try {
    const first = await configureSwitchyard(gateway.url, rootKey, upstream.url);
    const keys = [first.key];
    for (let i = 1; i < ACCOUNTS; i++) {
      const r = await fetch(`${gateway.url}/x-users`, {
        method: 'POST', headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ Name: `benchuser${i}`, Email: `bench${i}@example.com`, CreditGranted: 1000, RPM: 10_000_000, TPM: 1_000_000_000 }),
      });
      if (r.status !== 201) throw new Error(`POST /x-users answered ${r.status}`);
      keys.push((await r.json()).User.SecretKey);
    }
    const count = async () => (await gateway.database.rows<{ n: number }>(sql`select count(*)::int as n from usage_records`))[0].n;
    const before = await count();
    // The count sampled while the load runs: the rate is taken from the first write to the last sample under load.
    const samples: [number, number][] = [];
    let loading = true;
    const sampling = (async () => {
      while (loading) {
        samples.push([performance.now(), await count()]);
        await new Promise((res) => setTimeout(res, 250));
      }
    })();
    const r = await load(gateway.url, keys);
    loading = false;
    await sampling;
    const moving = samples.filter(([, n]) => n > before);
    const rate = moving.length > 1 ? (moving[moving.length - 1][1] - moving[0][1]) / ((moving[moving.length - 1][0] - moving[0][0]) / 1000) : 0;
    await gateway.usage.flush();
    const written = (await count()) - before;

    // The recorder alone, without the proxy: its ceiling on this machine.
    const burst = 200_000;
    const event = { accountId: 2, ownerId: 1, dna: '.1.2.', model: 'gpt-4o-mini', level: 1, keyId: null, endpoint: '/v1/chat/completions', prompt: 12, completion: 6, reasoning: 0, cached: 0, creditUsed: 0.000005, status: 'ok' as const };
    const t1 = performance.now();
    for (let i = 0; i < burst; i++) gateway.usage.record({ ...event, at: new Date(), requestId: `burst-${i}` });
    await gateway.usage.flush();
    const alone = burst / ((performance.now() - t1) / 1000);

    console.log(`database: ${gateway.database.kind}; ${CONNECTIONS} connections over ${keys.length} accounts, ${SECONDS} s`);
    console.log('served req/s   p99 ms   non-2xx   records/s (written under load)   written / served   records/s (recorder alone)');
    console.log(`${r.rps.toFixed(0).padStart(12)}   ${String(r.p99).padStart(6)}   ${String(r.non2xx).padStart(7)}   ${rate.toFixed(0).padStart(30)}   ${(written / r.served).toFixed(2).padStart(16)}   ${alone.toFixed(0).padStart(26)}`);
    // Calls under way when autocannon stopped were answered to a client that had gone: billed, not counted as served.
    console.log(`(${r.served} responses served, ${written} records written; at most ${CONNECTIONS} more records than responses are calls in flight at the end)`);
    if (written < r.served || written - r.served > CONNECTIONS) process.exitCode = 1;
  } finally {
    await gateway.close();
    await stopAll();
    await scratch.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
