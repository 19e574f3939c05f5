import { execFile } from 'node:child_process';
import { createServer, type AddressInfo, type Server } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { needs, probeRequirements, requirementOptions, skippedLine, testRedisUrl, type Probes } from './requirements';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const servers: Server[] = [];
afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

/** A loopback port with a server answering every line with `reply` (or, with `undefined`, a port nothing listens on). */
async function port(reply?: string): Promise<number> {
  const server = createServer((socket) => socket.on('data', () => reply !== undefined && socket.write(reply)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port: p } = server.address() as AddressInfo;
  if (reply === undefined) await new Promise((r) => server.close(r));
  else servers.push(server);
  return p;
}

/** vitest on requirements-fixture/: two tests need Redis at `redisUrl`, one needs nothing. */
async function runFixture(redisUrl: string, ci: boolean): Promise<{ code: number; out: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, TEST_REDIS_URL: redisUrl, NO_COLOR: '1', CI: ci ? 'true' : '' };
  return promisify(execFile)(process.execPath, [path.join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--config', 'server/testing/requirements-fixture/vitest.config.ts'], { cwd: ROOT, env })
    .then((r) => ({ code: 0, out: r.stdout + r.stderr }), (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }));
}

const lastLine = (out: string) => out.trimEnd().split('\n').at(-1);

describe('probing the machine', () => {
  it('finds a Redis that answers, and names one that does not without its password', async () => {
    const answering = await port('-NOAUTH Authentication required.\r\n');
    const closed = await port();
    expect((await probeRequirements(`redis://127.0.0.1:${answering}/0`)).redis).toEqual({ found: `127.0.0.1:${answering}/0` });
    expect((await probeRequirements(`redis://user:s3cret@127.0.0.1:${closed}/2`)).redis).toEqual({ missing: `Redis at 127.0.0.1:${closed}/2 (not reachable)` });
  });

  it('does not take a server that is not Redis for one', async () => {
    const silent = await port('');
    expect((await probeRequirements(`redis://127.0.0.1:${silent}/0`)).redis).toHaveProperty('missing');
  });
});

describe('what a test that needs something gets', () => {
  const probes = {
    redis: { missing: 'Redis at 127.0.0.1:6379/0 (not reachable)' },
    java: { found: 'java' },
  } as Probes;

  it('its own options when the machine has it', () => {
    expect(requirementOptions('java', probes, false, { timeout: 5_000 })).toEqual({ timeout: 5_000 });
    expect(requirementOptions('java', probes, true)).toEqual({});
  });

  it('a skip naming what is missing, outside CI', () => {
    expect(requirementOptions('redis', probes, false, { timeout: 5_000 })).toEqual({ timeout: 5_000, skip: true, meta: { missing: 'Redis at 127.0.0.1:6379/0 (not reachable)' } });
  });

  it('a failure naming what is missing, under CI', () => {
    expect(() => requirementOptions('redis', probes, true)).toThrow(/^Redis at 127\.0\.0\.1:6379\/0 \(not reachable\): with CI=true no test is skipped/);
  });
});

describe('the end-of-run line', () => {
  it('counts the skipped tests by what they needed, most first', () => {
    expect(skippedLine([])).toBeUndefined();
    expect(skippedLine(['Java'])).toBe('skipped: 1 test needs Java — CI (.ci/run) runs them');
    expect(skippedLine(['Java', 'Redis', 'Redis', 'openssl'])).toBe('skipped: 2 tests need Redis, 1 needs Java, 1 needs openssl — CI (.ci/run) runs them');
  });

  it('closes a run that skipped for a Redis away, after vitest\'s summary; with CI=true that run fails instead', async () => {
    const url = `redis://127.0.0.1:${await port()}/0`;
    const skipped = await runFixture(url, false);
    expect(skipped.code, skipped.out).toBe(0);
    expect(skipped.out).toMatch(/Tests {2}1 passed \| 2 skipped \(3\)/);
    expect(lastLine(skipped.out)).toBe(`skipped: 2 tests need Redis at ${url.slice('redis://'.length)} (not reachable) — CI (.ci/run) runs them`);

    const failed = await runFixture(url, true);
    expect(failed.code).toBe(1);
    expect(failed.out).toContain(`Redis at ${url.slice('redis://'.length)} (not reachable): with CI=true no test is skipped`);
    expect(failed.out).not.toContain('skipped: ');
  }, 60_000);

  it('is not printed when the tests had what they needed', needs('redis', { timeout: 60_000 }), async () => {
    const ran = await runFixture(testRedisUrl(), false);
    expect(ran.code, ran.out).toBe(0);
    expect(ran.out).toMatch(/Tests {2}3 passed \(3\)/);
    expect(ran.out).not.toContain('skipped: ');
  });
});
