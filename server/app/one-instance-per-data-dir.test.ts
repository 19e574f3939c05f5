import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnServer } from '../testing/spawn';
import { generateAccountKey } from '../adapters/security/crypto';

/** Runs the server to its exit (it is expected to refuse to start). */
function runToExit(env: Record<string, string | undefined>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/app/main.ts'], { env: { ...process.env, PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) => child.on('exit', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); }));
}

describe('one Switchyard process per DATA_DIR', () => {
  it('refuses a second process on the same DATA_DIR in one line, and a lock left by a killed process does not block a restart', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'sy-datadir-'));
    const rootKey = generateAccountKey();
    const env = { DATA_DIR: dataDir, DATABASE_URL: undefined, ROOT_KEY: rootKey, MASTER_KEY: undefined };
    const auth = { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' };
    try {
      const first = await spawnServer(env, 90_000);
      try {
        const second = await runToExit(env);
        expect(second.code).toBe(1);
        expect(second.stderr).toBe(`switchyard: DATA_DIR ${dataDir} is in use by another Switchyard process (pid ${first.child.pid}); stop it first, or give this instance a DATA_DIR of its own (instances share data through PostgreSQL: DATABASE_URL)\n`);
        expect(second.stdout).not.toContain('listening');

        // The first one never noticed: it serves and writes as before.
        const created = await fetch(`${first.url}/x-users`, { method: 'POST', headers: auth, body: JSON.stringify({ Name: 'kept', Email: 'kept@example.com', CreditGranted: 5 }) });
        expect(created.status).toBe(201);
      } finally {
        // No graceful close: the lock stays behind, held by a pid that no longer exists.
        await first.stop('SIGKILL');
      }

      const third = await spawnServer(env, 90_000);
      try {
        expect(third.stdout()).toContain('data_dir_lock_taken_over');
        const users = await fetch(`${third.url}/x-users`, { headers: auth });
        expect(users.status).toBe(200);
        expect(JSON.stringify(await users.json())).toContain('kept@example.com');
      } finally {
        expect(await third.stop()).toBe(0);
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 240_000);
});
