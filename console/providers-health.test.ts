import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { insertAccount } from '../server/testing/accounts';
import { refusedOrigin, startMockUpstream, type MockUpstream } from '../server/testing/mock-upstream';
import { ConsoleHarness, openTab, screenshots } from './test-support';
import { needs } from '../server/testing/requirements';

/**
 * The providers table shows what the gateway knows of each key's health: a key whose upstream
 * cannot be reached is out of rotation, with its last error (no host) and since when, beside
 * a healthy one.
 */
const h = new ConsoleHarness();
let page: Page;
let mock: MockUpstream;
let deadId: number;
let goodId: number;

beforeAll(async () => {
  await h.start();
  mock = await startMockUpstream();
  const add = async (Name: string, Provider: string, SecretKey: string) => {
    const r = await h.gw.root.post('/x-keys', { Name, Level: 7, Provider, SecretKey, Status: true });
    expect(r.status).toBe(201);
    return r.body.Key.ID as number;
  };
  const dead = await refusedOrigin();
  deadId = await add('unreachable', dead, 'sk-console-health-dead-0123456789');
  goodId = await add('working', mock.url, 'sk-console-health-good-0123456789');
  const user = await insertAccount(h.gw, { credit: 10, level: 7 });
  // KEY_FAILURE_THRESHOLD (3) connection errors take the dead key out; the working key serves.
  for (let i = 0; i < 6; i++) {
    const r = await fetch(`${h.gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(r.status).toBe(200);
  }
  // A model without a price: refused, and listed for the Owner.
  const unpriced = await fetch(`${h.gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'house-model-9', messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(unpriced.status).toBe(403);
  page = await h.openAsRoot(h.context);
}, 180_000);
afterAll(async () => {
  await h.close();
  await mock?.close();
});

describe('provider health in the console', needs('chromium'), () => {
  it('shows the unreachable key out of rotation with its last error and since when, and the working key healthy', async () => {
    await openTab(page, 'Providers');
    const dead = page.locator(`[data-testid=key-row-${deadId}]`);
    await expect.poll(() => dead.locator('[data-testid=health-state]').textContent()).toBe('Out of rotation');
    expect(await dead.locator('[data-testid=health-error]').textContent()).toMatch(/Last error: .*ECONNREFUSED/);
    expect(await dead.locator('[data-testid=health-error]').textContent()).not.toContain('127.0.0.1');
    expect(await dead.locator('[data-testid=health-since]').textContent()).toMatch(/since \S/);
    // Still Enabled: out of rotation for a while is not disabled.
    expect(await dead.locator('td[data-label=Status]').textContent()).toBe('Enabled');
    expect(await page.locator('[data-testid=stat-active] .stat-hint').textContent()).toBe('1 out of rotation after failures');
    const good = page.locator(`[data-testid=key-row-${goodId}]`);
    expect(await good.locator('[data-testid=health-state]').textContent()).toBe('Healthy');
    await screenshots(page, 'tab-providers-health');
  });

  it('lists the requested models without a price on the configuration tab, beside UNPRICED_MODEL_POLICY', async () => {
    await openTab(page, 'System configuration');
    const list = page.locator('[data-testid=unpriced-models]');
    await expect.poll(() => list.locator('tbody tr').count()).toBe(1);
    expect(await list.locator('tbody tr td').first().textContent()).toBe('house-model-9');
    expect(await page.locator('#cfg-UNPRICED_MODEL_POLICY').inputValue()).toBe('');
    await screenshots(page, 'tab-config-unpriced');
  });
});
