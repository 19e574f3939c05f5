import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { DESKTOP, ConsoleHarness, openTab, signIn, screenshots } from './test-support';
import { needs } from '../server/testing/requirements';

/**
 * The Owner console's session in a real browser against a real gateway: who may sign in,
 * where the key is kept, and every way the session ends. The tabs are in tabs.test.ts.
 */
const h = new ConsoleHarness();
let page: Page;
let subaccountKey: string;

beforeAll(() => h.start(), 180_000);
afterAll(() => h.close());

describe('sign-in', needs('chromium'), () => {
  it('refuses an invalid key with a message, and keeps nothing', async () => {
    page = await h.open(h.context);
    await screenshots(page, 'signin');
    await signIn(page, 'sk-Xvs' + 'x'.repeat(45));
    await expect.poll(() => page.locator('#signin-error').textContent()).toContain('not valid');
    expect(await page.evaluate(() => sessionStorage.length + localStorage.length)).toBe(0);
    await screenshots(page, 'signin-refused');
  });

  it('lets an account that is not an Owner in to its own console only (console/account-console.test.ts)', async () => {
    const created = await h.gw.root.post('/x-users', { Name: 'console-user', Email: 'console-user@example.test', CreditGranted: 50 });
    expect(created.status).toBe(201);
    subaccountKey = created.body.User.SecretKey;
    await signIn(page, subaccountKey);
    await page.getByRole('heading', { name: 'Balance', exact: true }).waitFor();
    // None of the Owner's own tabs (its subaccounts it may manage: it has credit enough).
    for (const ownerOnly of ['Providers', 'System configuration', 'AI API examples']) {
      expect(await page.locator('nav.tabs').getByRole('link', { name: ownerOnly }).count()).toBe(0);
    }
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([subaccountKey]);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.locator('#api-key').waitFor();
    expect(await page.evaluate(() => sessionStorage.length + localStorage.length)).toBe(0);
  });

  it('lets the Owner in, keeping the key in sessionStorage only', async () => {
    await signIn(page, h.gw.rootKey);
    await page.getByRole('heading', { name: 'AI API examples' }).waitFor();
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([h.gw.rootKey]);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(await h.context.cookies()).toEqual([]);
    // A reload keeps the session: sessionStorage lives as long as the tab.
    await page.reload();
    await page.getByRole('heading', { name: 'AI API examples' }).waitFor();
  });
});

describe('session', needs('chromium'), () => {
  it('ends when the page is closed', async () => {
    await page.close();
    // A new page of the same browser context: sessionStorage belongs to the closed tab.
    page = await h.open(h.context);
    await page.locator('#api-key').waitFor();
    expect(await page.evaluate(() => sessionStorage.length + localStorage.length)).toBe(0);
    await page.close();
    const fresh = await h.browser.newContext({ viewport: DESKTOP });
    page = await h.open(fresh, '#/providers');
    await page.locator('#api-key').waitFor();
    expect(await page.locator('.tabs').count()).toBe(0);
    await fresh.close();
  });

  it('ends on sign-out', async () => {
    page = await h.open(h.context);
    await signIn(page, h.gw.rootKey);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.locator('#api-key').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.reload();
    await page.locator('#api-key').waitFor();
  });
});

describe('a key the server stops accepting', needs('chromium'), () => {
  it('ends the session with a message', async () => {
    page = await h.open(h.context, '#/providers');
    await signIn(page, h.gw.rootKey);
    await page.getByRole('heading', { name: 'Providers' }).waitFor();
    const today = new Date().toISOString().slice(0, 10);
    const rotated = await h.gw.root.post('/x-self', { confirm: `${today}-ROTATE-SELF` });
    expect(rotated.status).toBe(200);
    await openTab(page, 'Operation log');
    await page.getByText('no longer accepts this key').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  });
});
