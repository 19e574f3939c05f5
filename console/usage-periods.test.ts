import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { createAccount, rootAccount, usageOf, type TestAccount } from '../server/testing/accounts';
import { ConsoleHarness, openTab, screenshots, seriousViolations } from './test-support';
import { needs } from '../server/testing/requirements';

/**
 * The Usage tab of the account console, for every account and period: a reseller (subaccounts,
 * manage permission) sees its own usage and its subaccounts', a plain account (no manage
 * permission) its own alone, with no call to /x-bill. Today is live and read again while shown;
 * a chosen day and a range show their own figures; a reversed or too long range is refused.
 * Usage is placed on days counted back from the current clock.
 */
const h = new ConsoleHarness();
let chinese: BrowserContext;
let reseller: TestAccount;
let cafe: TestAccount;
let bakery: TestAccount;
let plain: TestAccount;

const DAY = 86_400_000;
const ago = (n: number) => new Date(Date.now() - n * DAY);
const dayOf = (n: number) => ago(n).toISOString().slice(0, 10);

beforeAll(async () => {
  await h.start();
  chinese = await h.chineseContext();
  // Above USER_API_BALANCE ($20): the reseller may manage; the plain account, with $5, may not.
  reseller = await createAccount(h.gw, rootAccount(h.gw), { Alias: 'Reseller', CreditGranted: 60 });
  cafe = await createAccount(h.gw, reseller, { Alias: 'Cafe', CreditGranted: 5 });
  bakery = await createAccount(h.gw, reseller, { Alias: 'Bakery', CreditGranted: 5 });
  plain = await createAccount(h.gw, rootAccount(h.gw), { Alias: 'Corner shop', CreditGranted: 5 });
  const usage = h.gw.gateway.usage;
  // Today: the reseller $0.30, the cafe 2 × $0.40, the plain account $0.20.
  usage.record(usageOf(reseller, { model: 'gpt-4o', creditUsed: 0.3 }));
  usage.record(usageOf(cafe, { model: 'claude-sonnet-4-5', creditUsed: 0.4 }));
  usage.record(usageOf(cafe, { model: 'claude-sonnet-4-5', creditUsed: 0.4 }));
  usage.record(usageOf(plain, { model: 'gpt-4o-mini', creditUsed: 0.2 }));
  // Three days ago: the reseller $0.12, the cafe $0.25, the bakery $0.70, the plain account $0.06.
  usage.record(usageOf(reseller, { model: 'gpt-4o-mini', creditUsed: 0.12, at: ago(3) }));
  usage.record(usageOf(cafe, { model: 'claude-sonnet-4-5', creditUsed: 0.25, at: ago(3) }));
  usage.record(usageOf(bakery, { model: 'gpt-4o', creditUsed: 0.7, at: ago(3) }));
  usage.record(usageOf(plain, { model: 'gpt-4o-mini', creditUsed: 0.06, at: ago(3) }));
  // Five days ago: the reseller $0.05.
  usage.record(usageOf(reseller, { model: 'gpt-4o', creditUsed: 0.05, at: ago(5) }));
  await usage.flush();
}, 180_000);
afterAll(async () => {
  await chinese?.close();
  await h.close();
});

/**
 * A console page whose clock the test moves: it runs as a real one, and `later` jumps it past
 * the next live read (every 15 s) at once instead of waiting for it.
 */
async function openWithClock(ctx: BrowserContext): Promise<Page> {
  const page = await ctx.newPage();
  await page.clock.install();
  page.on('request', (r) => h.requests.push(r));
  await page.goto(`${h.gw.url}/console/`);
  return page;
}
const later = (page: Page) => page.clock.fastForward(16_000);

const stat = (page: Page, id: string) => page.locator(`[data-testid=${id}] .stat-value`);
const hintOf = (page: Page, id: string) => page.locator(`[data-testid=${id}] .stat-hint`);
const rowsOf = (page: Page, table: string) => page.locator(`[data-testid=${table}] tbody tr`);
/** Each row of a table as its cells' text. */
const table = async (page: Page, id: string) => {
  const out: string[][] = [];
  for (const row of await rowsOf(page, id).all()) out.push(await row.locator('td').allTextContents());
  return out;
};
/** The tRPC procedures a page called, each once per call. */
function callsOf(page: Page): string[] {
  const calls: string[] = [];
  page.on('request', (r) => {
    if (r.url().startsWith(`${h.gw.url}/trpc/`)) calls.push(...new URL(r.url()).pathname.slice('/trpc/'.length).split(','));
  });
  return calls;
}
const pick = (page: Page, kind: 'today' | 'day' | 'range' | 'recent') => page.locator('#usage-period-kind').selectOption(kind);

async function openUsage(page: Page, key: string, names = { usage: 'Usage', balance: 'Balance', nav: 'Console sections', signIn: 'Sign in' }) {
  await page.locator('#api-key').fill(key);
  await page.getByRole('button', { name: names.signIn }).click();
  await page.getByRole('heading', { name: names.balance, exact: true }).waitFor();
  const links = await page.getByRole('navigation', { name: names.nav }).getByRole('link').allTextContents();
  // The Usage tab comes right after Balance in the account console.
  expect(links.slice(0, 2)).toEqual([names.balance, names.usage]);
  await page.getByRole('navigation', { name: names.nav }).getByRole('link', { name: names.usage, exact: true }).click();
  await page.getByRole('heading', { name: names.usage, exact: true }).waitFor();
}

describe('a reseller\'s usage', needs('chromium'), () => {
  it('shows its own usage and its subaccounts\' for the last 30 days, today (live), a day and a range', async () => {
    const page = await openWithClock(h.context);
    page.setDefaultTimeout(10_000);
    const calls = callsOf(page);
    await openUsage(page, reseller.key);

    // The last 30 days, everything: 7 requests, $0.47 of its own and $1.75 of its subaccounts'.
    expect(await page.locator('#usage-period-kind').inputValue()).toBe('recent');
    await expect.poll(() => stat(page, 'usage-credit').textContent()).toBe('$2.22');
    expect(await stat(page, 'usage-requests').textContent()).toBe('7');
    expect(await hintOf(page, 'usage-requests').textContent()).toBe('last 30 days');
    expect(await page.locator('[data-testid=chart-requests] .sr-only table tbody tr').count()).toBe(30);
    expect(await table(page, 'usage-subaccounts')).toEqual([['Cafe', '3', '$1.05'], ['Bakery', '1', '$0.70']]);
    // The name, its #ID on hover.
    expect(await rowsOf(page, 'usage-subaccounts').first().locator('span').getAttribute('title')).toBe(`#${cafe.id}`);
    // By credit, then requests, then name: each call 150 tokens (usageOf's 100 in, 50 out).
    expect(await table(page, 'usage-models')).toEqual([['claude-sonnet-4-5', '3', '450', '$1.05'], ['gpt-4o', '3', '450', '$1.05'], ['gpt-4o-mini', '1', '150', '$0.12']]);

    // Today, live: the reseller's $0.30 and the cafe's two calls.
    await pick(page, 'today');
    await expect.poll(() => stat(page, 'usage-credit').textContent()).toBe('$1.10');
    expect(await stat(page, 'usage-requests').textContent()).toBe('3');
    expect(await hintOf(page, 'usage-credit').textContent()).toBe('today, live (every 15 s)');
    expect(await table(page, 'usage-subaccounts')).toEqual([['Cafe', '2', '$0.80']]);
    expect(await table(page, 'usage-models')).toEqual([['claude-sonnet-4-5', '2', '300', '$0.80'], ['gpt-4o', '1', '150', '$0.30']]);
    const today = Date.parse(`${dayOf(0)}T00:00:00Z`) / 1000;
    expect(await page.locator('[data-testid=chart-credit] .sr-only table tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-x')))).toEqual([String(today)]);
    // Its own key alone: no subaccount table.
    await page.getByRole('tab', { name: 'My key' }).click();
    await expect.poll(() => stat(page, 'usage-credit').textContent()).toBe('$0.30');
    expect(await page.locator('[data-testid=usage-subaccounts]').count()).toBe(0);
    await page.getByRole('tab', { name: 'Everything' }).click();
    // A call made while Today is shown appears without a reload (read again every 15 s).
    h.gw.gateway.usage.record(usageOf(reseller, { model: 'gpt-4o', creditUsed: 0.5 }));
    await h.gw.gateway.usage.flush();
    await expect.poll(async () => { await later(page); return stat(page, 'usage-credit').textContent(); }).toBe('$1.60');
    expect(await stat(page, 'usage-requests').textContent()).toBe('4');

    // One day, three days ago: the bakery spent most.
    await pick(page, 'day');
    expect(await page.locator('#usage-day').inputValue()).toBe(dayOf(0));
    await page.getByLabel('Day (UTC)').fill(dayOf(3));
    await expect.poll(() => stat(page, 'usage-credit').textContent()).toBe('$1.07');
    expect(await stat(page, 'usage-requests').textContent()).toBe('3');
    expect(await table(page, 'usage-subaccounts')).toEqual([['Bakery', '1', '$0.70'], ['Cafe', '1', '$0.25']]);
    expect(await rowsOf(page, 'usage-subaccounts').first().locator('span').getAttribute('title')).toBe(`#${bakery.id}`);
    expect(await page.locator('[data-testid=chart-requests] .sr-only table tbody tr').count()).toBe(1);
    await page.getByRole('tab', { name: 'Subaccounts' }).click();
    await expect.poll(() => stat(page, 'usage-credit').textContent()).toBe('$0.95');

    // A range, six to two days ago: five days, today's calls left out.
    await page.getByRole('tab', { name: 'Everything' }).click();
    await pick(page, 'range');
    await page.getByLabel('From (UTC)').fill(dayOf(6));
    await page.getByLabel('To (UTC, included)').fill(dayOf(2));
    await expect.poll(() => stat(page, 'usage-credit').textContent()).toBe('$1.12');
    expect(await stat(page, 'usage-requests').textContent()).toBe('4');
    expect(await page.locator('[data-testid=chart-requests] .sr-only table tbody tr').count()).toBe(5);
    expect(await table(page, 'usage-subaccounts')).toEqual([['Bakery', '1', '$0.70'], ['Cafe', '1', '$0.25']]);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'tab-usage-reseller-range');

    // An end before the start is refused, under the field, and asks for nothing.
    const before = calls.length;
    await page.getByLabel('To (UTC, included)').fill(dayOf(7));
    const error = page.locator('#usage-end-error');
    await expect.poll(() => error.textContent()).toBe('The last day comes before the first day.');
    expect(await error.getAttribute('role')).toBe('alert');
    expect(await page.locator('#usage-end').getAttribute('aria-invalid')).toBe('true');
    // More than the API allows (366 days) likewise; the last good figures stay.
    await page.getByLabel('From (UTC)').fill(dayOf(400));
    await page.getByLabel('To (UTC, included)').fill(dayOf(0));
    await expect.poll(() => error.textContent()).toBe('A range covers at most 366 days.');
    expect(calls.length).toBe(before);
    expect(await stat(page, 'usage-credit').textContent()).toBe('$1.12');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'tab-usage-reseller-refused');

    // From the keyboard: the period is a labelled control in the tab order; arrows change it.
    await page.locator('#usage-period-kind').focus();
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('usage-period-kind');
    await page.keyboard.press('ArrowDown');
    await expect.poll(() => page.locator('#usage-period-kind').inputValue()).toBe('recent');
    await expect.poll(() => stat(page, 'usage-credit').textContent()).toBe('$2.72');
    expect(calls).toContain('billing.descendants');
    await page.close();
  }, 90_000);

  it('reads the same in Chinese', async () => {
    const page = await h.open(chinese);
    page.setDefaultTimeout(10_000);
    await openUsage(page, reseller.key, { usage: '用量', balance: '余额', nav: '控制台栏目', signIn: '登录' });
    await page.getByLabel('期间').selectOption('day');
    await page.getByLabel('日期（UTC）').fill(dayOf(3));
    await expect.poll(() => stat(page, 'usage-credit').textContent()).toBe('US$1.07');
    expect(await page.locator('[data-testid=usage-credit] .stat-label').textContent()).toBe('已用额度');
    expect(await page.getByRole('heading', { name: '按子账户统计消耗' }).count()).toBe(1);
    expect(await table(page, 'usage-subaccounts')).toEqual([['Bakery', '1', 'US$0.70'], ['Cafe', '1', 'US$0.25']]);
    expect(await page.locator('[data-testid=usage-period]').textContent()).toContain('日期按 UTC 计算');
    await page.getByLabel('期间').selectOption('range');
    await page.getByLabel('开始日期（UTC）').fill(dayOf(2));
    await page.getByLabel('结束日期（UTC，含当天）').fill(dayOf(3));
    await expect.poll(() => page.locator('#usage-end-error').textContent()).toBe('结束日期早于开始日期。');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'tab-usage-reseller-zh');
    await page.close();
  });
});

describe('a plain account\'s usage', needs('chromium'), () => {
  it('is its own alone: no scope switch, no subaccount table, no /x-bill; Today stops being read when the tab closes', async () => {
    expect((await h.gw.as(plain.key).get('/dashboard/status')).body.manage).toBe(false);
    const page = await openWithClock(h.context);
    page.setDefaultTimeout(10_000);
    const calls = callsOf(page);
    await openUsage(page, plain.key);

    await expect.poll(() => stat(page, 'usage-credit').textContent()).toBe('$0.26');
    expect(await stat(page, 'usage-requests').textContent()).toBe('2');
    expect(await table(page, 'usage-models')).toEqual([['gpt-4o-mini', '2', '300', '$0.26']]);
    expect(await page.getByRole('tablist', { name: 'Whose usage' }).count()).toBe(0);
    expect(await page.locator('[data-testid=usage-subaccounts]').count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Spend by subaccount' }).count()).toBe(0);

    await pick(page, 'day');
    await page.getByLabel('Day (UTC)').fill(dayOf(3));
    await expect.poll(() => stat(page, 'usage-credit').textContent()).toBe('$0.06');
    await pick(page, 'range');
    await page.getByLabel('From (UTC)').fill(dayOf(6));
    await page.getByLabel('To (UTC, included)').fill(dayOf(2));
    await expect.poll(() => page.locator('[data-testid=chart-credit] .sr-only table tbody tr').count()).toBe(5);
    expect(await stat(page, 'usage-credit').textContent()).toBe('$0.06');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'tab-usage-plain-range');

    await pick(page, 'today');
    await expect.poll(() => stat(page, 'usage-credit').textContent()).toBe('$0.20');
    expect(await stat(page, 'usage-requests').textContent()).toBe('1');
    expect(await page.locator('[data-testid=usage-subaccounts]').count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'tab-usage-plain-today');
    // Read again while shown…
    const live = () => calls.filter((c) => c === 'dashboard.live').length;
    const first = live();
    await expect.poll(async () => { await later(page); return live(); }).toBeGreaterThan(first);
    // …and no more once the tab is left.
    await openTab(page, 'Models');
    await page.getByRole('heading', { name: 'Models', exact: true }).waitFor();
    const left = live();
    await later(page);
    await later(page);
    // Time for a read the page might still send.
    await page.waitForTimeout(500);
    expect(live()).toBe(left);
    expect(calls).not.toContain('billing.descendants');
    await page.close();
  }, 90_000);
});
