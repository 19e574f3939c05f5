import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { isNativeUws, listenExclusive, uWS } from './uws';
import { startTestGateway } from '../../testing/gateway';

function runMain(env: Record<string, string>, timeoutMs = 20_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/app/main.ts'], {
      env: { ...process.env, DATABASE_URL: 'memory://', PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

describe('uWebSockets.js core', () => {
  it('runs on the native binary, not the JavaScript fallback', async () => {
    expect(isNativeUws).toBe(true);
    const gw = await startTestGateway();
    try {
      const res = await fetch(`${gw.url}/healthz`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ok' });
      // Only the native server stamps this header; the fallback is a plain Node server.
      expect(res.headers.get('uwebsockets')).toBeTruthy();
    } finally {
      await gw.close();
    }
  });

  it('refuses to start on the fallback unless told to', async () => {
    const refused = await runMain({ UWS_USE_FALLBACK: '1' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/native binary not loaded/);
  });

  it('listens exclusively: a second server on the same port is an error, not half the traffic', async () => {
    const first = await listenExclusive(uWS.App(), '127.0.0.1', 0);
    try {
      await expect(listenExclusive(uWS.App(), '127.0.0.1', first.port)).rejects.toThrow(/cannot listen/);
    } finally {
      uWS.us_listen_socket_close(first.socket);
    }
  });
});
