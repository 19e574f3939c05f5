import { describe, expect, it } from 'vitest';
import { spawnServer, type RunningServer } from '../testing/spawn';
import { freshDatabaseUrl } from '../testing/database';
import { startMockUpstream } from '../testing/mock-upstream';
import { generateAccountKey } from '../adapters/security/crypto';
import { rotateConfirmation } from '../admin/accounts/self';

/** A change counts as propagated when a check started within this long after the admin call answered. */
const DEADLINE_MS = 1000;

type Answer = { status: number; body: any };

async function send(url: string, key: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const r = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  let parsed: unknown = text;
  try { parsed = JSON.parse(text); } catch { /* the raw text is the answer */ }
  return { status: r.status, body: parsed };
}

const chat = (url: string, key: string, model = 'gpt-4o-mini') =>
  send(url, key, 'POST', '/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hello' }] });

/**
 * Polls `check` on each server until it holds; fails unless it held on every one in a check
 * started within DEADLINE_MS of `since`. Returns how long each took.
 */
async function everywhereWithin(servers: RunningServer[], since: number, what: string, check: (s: RunningServer) => Promise<boolean>): Promise<number[]> {
  return Promise.all(servers.map(async (s) => {
    for (;;) {
      const started = Date.now();
      if (await check(s)) return started - since;
      if (started - since > DEADLINE_MS) throw new Error(`${what}: not seen on ${s.url} within ${DEADLINE_MS} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }));
}

describe.runIf(process.env.TEST_DATABASE_URL)('three instances on one PostgreSQL database', () => {
  it('hear every admin change made through one of them within a second', async () => {
    const { url, drop } = await freshDatabaseUrl();
    const mock = await startMockUpstream();
    const rootKey = generateAccountKey();
    const env = { DATABASE_URL: url, ROOT_KEY: rootKey, MASTER_KEY: 'switchyard-shared-master-key-0123', USER_MIN_BALANCE: '2', REDIS_URL: '' };
    const started = await Promise.allSettled([spawnServer(env, 90_000), spawnServer(env, 90_000), spawnServer(env, 90_000)]);
    const servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    try {
      expect(started.map((s) => (s.status === 'rejected' ? String(s.reason) : 'started'))).toEqual(['started', 'started', 'started']);
      const [first, ...others] = servers;
      const admin = (method: string, path: string, body?: unknown) => send(first.url, rootKey, method, path, body);
      const timings: Record<string, number[]> = {};

      // An account, known to the others (cached) while there is no provider key yet.
      const created = await admin('POST', '/x-users', { Name: 'roamer', Email: 'roamer@example.test', CreditGranted: 50 });
      expect(created.status).toBe(201);
      const user = created.body.User as { ID: number; SecretKey: string };
      for (const s of others) expect((await chat(s.url, user.SecretKey)).body.error.code).toBe('no_provider_key');

      // A provider key added through the first instance: the others serve with it.
      const key = await admin('POST', '/x-keys', { Level: 1, Provider: mock.url, SecretKey: 'sk-roaming-0123456789abcdef', Status: true });
      expect(key.status).toBe(201);
      timings.providerKey = await everywhereWithin(others, Date.now(), 'provider key', async (s) => (await chat(s.url, user.SecretKey)).status === 200);
      expect(mock.requests.every((r) => r.credential === 'sk-roaming-0123456789abcdef')).toBe(true);

      // Owner configuration: a MODEL_MAPPER set through the first instance maps on the others.
      const upstreamModel = async (s: RunningServer) => {
        const before = mock.requests.length;
        const r = await chat(s.url, user.SecretKey);
        expect(r.status).toBe(200);
        return (mock.requests.slice(before).find((q) => q.credential === 'sk-roaming-0123456789abcdef')?.body as { model?: string })?.model;
      };
      for (const s of others) expect(await upstreamModel(s)).toBe('gpt-4o-mini');
      expect((await admin('PUT', '/x-config', { MODEL_MAPPER: 'gpt-4o-mini=gpt-4o' })).status).toBe(200);
      timings.modelMapper = await everywhereWithin(others, Date.now(), 'MODEL_MAPPER', async (s) => (await upstreamModel(s)) === 'gpt-4o');

      // Suspension and disabling, and lifting them.
      const patchUser = async (patch: Record<string, unknown>) => expect((await admin('PUT', `/x-users/${user.ID}`, patch)).status).toBe(200);
      const statusOf = async (s: RunningServer, k = user.SecretKey) => (await chat(s.url, k)).status;
      await patchUser({ Suspended: true });
      timings.suspended = await everywhereWithin(others, Date.now(), 'suspension', async (s) => (await statusOf(s)) === 403);
      await patchUser({ Suspended: false });
      timings.unsuspended = await everywhereWithin(others, Date.now(), 'suspension lifted', async (s) => (await statusOf(s)) === 200);
      await patchUser({ Status: false });
      timings.disabled = await everywhereWithin(others, Date.now(), 'disabled', async (s) => (await statusOf(s)) === 401);
      await patchUser({ Status: true });
      timings.enabled = await everywhereWithin(others, Date.now(), 'enabled', async (s) => (await statusOf(s)) === 200);

      // A rotated account key: the old one is refused everywhere, the new one works everywhere.
      const rotated = await send(first.url, user.SecretKey, 'POST', '/x-self', { confirm: rotateConfirmation() });
      expect(rotated.status).toBe(200);
      const since = Date.now();
      const newKey = rotated.body.rotate.key as string;
      timings.rotatedOld = await everywhereWithin(others, since, 'old key refused', async (s) => (await statusOf(s)) === 401);
      for (const s of others) expect(await statusOf(s, newKey)).toBe(200);

      // Credit: an account with just enough is served; credit taken back through the first
      // instance makes the others refuse with 402; a top-up makes them serve again.
      const lean = await admin('POST', '/x-users', { Name: 'lean', Email: 'lean@example.test', CreditGranted: 3 });
      expect(lean.status).toBe(201);
      const leanUser = lean.body.User as { ID: number; SecretKey: string };
      for (const s of others) expect(await statusOf(s, leanUser.SecretKey)).toBe(200);
      expect((await admin('PUT', `/x-users/${leanUser.ID}`, { CreditGranted: -2.5 })).status).toBe(200);
      timings.takenBack = await everywhereWithin(others, Date.now(), 'credit taken back', async (s) => (await statusOf(s, leanUser.SecretKey)) === 402);
      expect((await admin('PUT', `/x-users/${leanUser.ID}`, { CreditGranted: 5 })).status).toBe(200);
      timings.toppedUp = await everywhereWithin(others, Date.now(), 'top-up', async (s) => (await statusOf(s, leanUser.SecretKey)) === 200);

      // A deleted account is refused everywhere.
      expect((await admin('DELETE', `/x-users/${user.ID}`)).status).toBe(200);
      timings.deleted = await everywhereWithin(others, Date.now(), 'deletion', async (s) => (await statusOf(s, newKey)) === 401);

      for (const [what, ms] of Object.entries(timings)) for (const t of ms) expect(t, what).toBeLessThanOrEqual(DEADLINE_MS);

      // Without REDIS_URL, every instance said once which limits it keeps to itself.
      for (const s of servers) {
        await expect.poll(() => s.stdout().split('\n').filter((l) => l.includes('"limits_per_instance"')).length, { timeout: 2000 }).toBe(1);
      }
    } finally {
      for (const s of servers) expect(await s.stop()).toBe(0);
      await mock.close();
      await drop();
    }
  }, 180_000);
});
