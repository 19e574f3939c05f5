import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';

/** True when nothing listens on 127.0.0.1:port. */
export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** A long-running process a reader starts in its own terminal (the gateway, the demo upstream). */
export class Terminal {
  private out = '';
  private readonly exited: Promise<number | null>;
  private exitCode: number | null | undefined;

  constructor(readonly name: string, private readonly child: ChildProcess) {
    child.stdout!.on('data', (d) => (this.out += d));
    child.stderr!.on('data', (d) => (this.out += d));
    this.exited = new Promise((resolve) => child.on('exit', (code) => { this.exitCode = code; resolve(code); }));
  }

  static start(name: string, args: string[], env: Record<string, string>, cwd: string): Terminal {
    return new Terminal(name, spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] }));
  }

  get output(): string {
    return this.out;
  }

  /** Resolves with the first match of `re` in the output; rejects when the process exits first or time runs out. */
  waitFor(re: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`${this.name}: no ${re} within ${timeoutMs} ms:\n${this.out}`)), timeoutMs);
      const poll = setInterval(() => {
        const m = re.exec(this.out);
        if (m) done(null, m);
        else if (this.exitCode !== undefined) done(new Error(`${this.name} exited with ${this.exitCode}:\n${this.out}`));
      }, 50);
      const done = (err: Error | null, m?: RegExpExecArray) => {
        clearTimeout(timer);
        clearInterval(poll);
        if (err) reject(err);
        else resolve(m!);
      };
    });
  }

  /** Ctrl-C, as the reader would stop it. */
  async stop(): Promise<void> {
    if (this.exitCode !== undefined) return;
    this.child.kill('SIGINT');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(timer);
  }
}

export interface BlockRun {
  ok: boolean;
  stdout: string;
  stderr: string;
}

const DONE = '__readme_test_block_done__';

/**
 * The reader's shell: one bash process for every block, so variables and exports carry from
 * one block to the next as in a terminal. Each block is saved to a file and sourced with
 * stdin from /dev/null (a command reading stdin must not swallow the next block). `set -e`
 * makes a failing command end the shell, which fails the block.
 */
export class ReaderShell {
  private stdout = '';
  private stderr = '';
  private readonly child: ChildProcess;
  private exited = false;
  private count = 0;

  constructor(private readonly cwd: string, env: Record<string, string>) {
    this.child = spawn('bash', ['--noprofile', '--norc'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (d) => (this.stdout += d));
    this.child.stderr!.on('data', (d) => (this.stderr += d));
    this.child.on('exit', () => (this.exited = true));
    this.child.stdin!.write('set -eo pipefail\n');
  }

  async run(code: string, timeoutMs = 60_000): Promise<BlockRun> {
    const n = ++this.count;
    const file = path.join(this.cwd, `.readme-block-${n}.sh`);
    await writeFile(file, `${code}\n`);
    const [outStart, errStart] = [this.stdout.length, this.stderr.length];
    const marker = `${DONE}${n}`;
    if (!this.exited) this.child.stdin!.write(`source ${JSON.stringify(file)} </dev/null\nprintf '\\n${marker}\\n'\nprintf '${marker}\\n' >&2\n`);
    const deadline = Date.now() + timeoutMs;
    while (!this.exited && !(this.stdout.includes(marker) && this.stderr.includes(marker)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const ok = this.stdout.includes(marker) && this.stderr.includes(marker);
    const cut = (s: string, from: number) => {
      const i = s.indexOf(marker, from);
      return s.slice(from, i < 0 ? undefined : i).replace(/\n$/, '');
    };
    return { ok, stdout: cut(this.stdout, outStart), stderr: cut(this.stderr, errStart) };
  }

  close(): void {
    if (!this.exited) this.child.stdin!.end();
  }
}
