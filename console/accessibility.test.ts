import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext } from 'playwright-core';
import { ConsoleHarness, DESKTOP, screenshots, seriousViolations, type Violation } from './test-support';
import { needs } from '../server/testing/requirements';

/**
 * axe-core on every page of the console, in English and in Chinese: no serious or critical
 * violation (labels, names, contrast, focusable scrolling regions…). axe runs inside the page,
 * injected from the npm package; the failure names each rule and the elements it found. Each
 * page is also photographed at desktop and phone width in both languages
 * (console/screenshots/page-<tab>-<language>-…), and may not scroll sideways at either.
 */
const PAGES = ['#/examples', '#/accounts', '#/providers', '#/config', '#/news', '#/logs', '#/usage', '#/requests'];
const h = new ConsoleHarness();
let chinese: BrowserContext;

beforeAll(async () => {
  await h.start();
  chinese = await h.browser.newContext({ viewport: DESKTOP });
  await chinese.addInitScript(() => localStorage.setItem('switchyard.language', 'zh-CN'));
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
}));
