import { afterAll, beforeAll, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnServer, type RunningServer } from '../../testing/spawn';
import { startBlackHole, startMockUpstream, type BlackHole, type MockUpstream } from '../../testing/mock-upstream';
import { freshDatabaseUrl } from '../../testing/database';
import { until } from '../../testing/until';
import { generateAccountKey } from '../security/crypto';
import { hello, secret } from '../../gateway/test-fixture';
import { MAIL_TIMEOUT_MS } from './mailer';

/**
 * SIGTERM with an alert mail under way to a mail server that accepts the connection and never
 * answers: the real process stops as fast as the same scenario without mail settings, the
 * mail is given up and named in one log line.
 */

let mock: MockUpstream;
let hole: BlackHole;
const running = new Set<RunningServer>();
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  mock = await startMockUpstream();
  hole = await startBlackHole();
});

afterAll(async () => {
  for (const s of running) if (s.child.exitCode === null) await s.stop('SIGKILL');
  for (const c of cleanups) await c();
  await mock?.close();
  await hole?.close();
});

/** Starts a gateway, has a provider key disabled (an alert), then stops it: how long SIGTERM took, and its output. */
async function stopAfterAlert(withMail: boolean): Promise<{ tookMs: number; code: number | null; out: string }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'switchyard-mail-stop-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  // PGlite in a data directory by default; a fresh PostgreSQL database when the suite runs on one.
  const db = process.env.TEST_DATABASE_URL ? await freshDatabaseUrl() : { url: undefined, drop: async () => {} };
  cleanups.push(() => db.drop());
  const rootKey = generateAccountKey();
  const server = await spawnServer({ DATA_DIR: dataDir, ROOT_KEY: rootKey, DATABASE_URL: db.url, MASTER_KEY: 'switchyard-mail-stop-master-key-0123' }, 120_000);
  running.add(server);
  const call = (method: string, route: string, body: unknown) => fetch(`${server.url}${route}`, {
    method, headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  if (withMail) {
    const put = await call('PUT', '/x-config', { EMAIL_SMTP: '127.0.0.1', EMAIL_PORT: new URL(hole.url).port, XAI_MAIL: 'owner@example.test' });
    expect(put.status).toBe(200);
  }
  const s = secret(withMail ? 'stop-mail' : 'stop-nomail');
  expect((await call('POST', '/x-keys', { Level: 1, Provider: mock.url, SecretKey: s, Status: true })).status).toBe(201);
  mock.behave(s, { status: 401 });
  const accepted = hole.accepted;
  expect((await call('POST', '/v1/chat/completions', { model: 'gpt-4o', messages: hello })).status).toBe(502);
  // The alert has reached its mail step: the mail server holds the connection, or there is none to use.
  await until(() => (withMail ? hole.accepted > accepted : server.stdout().includes('"alert_mail_not_configured"')), 30_000);
  const started = performance.now();
  const code = await server.stop('SIGTERM');
  return { tookMs: performance.now() - started, code, out: server.stdout() + server.stderr() };
}

it('SIGTERM with an alert mail stuck on an unanswering mail server takes no longer than without mail', async () => {
  const plain = await stopAfterAlert(false);
  expect(plain.code).toBe(0);
  expect(plain.out).not.toContain('"alert_mail_dropped"');

  const mailed = await stopAfterAlert(true);
  expect(mailed.code).toBe(0);
  // The mail had begun before the signal: waiting on it meant waiting this long for the greeting alone.
  expect(mailed.tookMs).toBeLessThan(MAIL_TIMEOUT_MS);
  // The bound comes from the run without mail, with room for a loaded machine.
  expect(mailed.tookMs).toBeLessThan(Math.max(2 * plain.tookMs, plain.tookMs + 2_000));
  const dropped = mailed.out.split('\n').filter((l) => l.includes('"alert_mail_dropped"'));
  expect(dropped).toHaveLength(1);
  expect(JSON.parse(dropped[0])).toMatchObject({ count: 1, alerts: [{ kind: 'key_disabled', owner: expect.any(Number), key: expect.any(Number) }] });
  expect(mailed.out).not.toContain('"alert_mail_failed"');
  expect(mailed.out).not.toContain('"shutdown_step_failed"');
}, 300_000);
