import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';

/** A process the benchmark started; every one is stopped at the end, even on error. */
export interface Child {
  name: string;
  proc: ChildProcess;
  /** The URL the process announced. */
  url: string;
  output(): string;
}

const running = new Set<ChildProcess>();

/**
 * Starts `node <args>` and waits until its output matches `ready` (group 1 = its URL).
 * Output is kept only up to a bound: a proxy logging per request must not grow the bench's memory.
 */
export function startChild(name: string, args: string[], env: Record<string, string>, ready: RegExp, timeoutMs = 60_000): Promise<Child> {
  return startProcess(name, process.execPath, args, env, ready, timeoutMs);
}

/**
 * Starts any program; `ready` either matches its output (group 1 = its URL) or, for a program
 * that announces nothing (nginx), is the URL it will serve, ready once its port accepts.
 */
export function startProcess(name: string, command: string, args: string[], env: Record<string, string>, ready: RegExp | URL, timeoutMs = 60_000): Promise<Child> {
  const proc = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(proc);
  let out = '';
  const keep = (d: Buffer) => {
    if (out.length < 64 * 1024) out += d.toString('utf8');
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  proc.on('exit', () => running.delete(proc));
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      clearInterval(poll);
      clearTimeout(timer);
      proc.kill('SIGKILL');
      reject(new Error(`${name} ${why}:\n${out.slice(-2000)}`));
    };
    const timer = setTimeout(() => fail(`did not start within ${timeoutMs} ms`), timeoutMs);
    // eslint-disable-next-line no-control-regex
    const plain = () => out.replace(/\x1b\[[0-9;]*m/g, '');
    let probing = false;
    const poll = setInterval(() => {
      if (probing) return;
      const done = (url: string) => {
        clearInterval(poll);
        clearTimeout(timer);
        proc.removeAllListeners('exit');
        proc.on('exit', () => running.delete(proc));
        resolve({ name, proc, url, output: () => out });
      };
      if (ready instanceof URL) {
        probing = true;
        accepts(ready).then((ok) => {
          probing = false;
          if (ok && proc.exitCode === null) done(ready.origin);
        });
        return;
      }
      const m = ready.exec(plain());
      if (m) done(m[1]);
    }, 25);
    proc.once('exit', (code, signal) => fail(`exited (${code ?? signal}) before it was ready`));
  });
}

/** SIGTERM every child, SIGKILL those still alive after a grace period. */
export async function stopAll(graceMs = 3000): Promise<void> {
  const procs = [...running];
  await Promise.all(procs.map((p) => new Promise<void>((resolve) => {
    if (p.exitCode !== null || p.signalCode !== null) return resolve();
    const kill = setTimeout(() => p.kill('SIGKILL'), graceMs);
    p.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    p.kill('SIGTERM');
  })));
}

/** Last resort when the bench itself is dying: no waiting possible in an 'exit' handler. */
export function killAllNow(): void {
  for (const p of running) p.kill('SIGKILL');
}

/** A loopback port that was free a moment ago, for a child that cannot listen on port 0 and report it. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** Whether a TCP connection to the URL's host and port is accepted. */
function accepts(url: URL): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Runs a benchmark's main: children killed however the process ends, its exit code from main,
 * and on failure the summary line with n/a figures (scripts that parse it still find it).
 */
export function runBenchmark(what: string, main: () => Promise<number | void>, summaryOnFailure: string, cleanup: () => Promise<unknown> = () => stopAll()): void {
  process.on('exit', killAllNow);
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      stopAll(1000).finally(() => process.exit(130));
    });
  }
  main()
    .then((code) => { if (typeof code === 'number') process.exitCode = code; })
    .catch((err: Error) => {
      console.error(`${what} benchmark failed: ${err.message}`);
      console.log(summaryOnFailure);
      process.exitCode = 1;
    })
    .finally(cleanup);
}
