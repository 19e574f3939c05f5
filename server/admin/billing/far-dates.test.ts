import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type RunningServer } from '../../testing/spawn';
import { generateAccountKey } from '../../adapters/security/crypto';

/**
 * Bill periods at the edges of the calendar the API accepts. The gateway runs as a child
 * process so that a request that never ends (a day loop that never terminates blocks the event
 * loop) fails this test by its fetch timeout instead of freezing the test runner; its heap is
 * kept small so such a loop dies fast instead of eating the machine's memory.
 */
let server: RunningServer;
const rootKey = generateAccountKey();

beforeAll(async () => {
  server = await spawnServer({ DATABASE_URL: 'memory://', ROOT_KEY: rootKey, TENANCY: 'multi', LOG_LEVEL: 'warn', NODE_OPTIONS: '--max-old-space-size=256' });
}, 60_000);
afterAll(async () => {
  if (server && server.child.exitCode === null) await server.stop('SIGKILL');
});

async function get(path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(server.url + path, { headers: { authorization: `Bearer ${rootKey}` }, signal: AbortSignal.timeout(5_000) });
  return { status: res.status, body: await res.json() };
}

/** The gateway still answers at once: nothing is left spinning. */
async function stillAlive() {
  const res = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(2_000) });
  expect(res.status).toBe(200);
}

const days = (b: any): string[] => b.daily_costs.map((d: any) => d.date);

// fixed-date: the calendar's last day, which no clock reaches.
describe('bill periods at the end of the calendar (9999-12-31)', () => {
  it('answers the last day alone, on both bill routes', async () => {
    for (const path of ['/dashboard/bill?date=9999-12-31', '/dashboard/bill?d=9999-12-31', '/x-bill?start=9999-12-31&end=9999-12-31', '/x-bill?date=9999-12-31']) {
      const r = await get(path);
      expect(r.status, path).toBe(200);
      expect(r.body, path).toMatchObject({ start_date: '9999-12-31', end_date: '9999-12-31', total_requests: 0 });
      expect(days(r.body), path).toEqual(['9999-12-31']);
      expect(r.body.daily_costs[0].timestamp).toBe(Date.parse('9999-12-31T00:00:00Z') / 1000);
      await stillAlive();
    }
  }, 30_000);

  it('answers a range ending there, up to 366 days, and refuses 367', async () => {
    const year = await get('/dashboard/bill?start=9999-01-01&end=9999-12-31');
    expect(year.status).toBe(200);
    expect(days(year.body)).toHaveLength(365);
    expect(days(year.body).at(-1)).toBe('9999-12-31');
    const most = await get('/x-bill?start=9998-12-31&end=9999-12-31');
    expect(most.status).toBe(200);
    expect(days(most.body)).toHaveLength(366);
    expect(days(most.body)[0]).toBe('9998-12-31');
    expect(days(most.body).at(-1)).toBe('9999-12-31');
    const over = await get('/dashboard/bill?start=9998-12-30&end=9999-12-31');
    expect(over.status).toBe(400);
    expect(over.body.error.message).toMatch(/367 days/);
    await stillAlive();
  }, 30_000);

  it('refuses a start after today when the range has no end', async () => {
    const r = await get('/dashboard/bill?start=9999-12-31');
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/^start:/);
    await stillAlive();
  }, 30_000);
});

// fixed-date: the calendar's first day and the days before it, which no clock goes back to.
describe('bill periods before the first day the API accepts (1970-01-01)', () => {
  it('answers 400 naming the parameter', async () => {
    for (const [query, name] of [['date=1969-12-31', 'date'], ['d=0000-01-01', 'd'], ['start=1969-12-31&end=1970-01-05', 'start'], ['s=0001-01-01&e=0001-01-02', 's'], ['start=1970-01-01&end_date=1969-12-31', 'end_date']] as const) {
      for (const route of ['/dashboard/bill', '/x-bill']) {
        const r = await get(`${route}?${query}`);
        expect(r.status, `${route}?${query}`).toBe(400);
        expect(r.body.error, `${route}?${query}`).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request' });
        expect(r.body.error.message, `${route}?${query}`).toMatch(new RegExp(`^${name}: .*1970-01-01`));
      }
    }
    const first = await get('/dashboard/bill?start=1970-01-01&end=1970-01-03');
    expect(first.status).toBe(200);
    expect(days(first.body)).toEqual(['1970-01-01', '1970-01-02', '1970-01-03']);
    expect(first.body.daily_costs[0].timestamp).toBe(0);
    await stillAlive();
  }, 30_000);
});

describe('days', () => {
  it('takes 1 to 366 and answers 400 beyond, however large', async () => {
    expect(days((await get('/dashboard/bill?days=366')).body)).toHaveLength(366);
    expect(days((await get('/x-bill?days=1')).body)).toHaveLength(1);
    for (const q of ['days=367', 'days=1e9', 'days=9007199254740993', 'days=1e400', 'days=Infinity', 'days=-1', 'days=-1e9', 'days=0', 'days=']) {
      for (const route of ['/dashboard/bill', '/x-bill']) {
        const r = await get(`${route}?${q}`);
        expect(r.status, `${route}?${q}`).toBe(400);
        expect(r.body.error.message, `${route}?${q}`).toMatch(/^days: /);
      }
    }
    await stillAlive();
  }, 30_000);
});
