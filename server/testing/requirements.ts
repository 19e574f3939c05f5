/**
 * What a test needs from the machine beyond Node and the npm packages: a Redis to talk to, a
 * program npm cannot bring (Java for openapi-generator, python3 with the generated client's
 * libraries, redis-server, openssl), the system libraries the npm Chromium loads (the console's
 * browser tests, console/test-support.ts). `npm ci && npm test` must pass on a machine with Node
 * alone, so a test that needs one of these is skipped there, counted, and named in one line at
 * the end of the run (requirements-reporter.ts); with CI=true nothing is skipped: the file fails,
 * saying what is missing, since CI (.ci/run) brings everything.
 *
 * The machine is probed once per run, in vitest's global setup, and the answers reach the test
 * files through vitest's provide/inject, so a test file decides at collection time, synchronously.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import { inject, type TestOptions } from 'vitest';
import { describeRedisUrl } from '../adapters/redis/link';

export type Requirement = 'redis' | 'redis-server' | 'java' | 'python-client' | 'openssl' | 'chromium';

/** `found`: where (the Python interpreter, the Chromium to launch: foundAt); `missing`: what is missing and why, as the end-of-run line says it. */
export type Probe = { found: string } | { missing: string };
export type Probes = Record<Requirement, Probe>;

declare module 'vitest' {
  interface ProvidedContext {
    requirements: Probes;
  }
  interface TaskMeta {
    /** Set on a test skipped because the machine lacks what it needs. */
    missing?: string;
  }
}

export const testRedisUrl = (): string => process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';

/** The generated Python client's imports; clients/python-client.test.ts runs the interpreter that has them. */
const PYTHON_NEEDS = 'import urllib3, six, dateutil, certifi';

const run = promisify(execFile);
const runs = (cmd: string, args: string[]): Promise<boolean> =>
  run(cmd, args, { timeout: 20_000 }).then(() => true, () => false);

/** A Redis answers PING (an error reply such as NOAUTH still proves one is there). */
function redisAnswers(url: string): Promise<boolean> {
  let target: URL;
  try { target = new URL(url); } catch { return Promise.resolve(false); }
  return new Promise((resolve) => {
    const socket = connect({ host: target.hostname, port: Number(target.port || 6379) });
    const done = (ok: boolean) => { socket.destroy(); resolve(ok); };
    socket.setTimeout(2_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => done(/^[+-]/.test(d.toString())));
  });
}

/**
 * A pyenv shim may come first on PATH without the client's libraries, so the first interpreter
 * that has them wins (Debian's, once `apt-get install python3-urllib3 python3-six
 * python3-dateutil python3-certifi` ran).
 */
async function pythonWithClientLibs(): Promise<string | undefined> {
  const candidates = [process.env.PYTHON, '/usr/bin/python3', 'python3'].filter((c): c is string => Boolean(c));
  for (const c of candidates) if (await runs(c, ['-c', PYTHON_NEEDS])) return c;
  return undefined;
}

const found = (where: string): Probe => ({ found: where });
const missing = (what: string): Probe => ({ missing: what });

/** foundAt('chromium') when the console's browser tests launch the Chromium of the npm package. */
export const NPM_CHROMIUM = '@sparticuz/chromium';
/** The shared libraries of the npm package's Chromium that a system may lack (it brings the rest). */
const NPM_CHROMIUM_LIBS = ['libnss3.so', 'libnssutil3.so', 'libnspr4.so', 'libexpat.so.1'];

/** Which Chromium the console's browser tests launch (console/test-support.ts), or what keeps the npm one from starting. */
async function chromiumProbe(): Promise<Probe> {
  const system = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (existsSync(system)) return found(system);
  if (process.env.CHROMIUM_PATH) return missing(`Chromium at ${system} (CHROMIUM_PATH names no file)`);
  let known = '';
  for (const ldconfig of ['ldconfig', '/sbin/ldconfig', '/usr/sbin/ldconfig']) {
    known = await run(ldconfig, ['-p']).then((r) => r.stdout, () => '');
    if (known) break;
  }
  const lacking = NPM_CHROMIUM_LIBS.filter((lib) => !known.includes(`${lib} `));
  return lacking.length ? missing(`${lacking.join(', ')} for the npm Chromium (not installed)`) : found(NPM_CHROMIUM);
}

export async function probeRequirements(redisUrl = testRedisUrl()): Promise<Probes> {
  const [redis, redisServer, java, python, openssl, chromium] = await Promise.all([
    redisAnswers(redisUrl),
    runs('redis-server', ['--version']),
    runs('java', ['-version']),
    pythonWithClientLibs(),
    runs('openssl', ['version']),
    chromiumProbe(),
  ]);
  const where = describeRedisUrl(redisUrl);
  return {
    redis: redis ? found(where) : missing(`Redis at ${where} (not reachable)`),
    'redis-server': redisServer ? found('redis-server') : missing('redis-server (not installed)'),
    java: java ? found('java') : missing('Java for openapi-generator (not installed)'),
    'python-client': python ? found(python) : missing('python3 with urllib3, six, dateutil and certifi (not found)'),
    openssl: openssl ? found('openssl') : missing('the openssl command (not installed)'),
    chromium,
  };
}

/** CI=true as .ci/run sets it (and CI=1 as other CI systems do). */
const onCi = (): boolean => Boolean(process.env.CI) && process.env.CI !== 'false' && process.env.CI !== '0';

/** The options of a describe or test that needs `what` (`options` as they were when the machine has it). */
export function requirementOptions(what: Requirement, probes: Probes, ci: boolean, options: TestOptions = {}): TestOptions {
  const probe = probes[what];
  if ('found' in probe) return options;
  if (ci) {
    throw new Error(`${probe.missing}: with CI=true no test is skipped, and this file's tests need it. .ci/run installs and starts what the tests need; run the tests without CI=true to skip them instead.`);
  }
  return { ...options, skip: true, meta: { ...options.meta, missing: probe.missing } };
}

/**
 * `describe('…', needs('redis'), () => …)`: skipped (and named at the end of the run) on a
 * machine without it; a failed file under CI=true.
 */
export function needs(what: Requirement, options?: TestOptions): TestOptions {
  const probes = inject('requirements');
  if (!probes) throw new Error('requirements were not probed: run the tests through vitest.config.ts (its globalSetup probes them)');
  return requirementOptions(what, probes, onCi(), options);
}

/** Where the machine has `what` (the Python interpreter, the Chromium to launch); for a test guarded by needs(what). */
export function foundAt(what: Requirement): string {
  const probe = inject('requirements')[what];
  if (!('found' in probe)) throw new Error(probe.missing);
  return probe.found;
}

/**
 * The end-of-run line: `skipped: 14 tests need Redis at 127.0.0.1:6379 (not reachable), 3 need
 * Java … — CI (.ci/run) runs them`, or nothing when no test was skipped for a missing requirement.
 */
export function skippedLine(skipped: Iterable<string>): string | undefined {
  const counts = new Map<string, number>();
  for (const what of skipped) counts.set(what, (counts.get(what) ?? 0) + 1);
  if (counts.size === 0) return undefined;
  const parts = [...counts].sort((a, b) => b[1] - a[1]).map(([what, n], i) => {
    const noun = i === 0 ? (n === 1 ? 'test ' : 'tests ') : '';
    return `${n} ${noun}${n === 1 ? 'needs' : 'need'} ${what}`;
  });
  return `skipped: ${parts.join(', ')} — CI (.ci/run) runs them`;
}
