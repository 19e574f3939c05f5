import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext } from 'playwright-core';
import { ConsoleHarness, screenshots, seriousViolations, type Violation } from './test-support';
import { needs } from '../server/testing/requirements';
import { createAccount, rootAccount, usageOf, type TestAccount } from '../server/testing/accounts';

/**
 * axe-core on every page of the console, in English and in Chinese: no serious or critical
 * violation (labels, names, contrast, focusable scrolling regions…). axe runs inside the page,
 * injected from the npm package; the failure names each rule and the elements it found. Each
 * page is also photographed at desktop and phone width in both languages
 * (console/screenshots/page-<tab>-<language>-…), and may not scroll sideways at either.
 */
const PAGES = ['#/examples', '#/accounts', '#/providers', '#/config', '#/news', '#/logs', '#/usage', '#/requests', '#/balance', '#/models'];
const h = new ConsoleHarness();
let chinese: BrowserContext;
/** A reseller (credit enough to manage) with a customer, usage and news: every page of an account console has something to show. */
let reseller: TestAccount;

beforeAll(async () => {
  await h.start();
  reseller = await createAccount(h.gw, rootAccount(h.gw), { Alias: 'Reseller', CreditGranted: 50 });
  const customer = await createAccount(h.gw, reseller, { Alias: 'Customer', CreditGranted: 5 });
  h.gw.gateway.usage.record(usageOf(reseller, { model: 'gpt-4o-mini', creditUsed: 0.2, durationMs: 40, firstByteMs: 12, keyKind: 'standard' }));
  h.gw.gateway.usage.record(usageOf(customer, { model: 'gpt-4o', creditUsed: 0.5, durationMs: 90, keyKind: 'anthropic' }));
  await h.gw.gateway.usage.flush();
  expect((await h.gw.root.post(`/x-news/${reseller.dna}`, { title: 'Maintenance', content: 'Tonight, 22:00 UTC.' })).status).toBeLessThan(300);
  chinese = await h.chineseContext();
}, 180_000);
afterAll(async () => {
  await chinese?.close();
  await h.close();
});

describe('axe-core', needs('chromium'), () => describe.each([['English', () => h.context, 'Sign in', 'en'], ['Chinese', () => chinese, '登录', 'zh']] as const)('the console in %s', (_name, context, signInLabel, tag) => {
  it('has no serious or critical axe violation on the sign-in page or any tab', async () => {
    const page = await h.open(context());
    page.setDefaultTimeout(10_000);
    await page.locator('#api-key').waitFor();
    const report: Record<string, Violation[]> = { signin: await seriousViolations(page) };
    await screenshots(page, `page-signin-${tag}`);
    await page.locator('#api-key').fill(h.gw.rootKey);
    await page.getByRole('button', { name: signInLabel }).click();
    await page.locator('nav.tabs').waitFor();
    for (const hash of PAGES) {
      // The hash alone: a reload would sign out (the key lives in the page).
      await page.evaluate((to) => { location.hash = to; }, hash);
      await page.locator('main.content').waitFor();
      // Data-bound parts render after their first round trip.
      await page.waitForLoadState('networkidle');
      report[hash] = await seriousViolations(page);
      await screenshots(page, `page-${hash.slice(2)}-${tag}`);
    }
    expect(Object.fromEntries(Object.entries(report).filter(([, v]) => v.length > 0))).toEqual({});
    await page.close();
  }, 120_000);

  it('has none on any page of an account console (a reseller\'s)', async () => {
    const page = await h.open(context());
    page.setDefaultTimeout(10_000);
    await page.locator('#api-key').fill(reseller.key);
    await page.getByRole('button', { name: signInLabel }).click();
    const nav = page.locator('nav.tabs');
    await nav.waitFor();
    const hashes = await nav.getByRole('link').evaluateAll((links) => links.map((l) => l.getAttribute('href') ?? ''));
    expect(hashes).toEqual(['#/balance', '#/usage', '#/models', '#/requests', '#/accounts', '#/news', '#/logs']);
    await page.waitForLoadState('networkidle');
    const report: Record<string, Violation[]> = {};
    // Each page renders its data within one round trip of the API (tRPC batches its calls).
    const trips: Record<string, number> = {};
    let sent = 0;
    page.on('request', (r) => { if (r.url().includes('/trpc/')) sent++; });
    for (const hash of hashes) {
      sent = 0;
      await page.evaluate((to) => { location.hash = to; }, hash);
      await page.locator('main.content h1').first().waitFor();
      await page.waitForLoadState('networkidle');
      trips[hash] = sent;
      report[hash] = await seriousViolations(page);
      await screenshots(page, `account-page-${hash.slice(2)}-${tag}`);
    }
    expect(Object.fromEntries(Object.entries(report).filter(([, v]) => v.length > 0))).toEqual({});
    expect(Object.values(trips).every((n) => n <= 1), JSON.stringify(trips)).toBe(true);
    await page.close();
  }, 120_000);
}));
