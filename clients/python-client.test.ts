/**
 * The generated Python client (clients/python) against a real gateway, through
 * clients/python-flow.py: provider key, subaccount create/update/list, its bill, deletion.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../server/testing/gateway';
import { usageOf } from '../server/testing/accounts';
import { foundAt, needs } from '../server/testing/requirements';

const here = path.dirname(fileURLToPath(import.meta.url));

let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway(); });
afterAll(async () => { await gw?.close(); });

interface Step { step: string; [k: string]: unknown }

describe('generated Python client', needs('python-client'), () => {
  it('adds a provider key, manages a subaccount, reads its bill and cleans up', async () => {
    const child = spawn(foundAt('python-client'), [path.join(here, 'python-flow.py')], {
      env: { ...process.env, PYTHONPATH: path.join(here, 'python'), SWITCHYARD_URL: gw.url, SWITCHYARD_KEY: gw.rootKey },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const steps: Step[] = [];
    // A hung script must not outlive the test.
    const guard = setTimeout(() => child.kill('SIGKILL'), 25_000);
    try {
      for await (const line of createInterface({ input: child.stdout })) {
        const step = JSON.parse(line) as Step;
        steps.push(step);
        if (step.step !== 'subaccount') continue;
        gw.gateway.usage.record(usageOf({
          id: step.id as number, ownerId: step.owner_id as number, dna: step.dna as string,
          name: step.name as string, email: step.email as string, key: step.key as string,
        }, { creditUsed: 0.5, model: 'claude-sonnet-4-5' }));
        await gw.gateway.usage.flush();
        child.stdin.write('go\n');
      }
    } finally {
      clearTimeout(guard);
    }
    const code = await exited;
    expect(stderr).toBe('');
    expect(code).toBe(0);

    const byName = Object.fromEntries(steps.map((s) => [s.step, s]));
    expect(steps.map((s) => s.step)).toEqual(['key', 'rejected', 'subaccount', 'bill', 'done']);
    expect(byName.key).toMatchObject({ total: '1', level_mapper: 'claude-*=3' });
    expect(byName.rejected).toMatchObject({ status: 400, message: expect.stringContaining('deployments') });
    expect(byName.subaccount).toMatchObject({ name: 'py-client-user', total: '1' });
    expect(byName.bill).toMatchObject({ total_requests: 1, total_credit_used: 0.5, days: [new Date().toISOString().slice(0, 10)] });

    // What the client did is what the server holds.
    expect((await gw.root.get('/x-users')).headers.get('x-total-count')).toBe('0');
    expect((await gw.root.get('/x-keys')).headers.get('x-total-count')).toBe('0');
  });
});
