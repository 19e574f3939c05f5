/**
 * Dashboard and billing reads against a loaded database: 1,000 accounts and 10,000,000 usage
 * records (with their daily, subtree and latency rollups, in day partitions), measured with autocannon
 * against GET /healthz in the same run, so the figures read as ratios on whatever machine runs them.
 *
 *   npm run bench:dashboard                    # in-memory PGlite
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:dashboard
 *     (a scratch database is created on that server and dropped afterwards)
 *   BENCH_RECORDS=1000000 npm run bench:dashboard   # the 1,000,000-record option
 *
 * BENCH_SECONDS (default 5) per target, BENCH_CONNECTIONS (default 10). The last two targets
 * are read by 999 accounts at once, each request with the next account's own key
 * (bench/many-keys-client.ts): their live usage and their request log, as when thousands of
 * subaccounts open their console.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { sql } from 'drizzle-orm';
import { freshDatabaseUrl } from '../server/testing/database';
import { startGateway } from '../server/app/gateway';
import { readSettings } from '../server/core/settings';
import { createLogger } from '../server/core/log';
import { generateAccountKey, hashKey, hint } from '../server/adapters/security/crypto';
import type { Database } from '../server/adapters/storage/database';
import { maintainPartitions } from '../server/state/usage/partitions';

const ACCOUNTS = 1000;
const RECORDS = Number(process.env.BENCH_RECORDS ?? 10_000_000);
/** Records are inserted this many at a time, so 10,000,000 never sit in one statement's memory. */
const SEED_CHUNK = 1_000_000;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const MODELS = ['gpt-4o', 'gpt-4o-mini', 'claude-sonnet-4-5', 'gemini-2.5-flash'];
const DAYS = 30;
const TEAMS = 9;

/** A database of its own on DATABASE_URL's server (dropped afterwards), else in-memory PGlite. */
const scratchDatabase = () => freshDatabaseUrl(process.env.DATABASE_URL, 'sy_bench');

/**
 * Root (1) → 9 team accounts (2-10) → 990 accounts (11-1000). Records spread evenly over the
 * accounts, the last 30 UTC days and four models; usage_daily is then built from them exactly
 * as the recorder would have, in one statement.
 */
async function seed(database: Database): Promise<{ userKey: string; userId: number; accountKeys: string[] }> {
  const run = (q: ReturnType<typeof sql>) => database.rows(q);
  await run(sql`
    insert into accounts (id, parent_id, owner_id, dna, depth, name, email, role, level)
    select g,
      case when g <= ${TEAMS + 1} then 1 else 2 + g % ${TEAMS} end, 1,
      case when g <= ${TEAMS + 1} then '.1.' || g || '.' else '.1.' || (2 + g % ${TEAMS}) || '.' || g || '.' end,
      case when g <= ${TEAMS + 1} then 1 else 2 end,
      'bench-' || g, 'bench-' || g || '@example.test', 'user', 1 + g % 3
    from generate_series(2, ${ACCOUNTS}) g`);
  await run(sql`select setval(pg_get_serial_sequence('accounts', 'id'), ${ACCOUNTS})`);
  await run(sql`
    insert into credit_grants (account_id, amount, balance, reference, expires_at)
    select g, 1000, 1000, 'bench', now() + interval '180 days' from generate_series(2, ${ACCOUNTS}) g`);
  const userId = 500;
  const userKey = generateAccountKey();
  await run(sql`insert into account_keys (account_id, key_hash, hint) values (${userId}, ${hashKey(userKey)}, ${hint(userKey)})`);
  // A key of its own for every other account, for the many-accounts targets.
  const accountKeys = Array.from({ length: ACCOUNTS - 1 }, () => generateAccountKey());
  await run(sql`insert into account_keys (account_id, key_hash, hint)
    select 2 + i - 1, h, k from unnest(${sql.raw(`array[${accountKeys.map((k) => `'${hashKey(k)}'`).join(',')}]`)}::text[], ${sql.raw(`array[${accountKeys.map((k) => `'${hint(k)}'`).join(',')}]`)}::text[]) with ordinality as t(h, k, i)`);
  const others = ACCOUNTS - 1;
  // Day partitions for the whole period first (each maintenance run covers 9 days around its "now").
  for (let back = DAYS + 1; back > -8; back -= 8) await maintainPartitions(database.db, 0, new Date(Date.now() - back * 86_400_000));
  for (let from = 0; from < RECORDS; from += SEED_CHUNK) {
    await run(sql`
      insert into usage_records (account_id, owner_id, model, level, endpoint, prompt, completion, reasoning, cached, credit_used, status, created_at, request_id)
      select 2 + g % ${others}, 1,
        (${sql.raw(`array[${MODELS.map((m) => `'${m}'`).join(',')}]`)})[1 + (g / ${others * DAYS}) % ${MODELS.length}],
        1, '/v1/chat/completions', 100 + g % 900, 20 + g % 300, (g % 7) * 10, (g % 5) * 20,
        ((100 + g % 900) * 2.5 + (20 + g % 300) * 10) / 1000000.0, 'ok',
        (date_trunc('day', now() at time zone 'utc') - make_interval(days => (g / ${others}) % ${DAYS}) + make_interval(secs => g % 86400)) at time zone 'utc',
        'bench-' || g
      from generate_series(${from}::int, ${Math.min(from + SEED_CHUNK, RECORDS) - 1}::int) g`);
  }
  await run(sql`
    insert into usage_daily (account_id, day, model, owner_id, dna, requests, prompt, completion, reasoning, cached, credit_used)
    select r.account_id, (r.created_at at time zone 'utc')::date, r.model, r.owner_id, a.dna,
      count(*), sum(r.prompt), sum(r.completion), sum(r.reasoning), sum(r.cached), sum(r.credit_used)
    from usage_records r join accounts a on a.id = r.account_id
    group by 1, 2, 3, 4, 5`);
  // Each account's usage added to every ancestor's, as the recorder does with every batch.
  await run(sql`
    insert into usage_subtree_daily (ancestor_id, day, model, requests, prompt, completion, reasoning, cached, credit_used)
    select x.a::int, d.day, d.model, sum(d.requests), sum(d.prompt), sum(d.completion), sum(d.reasoning), sum(d.cached), sum(d.credit_used)
    from usage_daily d, unnest(string_to_array(trim(both '.' from d.dna), '.')) as x(a)
    where x.a <> '' and x.a::int <> d.account_id
    group by 1, 2, 3`);
  // The latency rollup as the recorder keeps it: each usage_daily row's calls in one duration and
  // one first-byte bucket of their account's (the key kind by model), then summed bucket by bucket
  // into every ancestor's `below` rows.
  await run(sql`
    insert into usage_latency_daily (account_id, whose, day, model, key_kind, requests, duration_buckets, first_byte_buckets)
    select d.account_id, 'own', d.day, d.model,
      case when d.model like 'claude%' then 'anthropic' when d.model like 'gemini%' then 'gemini' else 'standard' end, d.requests,
      array(select case when i = 14 + d.account_id % 16 then d.requests else 0 end from generate_series(0, 39) i),
      array(select case when i = 8 + d.account_id % 12 then d.requests else 0 end from generate_series(0, 39) i)
    from usage_daily d`);
  await run(sql`
    insert into usage_latency_daily (account_id, whose, day, model, key_kind, requests, duration_buckets, first_byte_buckets)
    select ancestor, 'below', day, model, key_kind, sum(d), array_agg(d order by i), array_agg(f order by i)
    from (
      select x.a::int as ancestor, l.day, l.model, l.key_kind, b.i, sum(b.d) as d, sum(b.f) as f
      from usage_latency_daily l join accounts a on a.id = l.account_id,
        unnest(string_to_array(trim(both '.' from a.dna), '.')) as x(a),
        unnest(l.duration_buckets, l.first_byte_buckets) with ordinality as b(d, f, i)
      where l.whose = 'own' and x.a <> '' and x.a::int <> l.account_id
      group by 1, 2, 3, 4, 5
    ) per_bucket
    group by ancestor, day, model, key_kind`);
  await run(sql`analyze`);
  return { userKey, userId, accountKeys };
}

interface Measure { path: string; rps: number; non2xx: number; errors: number; p99: number }

/** One key on every request (autocannon's CLI), or with `keysFile` each request the next key of it (many-keys-client.ts). */
function autocannon(url: string, key: string | null, keysFile?: string): Promise<Measure> {
  const bin = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
  const args = keysFile
    ? ['--import', 'tsx', path.join(import.meta.dirname, 'many-keys-client.ts'), url, keysFile, String(SECONDS), String(CONNECTIONS)]
    : [bin, '-j', '-c', String(CONNECTIONS), '-d', String(SECONDS), ...(key ? ['-H', `authorization=Bearer ${key}`] : []), url];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (c) => { out += c; });
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        const r = JSON.parse(out);
        resolve({ path: new URL(url).pathname + new URL(url).search, rps: r.requests.average, non2xx: r.non2xx, errors: r.errors + r.timeouts, p99: r.latency.p99 });
      } catch {
        reject(new Error(`autocannon exited with ${code} and no JSON result`));
      }
    });
  });
}

async function main() {
  const scratch = await scratchDatabase();
  const rootKey = generateAccountKey();
  const gateway = await startGateway({
    ...readSettings({}), port: 0, databaseUrl: scratch.url, rootKey, masterKey: 'switchyard-bench-master-key-0123456789',
  }, { log: createLogger(() => {}, 'error') });
  try {
    const t0 = performance.now();
    const { userKey, userId, accountKeys } = await seed(gateway.database);
    const keysDir = mkdtempSync(path.join(tmpdir(), 'sy-bench-keys-'));
    const keysFile = path.join(keysDir, 'keys.json');
    writeFileSync(keysFile, JSON.stringify(accountKeys));
    const [{ records, daily }] = await gateway.database.rows<{ records: number; daily: number }>(
      sql`select (select count(*) from usage_records)::int as records, (select count(*) from usage_daily)::int as daily`);
    console.log(`database: ${gateway.database.kind}; ${ACCOUNTS} accounts, ${records} usage records, ${daily} usage_daily rows; built in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    console.log(`autocannon: ${CONNECTIONS} connections, ${SECONDS} s per target\n`);

    // A mid-tree account (a team, with its 110 accounts below it) named by its DNA path.
    const targets: [string, string | null][] = [
      ['/healthz', null],
      ['/dashboard/live', userKey],
      ['/x-bill?days=30', rootKey],
      ['/x-bill?days=30&user=.1.2.', rootKey],
      ['/dashboard/bill?days=30', userKey],
      [`/x-info?user=${userId}`, rootKey],
      // Latency reads its rollup as bills read theirs: Root's whole tree, and one account's own.
      ['/dashboard/latency?days=30&scope=subtree', rootKey],
      ['/dashboard/latency?days=30', userKey],
    ];
    for (const [path, key] of targets.slice(1)) {
      const r = await fetch(gateway.url + path, { headers: { authorization: `Bearer ${key}` } });
      if (r.status !== 200) throw new Error(`${path} answered ${r.status}: ${await r.text()}`);
    }
    const results: Measure[] = [];
    for (const [path, key] of targets) results.push(await autocannon(gateway.url + path, key));
    for (const path of ['/dashboard/live', '/dashboard/requests?limit=20']) {
      for (const key of accountKeys.slice(0, 3)) {
        const r = await fetch(gateway.url + path, { headers: { authorization: `Bearer ${key}` } });
        if (r.status !== 200) throw new Error(`${path} answered ${r.status}: ${await r.text()}`);
      }
      const m = await autocannon(gateway.url + path, null, keysFile);
      results.push({ ...m, path: `${m.path} (${accountKeys.length} accounts)` });
    }
    rmSync(keysDir, { recursive: true, force: true });
    const base = results[0].rps;
    console.log('target                                                  req/s   vs /healthz   p99 ms   non-2xx');
    for (const r of results) {
      console.log(`GET ${r.path.padEnd(50)} ${r.rps.toFixed(0).padStart(8)}   ${(r.rps / base).toFixed(4).padStart(10)}   ${String(r.p99).padStart(6)}   ${r.non2xx + r.errors}`);
    }
    if (results.some((r) => r.non2xx + r.errors > 0)) process.exitCode = 1;
  } finally {
    await gateway.close();
    await scratch.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
