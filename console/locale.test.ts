import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, rootAccount, usageOf } from '../server/testing/accounts';
import { ConsoleHarness, openTab, signIn } from './test-support';
import { needs } from '../server/testing/requirements';

/**
 * Chromium under LANG=C (a container's usual locale) reports its language as `en-US@posix`, a
 * tag Intl refuses; uPlot gave it to Intl.NumberFormat as it loaded and the console stayed
 * blank. The console formats in the nearest tag Intl takes (console/src/locale.ts).
 */
const h = new ConsoleHarness({ lang: 'C' });

beforeAll(async () => {
  await h.start();
  const user = await createAccount(h.gw, rootAccount(h.gw), { Name: 'posix-user', Email: 'posix-user@example.test' });
  h.gw.gateway.usage.record(usageOf(rootAccount(h.gw), { model: 'gpt-4o', creditUsed: 1234.5 }));
  h.gw.gateway.usage.record(usageOf(user, { model: 'gpt-4o-mini', creditUsed: 0.02 }));
  await h.gw.gateway.usage.flush();
}, 180_000);
afterAll(() => h.close());

describe('a browser language Intl refuses', needs('chromium'), () => {
  it('still shows the console, its numbers and its charts', async () => {
    const page = await h.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.setDefaultTimeout(10_000);
    // The condition itself, before the console's code runs.
    await page.goto(`${h.gw.url}/healthz`);
    const reported = await page.evaluate(() => navigator.language);
    expect(reported).toBe('en-US@posix');
    expect(await page.evaluate((tag) => { try { new Intl.NumberFormat(tag); return 'accepted'; } catch { return 'refused'; } }, reported)).toBe('refused');

    await page.goto(`${h.gw.url}/console/`);
    await signIn(page, h.gw.rootKey);
    await page.getByRole('heading', { name: 'AI API examples' }).waitFor();
    expect(await page.evaluate(() => navigator.language)).toBe('en-US');
    await openTab(page, 'Usage');
    await expect.poll(() => page.locator('[data-testid=usage-requests] .stat-value').textContent()).toBe('2');
    expect(await page.locator('main').textContent()).toContain('$1,234.52');
    for (const chart of ['chart-requests', 'chart-credit']) {
      expect(await page.locator(`[data-testid=${chart}] canvas`).count()).toBeGreaterThan(0);
      expect(await page.locator(`[data-testid=${chart}] .sr-only table tbody tr`).count()).toBe(30);
    }
    expect(errors).toEqual([]);
  });
});
