import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { createAccount, rootAccount, usageOf, type TestAccount } from '../server/testing/accounts';
import { ConsoleHarness, DESKTOP, launchChromium } from './test-support';
import { needs } from '../server/testing/requirements';

/**
 * The console in English and Simplified Chinese: the browser's languages pick one, the switch in
 * the header changes it at once and is remembered in this browser; money, numbers and dates
 * follow it. One gateway; a browser under a Chinese LANG, another under an English one.
 */
const h = new ConsoleHarness({ lang: 'zh_CN.UTF-8' });
let english: Browser;
let shop: TestAccount;

beforeAll(async () => {
  await h.start();
  english = await launchChromium({ lang: 'en_US.UTF-8' });
  shop = await createAccount(h.gw, rootAccount(h.gw), { Alias: 'Tea shop' });
  // A gpt-4o-mini call: a few hundred tokens cost far less than a hundredth of a cent.
  h.gw.gateway.usage.record(usageOf(shop, { model: 'gpt-4o-mini', creditUsed: 0.0000195 }));
  await h.gw.gateway.usage.flush();
}, 180_000);
afterAll(async () => {
  await english?.close();
  await h.close();
});

const lang = (p: Page) => p.evaluate(() => document.documentElement.lang);
const heading = (p: Page, name: string) => p.getByRole('heading', { name, exact: true }).waitFor();
const tab = (p: Page, name: string) => p.locator('nav.tabs').getByRole('link', { name, exact: true }).click();

async function signIn(p: Page, button: string): Promise<void> {
  await p.locator('#api-key').fill(h.gw.rootKey);
  await p.getByRole('button', { name: button }).click();
}

describe('a browser whose language is Chinese', needs('chromium'), () => {
  it('shows the console in Chinese, with Chinese money and dates', async () => {
    const page = await h.context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${h.gw.url}/console/`);
    expect(await page.evaluate(() => navigator.languages[0])).toMatch(/^zh/);
    await heading(page, 'Switchyard 控制台');
    expect(await lang(page)).toBe('zh-CN');
    expect(await page.title()).toBe('Switchyard 控制台');
    expect(await page.getByLabel('API 密钥').count()).toBe(1);
    await signIn(page, '登录');
    await heading(page, 'AI API 示例');
    expect(await page.getByRole('navigation', { name: '控制台栏目' }).getByRole('link').allTextContents())
      .toEqual(['AI API 示例', '账户', '服务商', '系统配置', '广播公告', '操作日志', '用量', '请求', '余额', '模型']);

    await tab(page, '用量');
    await heading(page, '用量');
    await page.getByRole('tab', { name: '子账户' }).click();
    await expect.poll(() => page.locator('[data-testid=usage-credit] .stat-value').textContent()).toBe('< US$0.0001');
    expect(await page.locator('[data-testid=usage-credit] .stat-label').textContent()).toBe('已用额度');
    // The charts' days in Chinese (`2026年11月28日`), and uPlot drew them.
    expect(await page.locator('[data-testid=chart-requests] .sr-only tbody tr td').first().textContent()).toMatch(/^\d{4}年\d{1,2}月\d{1,2}日$/);
    expect(await page.locator('[data-testid=chart-requests] canvas').count()).toBeGreaterThan(0);

    await tab(page, '请求');
    const account = page.locator('[data-testid=requests-table] tbody tr td[data-label="账户"] span');
    await expect.poll(() => account.first().textContent()).toBe('Tea shop');
    expect(await account.first().getAttribute('title')).toBe(`#${shop.id}`);
    expect(await page.locator('[data-testid=requests-table] tbody tr td[data-label="额度"]').first().textContent()).toBe('< US$0.0001');
    await page.close();
  });

  it('switches to English at once, and still shows English after a reload', async () => {
    const page = await h.context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${h.gw.url}/console/#/usage`);
    // The session lives in sessionStorage, a new tab signs in again.
    await signIn(page, '登录');
    await heading(page, '用量');
    const money = page.locator('[data-testid=usage-credit] .stat-value');
    await page.getByRole('tab', { name: '子账户' }).click();
    await expect.poll(() => money.textContent()).toBe('< US$0.0001');
    // The switch, from the keyboard: two Shift+Tabs back from Sign out, English is one arrow up.
    await page.getByRole('button', { name: '退出登录' }).focus();
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    expect(await page.evaluate(() => document.activeElement?.closest('label')?.textContent)).toContain('语言');
    await page.keyboard.press('ArrowUp');
    await heading(page, 'Usage');
    expect(await lang(page)).toBe('en');
    expect(await page.title()).toBe('Switchyard console');
    // Formatters follow the switch without a reload; the chart was drawn again in English.
    await expect.poll(() => money.textContent()).toBe('< $0.0001');
    expect(await page.locator('[data-testid=chart-requests] .sr-only tbody tr td').first().textContent()).toMatch(/^[A-Z][a-z]{2} \d{1,2}, \d{4}$/);
    expect(await page.locator('[data-testid=chart-requests] canvas').count()).toBe(1);
    expect(await page.evaluate(() => localStorage.getItem('switchyard.language'))).toBe('en');

    await page.reload();
    await heading(page, 'Usage');
    expect(await lang(page)).toBe('en');
    expect(await page.getByLabel('Language').inputValue()).toBe('en');
    await page.close();
  });
});

describe('a browser whose language is English', needs('chromium'), () => {
  it('shows English until Chinese is picked, then Chinese, also after a reload', async () => {
    const ctx = await english.newContext({ viewport: DESKTOP });
    const page = await ctx.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${h.gw.url}/console/`);
    await heading(page, 'Switchyard console');
    // Any valid key signs in: the page says which console each kind of key opens.
    expect(await page.locator('.signin-card > p.muted').textContent()).toContain('an Owner\'s key opens the Owner console, any other account\'s key its own console');
    expect(await lang(page)).toBe('en');
    // Switchable before signing in too.
    await page.getByLabel('Language').selectOption('zh-CN');
    await heading(page, 'Switchyard 控制台');
    expect(await lang(page)).toBe('zh-CN');
    await signIn(page, '登录');
    await heading(page, 'AI API 示例');
    await page.reload();
    await heading(page, 'AI API 示例');
    expect(await lang(page)).toBe('zh-CN');
    // The switch is in the header, next to the account's name.
    expect(await page.locator('header.topbar').getByLabel('语言').inputValue()).toBe('zh-CN');
    await page.locator('header.topbar').getByLabel('语言').selectOption('en');
    await heading(page, 'AI API examples');
    await ctx.close();
  });
});
