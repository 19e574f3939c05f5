import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { createAccount, rootAccount, usageOf, type TestAccount } from '../server/testing/accounts';
import { ConsoleHarness, DESKTOP, screenshots, seriousViolations, signIn } from './test-support';
import { needs } from '../server/testing/requirements';
import { formatMoney } from './src/ui/format';
import { setLanguage } from './src/i18n';
import type { ModelPricing } from '../contract/dashboard/schemas';
import { defaultPrice } from '../server/domain/pricing/cost';

/**
 * An ordinary account (not an Owner) signs in to its own console: Balance and Models only, the
 * figures of its own `/dashboard/live` and `/dashboard/models`, in English and in Chinese, with
 * no serious axe violation and no sideways scrolling. A disabled account's key is refused with
 * the API's own reason.
 */
const h = new ConsoleHarness();
let chinese: BrowserContext;
let shop: TestAccount;
let neighbour: TestAccount;
let models: string[];
/** gpt-4o-mini's prices as the API lists them to the shop (its Rates and Factor applied). */
let mini: ModelPricing;

beforeAll(async () => {
  await h.start();
  chinese = await h.chineseContext();
  shop = await createAccount(h.gw, rootAccount(h.gw), {
    Alias: 'Tea shop', CreditGranted: 25, DailyLimit: 4, SoftLimit: 20, HardLimit: 40, RPM: 60, TPD: 100_000,
    AllowModels: 'gpt-4o-mini claude-sonnet-4*', Rates: 1.25, Factor: 1.1, ModelLimits: { 'gpt-4o-mini': { rpm: 30, tpm: 90_000 } },
  });
  neighbour = await createAccount(h.gw, rootAccount(h.gw), { Alias: 'Sibling', CreditGranted: 5 });
  h.gw.gateway.usage.record(usageOf(shop, { model: 'gpt-4o-mini', creditUsed: 1, prompt: 1200, completion: 300 }));
  h.gw.gateway.usage.record(usageOf(neighbour, { model: 'gpt-4o', creditUsed: 2, prompt: 10, completion: 5 }));
  await h.gw.gateway.usage.flush();
  const listed = await h.gw.as(shop.key).get('/dashboard/models');
  models = listed.body.data.map((m: { id: string }) => m.id);
  mini = listed.body.data.find((m: { id: string }) => m.id === 'gpt-4o-mini').pricing;
}, 180_000);
afterAll(async () => {
  await chinese?.close();
  await h.close();
});

const stat = (page: Page, id: string) => page.locator(`[data-testid=${id}] .stat-value`);
const cells = (page: Page, row: string) => page.locator(`${row} td`).allTextContents();
/** A model's row as the console should show it: its prices per 1M tokens exactly as the API gives them, in `language`. */
async function priceRow(language: 'en' | 'zh-CN', p: ModelPricing) {
  await setLanguage(language);
  const price = (n: number | null | undefined) => (n == null ? '–' : formatMoney(n, { price: true }));
  const row = ['gpt-4o-mini', 'openai', price(p.input), price(p.cached_input), price(p.output), price(p.call)];
  await setLanguage('en');
  return row;
}

describe('the account console', needs('chromium'), () => {
  it('shows an ordinary account its balance, caps, limits and usage, and none of the Owner\'s tabs', async () => {
    const page = await h.open(h.context);
    page.setDefaultTimeout(10_000);
    await signIn(page, shop.key);
    await page.getByRole('heading', { name: 'Balance', exact: true }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Console sections' }).getByRole('link').allTextContents()).toEqual(['Balance', 'Usage', 'Models', 'Requests', 'Accounts', 'Broadcast news', 'Operation log']);
    expect(await page.locator('header.topbar .whoami').textContent()).toBe(`${shop.name} Account`);
    expect(await page.locator('header.topbar .brand-sub').textContent()).toBe('Account console');
    await page.getByRole('button', { name: 'Rotate my key' }).waitFor();

    await expect.poll(() => stat(page, 'balance-balance').textContent()).toBe('$24.00');
    expect(await stat(page, 'balance-today').textContent()).toBe('$1.00');
    expect(await cells(page, '[data-testid=balance-cards] tbody tr')).toEqual(expect.arrayContaining(['$25.00', '$24.00']));
    // Today's $1 of the $4 daily cap; the month's $1 of the $20 soft cap.
    expect(await cells(page, '[data-cap=daily_limit]')).toEqual(['Daily limit', '$4.00', '$1.00', '25%']);
    expect(await cells(page, '[data-cap=soft_limit]')).toEqual(['Monthly soft cap', '$20.00', '$1.00', '5%']);
    expect(await page.locator('[data-rate=rpm] td').textContent()).toBe('60');
    expect(await page.locator('[data-rate=tpd] td').textContent()).toBe('100,000');
    expect(await page.locator('[data-rate=rph] td').textContent()).toBe('No limit');
    expect(await cells(page, '[data-testid=balance-model-limits] tbody tr')).toEqual(['gpt-4o-mini', '30', '90,000']);
    expect(await cells(page, '[data-testid=balance-usage-today] tbody tr')).toEqual(['gpt-4o-mini', '1', '1,200', '300', '$1.00']);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'account-balance-en');

    await page.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name: 'Models', exact: true }).click();
    await page.getByRole('heading', { name: 'Models', exact: true }).waitFor();
    // Only what its own AllowModels lets it call, as the API lists it.
    expect(models.length).toBeGreaterThan(1);
    expect(models.every((m) => m === 'gpt-4o-mini' || m.startsWith('claude-sonnet-4'))).toBe(true);
    await expect.poll(() => page.locator('[data-testid=models-table] tbody tr td:first-child').allTextContents()).toEqual(models);
    // The prices it pays (the catalogue's × Rates 1.25 × Factor 1.1), shown as the API lists them.
    expect(mini.input).toBeCloseTo(defaultPrice('gpt-4o-mini')!.InputText * 1.25 * 1.1, 12);
    expect(await cells(page, '[data-model="gpt-4o-mini"]')).toEqual(await priceRow('en', mini));
    expect(await page.getByTestId('models-prices-note').textContent()).toContain('per 1M tokens');
    expect(await page.locator('[data-testid=snippet-openai] pre').textContent()).toContain(`curl ${h.gw.url}/v1/chat/completions`);
    expect(await page.locator('[data-testid=snippet-agents] pre').textContent()).toContain(`export ANTHROPIC_BASE_URL=${h.gw.url}`);
    await page.locator('[data-testid=snippet-agents]').getByRole('tab', { name: 'Codex CLI' }).click();
    expect(await page.locator('[data-testid=snippet-agents] pre').textContent()).toContain(`base_url="${h.gw.url}/v1"`);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'account-models-en');

    // Its own requests, and nothing of its sibling's, even asked for by ID.
    await page.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name: 'Requests', exact: true }).click();
    await page.getByRole('heading', { name: 'Requests', exact: true }).waitFor();
    await expect.poll(() => page.locator('[data-testid=requests-table] tbody tr').count()).toBe(1);
    expect(await page.locator('[data-testid=requests-table] tbody tr').textContent()).toContain('Tea shop');
    expect(await page.locator('[data-testid=requests-table] tbody tr').textContent()).not.toContain('Sibling');
    const sibling = await h.gw.as(shop.key).get(`/dashboard/requests?user=${neighbour.id}`);
    expect(sibling.status).toBe(403);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'account-requests-en');

    // An Owner's page by its address shows the account's first tab instead.
    await page.evaluate(() => { location.hash = '#/providers'; });
    await page.getByRole('heading', { name: 'Balance', exact: true }).waitFor();
    // Only the caller's own endpoints were called, all with its key.
    const calls = h.requests.filter((r) => r.url().startsWith(`${h.gw.url}/trpc/`)).map((r) => new URL(r.url()).pathname.slice('/trpc/'.length));
    expect(new Set(calls.flatMap((c) => c.split(',')))).toEqual(new Set(['accounts.status', 'dashboard.info', 'dashboard.live', 'dashboard.models', 'accounts.descendants', 'dashboard.requests']));
    await page.close();
  });

  it('shows the same in Chinese', async () => {
    const page = await h.open(chinese);
    page.setDefaultTimeout(10_000);
    await page.locator('#api-key').fill(shop.key);
    await page.getByRole('button', { name: '登录' }).click();
    await page.getByRole('heading', { name: '余额', exact: true }).waitFor();
    expect(await page.getByRole('navigation', { name: '控制台栏目' }).getByRole('link').allTextContents()).toEqual(['余额', '用量', '模型', '请求', '账户', '广播公告', '操作日志']);
    expect(await page.locator('header.topbar .whoami .badge').textContent()).toBe('账户');
    await expect.poll(() => stat(page, 'balance-balance').textContent()).toBe('US$24.00');
    expect(await cells(page, '[data-cap=daily_limit]')).toEqual(['每日上限', 'US$4.00', 'US$1.00', '25%']);
    expect(await page.locator('[data-rate=rph] td').textContent()).toBe('不限');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'account-balance-zh');

    await page.getByRole('navigation', { name: '控制台栏目' }).getByRole('link', { name: '模型', exact: true }).click();
    await page.getByRole('heading', { name: '模型', exact: true }).waitFor();
    await expect.poll(() => page.locator('[data-testid=models-table] tbody tr td:first-child').allTextContents()).toEqual(models);
    expect(await cells(page, '[data-model="gpt-4o-mini"]')).toEqual(await priceRow('zh-CN', mini));
    expect(await page.getByTestId('models-prices-note').textContent()).toContain('每 100 万 token');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'account-models-zh');
    await page.close();
  });

  it('refuses a disabled account\'s key with the API\'s reason, and keeps nothing', async () => {
    const closed = await createAccount(h.gw, rootAccount(h.gw), { Alias: 'Closed shop' });
    expect((await h.gw.root.put(`/x-users/${closed.id}`, { Status: false })).status).toBe(200);
    const page = await h.open(await h.browser.newContext({ viewport: DESKTOP }));
    page.setDefaultTimeout(10_000);
    await signIn(page, closed.key);
    await expect.poll(() => page.locator('#signin-error').textContent()).toBe('This account is disabled');
    expect(await page.evaluate(() => sessionStorage.length + localStorage.length)).toBe(0);
    expect(await page.locator('nav.tabs').count()).toBe(0);
    await page.context().close();
  });
});
