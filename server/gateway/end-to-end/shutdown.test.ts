import { afterAll, beforeAll, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import OpenAI from 'openai';
import { spawnServer, type RunningServer } from '../../testing/spawn';
import { startMockUpstream, type MockUpstream } from '../../testing/mock-upstream';
import { freshDatabaseUrl } from '../../testing/database';
import { openDatabase } from '../../adapters/storage/database';
import { generateAccountKey } from '../../adapters/security/crypto';
import { drain, hello, secret, sleep } from '../test-fixture';

let mock: MockUpstream;
let server: RunningServer | undefined;
let dataDir: string;
let db: { url: string | undefined; drop: () => Promise<void> };

beforeAll(async () => {
  mock = await startMockUpstream();
  dataDir = mkdtempSync(path.join(tmpdir(), 'switchyard-sigterm-'));
  // PGlite in a data directory by default; a fresh PostgreSQL database when the suite runs on one.
  db = process.env.TEST_DATABASE_URL ? await freshDatabaseUrl() : { url: undefined, drop: async () => {} };
});

afterAll(async () => {
  if (server && server.child.exitCode === null) await server.stop('SIGKILL');
  await mock?.close();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

it('finishes the calls under way and writes all their usage when stopped with SIGTERM', async () => {
  const rootKey = generateAccountKey();
  server = await spawnServer({
    DATA_DIR: dataDir, ROOT_KEY: rootKey, DATABASE_URL: db.url, MASTER_KEY: 'switchyard-sigterm-master-key-0123',
    SHUTDOWN_GRACE_MS: '15000', LOG_LEVEL: 'warn',
  }, 120_000);
  const up = secret('sigterm');
  const created = await fetch(`${server.url}/x-keys`, {
    method: 'POST', headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ Level: 1, Provider: mock.url, SecretKey: up, Status: true }),
  });
  expect(created.status).toBe(201);
  const client = new OpenAI({ apiKey: rootKey, baseURL: `${server.url}/v1`, maxRetries: 0 });

  // Ten quick calls, finished before the signal.
  for (let i = 0; i < 10; i++) await client.chat.completions.create({ model: 'gpt-4o', messages: hello });
  // Ten slow streams (about a second each), under way when the signal arrives.
  mock.behave(up, { chunks: 5, chunkDelayMs: 200 });
  const before = mock.requests.length;
  const streams = Array.from({ length: 10 }, () =>
    client.chat.completions.create({ model: 'gpt-4o', messages: hello, stream: true }).then((s) => drain(s)));
  while (mock.requests.length - before < 10) await sleep(20);
  const exited = server.stop('SIGTERM');

  const results = await Promise.all(streams);
  for (const r of results) {
    expect(r.error).toBeUndefined();
    expect(r.items.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('This is a mock answer from gpt-4o.');
  }
  expect(await exited).toBe(0);

  const database = await openDatabase(db.url, dataDir);
  try {
    const rows = await database.rows<{ status: string; n: number }>(sql`select status, count(*)::int as n from usage_records group by status`);
    expect(rows).toEqual([{ status: 'ok', n: 20 }]);
    const [daily] = await database.rows<{ requests: number }>(sql`select sum(requests)::int as requests from usage_daily`);
    expect(daily.requests).toBe(20);
  } finally {
    await database.close();
  }
}, 180_000);
