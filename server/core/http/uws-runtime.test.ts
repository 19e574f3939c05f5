import { beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { chooseUwsBinary, type UwsRuntime } from './uws-loader';

/**
 * The server entry started by a real Node 24 from the npm registry (the `node` package), so
 * the start-up message is proven on a runtime the loader refuses here (glibc < 2.38), not
 * only on injected facts. No registry, no test: the setup throws rather than skips.
 */
let node24: { execPath: string; runtime: UwsRuntime };

beforeAll(async () => {
  const probe = 'process.stdout.write(JSON.stringify({ execPath: process.execPath, platform: process.platform, arch: process.arch, abi: Number(process.versions.modules), nodeMajor: Number(process.versions.node.split(".")[0]), glibc: process.report.getReport().header.glibcVersionRuntime }))';
  const { stdout } = await promisify(execFile)('npx', ['-y', 'node@24', '-e', probe], { timeout: 240_000, maxBuffer: 1 << 20 });
  const { execPath, ...runtime } = JSON.parse(stdout);
  node24 = { execPath, runtime };
  expect(node24.runtime.nodeMajor).toBe(24);
}, 250_000);

function runMain(execPath: string, timeoutMs = 30_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(execPath, ['--import', 'tsx', 'server/app/main.ts'], {
      env: { ...process.env, DATABASE_URL: 'memory://', PORT: '0', ALLOW_UWS_FALLBACK: '', UWS_USE_FALLBACK: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      // On a system where Node 24's binary loads, the server starts: that is the other answer.
      if (/Switchyard is listening on/.test(stdout)) child.kill('SIGTERM');
    });
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

describe('start-up on a Node whose uWebSockets.js binary this system cannot load', () => {
  it('exits non-zero with one line naming the cause and the fix, or starts where the binary loads', async () => {
    const expected = chooseUwsBinary(node24.runtime);
    const run = await runMain(node24.execPath);
    if (expected.ok) {
      expect(run.stdout).toMatch(/"native_uws":true/);
      return;
    }
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`switchyard: ${expected.reason}\n`);
    expect(run.stdout).toBe('');
  }, 60_000);
});
