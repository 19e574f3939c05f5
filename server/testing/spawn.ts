import { spawn, type ChildProcess } from 'node:child_process';

export interface RunningServer {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  /** SIGTERM, then the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts the server as a real process and waits for its URL: the TypeScript sources under
 * tsx by default, or a built bundle (`npm start` runs dist/main.mjs) when `entry` names one.
 */
export function spawnServer(env: Record<string, string | undefined>, timeoutMs = 60_000, entry?: string): Promise<RunningServer> {
  const child = spawn(process.execPath, entry ? [entry] : ['--import', 'tsx', 'server/app/main.ts'], {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`server did not start:\n${out}\n${err}`)); }, timeoutMs);
    const poll = setInterval(() => {
      const m = /Switchyard is listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve({
          child, url: m[1], stdout: () => out, stderr: () => err,
          stop: async (signal = 'SIGTERM') => { child.kill(signal); return exited; },
        });
      }
    }, 50);
    exited.then((code) => { clearInterval(poll); clearTimeout(timer); reject(new Error(`server exited with ${code}:\n${out}\n${err}`)); });
  });
}
