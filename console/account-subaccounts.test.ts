import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { createAccount, rootAccount, type TestAccount } from '../server/testing/accounts';
import { ConsoleHarness, DESKTOP, openTab, screenshots, seriousViolations, signIn } from './test-support';
import { needs } from '../server/testing/requirements';
import { localDay } from './src/tabs/news-dismissals';

/**
 * A reseller (a user account with manage permission and credit) runs its subaccounts from its
 * own console: creates one (key shown once, and it works), tops it up (what was asked beside what
 * was credited), has an invalid access-list entry refused as it is typed, saves an ACL, a
 * per-model limit and Rates, disables and enables it, and deletes it after a refund preview that
 * the caller's balance then bears out to the micro-dollar. Its operation log shows all of it; a
 * news entry aimed at it stays dismissed for the day. A plain account has no Accounts tab; an
 * Owner gets Balance and Models. In English and Chinese, checked by axe and at phone width.
 */
const h = new ConsoleHarness();
let chinese: BrowserContext;
let reseller: TestAccount;
let plain: TestAccount;
const NAME = `sub${process.pid}`;
const NEWS_TITLE = `Price change ${process.pid}`;
let subId = 0;

beforeAll(async () => {
  await h.start();
  chinese = await h.chineseContext();
  // USER_API_BALANCE is 20 by default: 100 gives manage permission, 5 does not.
  reseller = await createAccount(h.gw, rootAccount(h.gw), { Alias: 'Reseller', CreditGranted: 100 });
  plain = await createAccount(h.gw, rootAccount(h.gw), { Alias: 'Plain', CreditGranted: 5 });
  const posted = await h.gw.root.post(`/x-news/${reseller.id}`, { title: NEWS_TITLE, content: 'New prices from next month.' });
  expect(posted.status).toBe(201);
}, 180_000);
afterAll(async () => {
  await chinese?.close();
  await h.close();
});

const nav = (page: Page, name = 'Console sections') => page.getByRole('navigation', { name });
const balanceOf = async (key: string): Promise<number> => (await h.gw.as(key).get('/dashboard/status')).body.balance;
const subaccount = async () => (await h.gw.as(reseller.key).get(`/x-users/${subId}`)).body[0];
const focusedTestId = (page: Page) => page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? document.activeElement?.tagName ?? null);

describe('a reseller\'s console', needs('chromium'), () => {
  let page: Page;
  /** Errors and warnings the console logged: none is expected. */
  const pageErrors: string[] = [];

  it('creates a subaccount, shows its working key once, and what was asked beside what was credited', async () => {
    page = await h.open(h.context);
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'warning' || m.type() === 'error') pageErrors.push(m.text()); });
    page.setDefaultTimeout(10_000);
    await signIn(page, reseller.key);
    await page.getByRole('heading', { name: 'Balance', exact: true }).waitFor();
    const tabs = await nav(page).getByRole('link').allTextContents();
    expect(tabs).toEqual(expect.arrayContaining(['Balance', 'Models', 'Requests', 'Accounts', 'Broadcast news', 'Operation log']));

    await openTab(page, 'Accounts');
    await page.getByRole('heading', { name: 'Accounts', exact: true }).waitFor();
    await page.getByRole('button', { name: 'New subaccount' }).click();
    const form = page.locator('[data-testid=account-create]');
    // Level, Factor, Gear, Tier, Role and LevelMapper are an Owner's; Rates is the reseller's.
    expect(await form.locator('#new-Level, #new-Factor, #new-Role').count()).toBe(0);
    expect(await form.locator('#new-Rates').count()).toBe(1);
    await form.locator('#new-Name').fill(NAME);
    await form.locator('#new-Email').fill(`${NAME}@example.test`);
    // Below USER_MIN_BALANCE (2): the server raises it, and the notice says both.
    await form.locator('#new-credit').fill('1');
    expect(await seriousViolations(page)).toEqual([]);
    await form.getByRole('button', { name: 'Create subaccount' }).click();

    const key = await page.locator('[data-testid=new-key-value]').textContent();
    expect(key).toMatch(/^sk-/);
    const notice = page.locator('[data-testid=accounts-notice]');
    await expect.poll(() => notice.textContent()).toContain(`Created ${NAME}`);
    expect(await notice.locator('[data-testid=credit-requested]').textContent()).toBe('Requested $1.00');
    expect(await notice.locator('[data-testid=credit-credited]').textContent()).toBe('Credited $2.00');
    expect(await notice.locator('[data-testid=credit-paid]').textContent()).toBe('You paid $2.00');
    await expect.poll(() => focusedTestId(page)).toBe('accounts-notice');
    const info = await h.gw.as(key!).get('/dashboard/info');
    expect(info.status).toBe(200);
    expect(info.body.name).toBe(NAME);
    subId = info.body.id;
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'reseller-created-en');
  });

  it('tops it up, showing Requested beside Credited', async () => {
    const before = await balanceOf(reseller.key);
    await page.locator('#grant-amount').fill('3.5');
    await page.locator('#grant-days').fill('30');
    await page.getByRole('button', { name: 'Grant', exact: true }).click();
    const notice = page.locator('[data-testid=accounts-notice]');
    await expect.poll(() => notice.textContent()).toContain(`Topped up ${NAME}.`);
    expect(await notice.locator('[data-testid=credit-requested]').textContent()).toBe('Requested $3.50');
    expect(await notice.locator('[data-testid=credit-credited]').textContent()).toBe('Credited $3.50');
    // The notice comes first; the account's figures once the list is read again.
    await expect.poll(() => page.locator('[data-testid=account-balance]').textContent()).toBe('$5.50');
    expect(await balanceOf(reseller.key)).toBeCloseTo(before - 3.5, 6);
    await expect.poll(() => focusedTestId(page)).toBe('accounts-notice');
  });

  it('refuses an invalid access-list entry as it is typed, and saves a valid ACL, a model limit and Rates', async () => {
    const edit = page.locator('[data-testid=account-edit]');
    const acl = edit.locator('[data-testid=acl-AllowIPs]');
    await acl.getByRole('radio', { name: 'Only these' }).click();
    const input = acl.locator('#acl-AllowIPs');
    const problem = acl.locator('[data-testid=acl-AllowIPs-problem]');
    expect(await problem.getAttribute('aria-live')).toBe('polite');
    await input.pressSequentially('10.0.0.3');
    expect(await problem.textContent()).toBe('');
    await input.pressSequentially('00');
    expect(await problem.textContent()).toBe('"10.0.0.300" is not an IP address or CIDR range (10.0.0.0/8, 192.0.2.7, 2001:db8::/32).');
    expect(await input.getAttribute('aria-invalid')).toBe('true');
    await input.press('Enter');
    expect(await acl.locator('.chip').count()).toBe(0);
    expect(await input.inputValue()).toBe('10.0.0.300');
    expect(await seriousViolations(page)).toEqual([]);

    await input.fill('10.0.0.0/8');
    expect(await problem.textContent()).toBe('');
    await input.press('Enter');
    expect(await acl.locator('.chip code').allTextContents()).toEqual(['10.0.0.0/8']);

    await edit.getByRole('button', { name: 'Add model limit' }).click();
    await edit.getByLabel('Model 1').fill('gpt-4o-mini');
    await edit.getByLabel('rpm 1').fill('30');
    await edit.getByLabel('tpm 1').fill('9000');
    // Dearer than the reseller's own price: its cards are rescaled, and a refund converts back.
    await edit.locator('#edit-Rates').fill('2');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.locator('[data-testid=accounts-notice]').textContent()).toContain(`of ${NAME}`);
    const saved = await subaccount();
    expect(saved.AllowIPs).toBe('10.0.0.0/8');
    expect(saved.ModelLimits).toEqual({ 'gpt-4o-mini': { rpm: 30, tpm: 9000 } });
    expect(saved.Rates).toBe(2);
    expect(saved.Balance).toBe(11);
  });

  it('disables and enables it', async () => {
    await page.getByRole('button', { name: 'Disable', exact: true }).click();
    await expect.poll(() => page.locator('[data-testid=accounts-notice]').textContent()).toContain(`Disabled ${NAME}`);
    expect((await subaccount()).Status).toBe(false);
    expect(await page.locator(`[data-testid=tree-${NAME}] .badge-off`).textContent()).toBe('disabled');
    await page.getByRole('button', { name: 'Enable', exact: true }).click();
    await expect.poll(() => page.locator('[data-testid=accounts-notice]').textContent()).toContain(`Enabled ${NAME}`);
    expect((await subaccount()).Status).toBe(true);
  });

  it('deletes it after previewing the refund, and the caller\'s balance rises by exactly that', async () => {
    const before = await balanceOf(reseller.key);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const preview = page.locator('[data-testid=refund-preview]');
    // $11.00 at Rates 2 is $5.50 at the reseller's Rates 1.
    expect(await preview.textContent()).toBe(`Deleting ${NAME} returns $5.50 to your balance.`);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Keep it');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'reseller-delete-preview-en');
    // Keeping it gives focus back to the Delete button.
    await page.getByRole('button', { name: 'Keep it' }).click();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Delete');
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const shown = Number(/\$([\d.]+)/.exec((await preview.textContent())!)![1]);
    await page.getByRole('button', { name: 'Delete for good' }).click();
    await expect.poll(() => page.locator('[data-testid=accounts-notice]').textContent()).toContain(`Deleted ${NAME}; $5.50 went back to your balance.`);
    await expect.poll(() => focusedTestId(page)).toBe('accounts-notice');
    const after = await balanceOf(reseller.key);
    expect(Math.round((after - before) * 1e6) / 1e6).toBe(shown);
    expect(await page.locator(`[data-testid=tree-${NAME}]`).count()).toBe(0);
  });

  it('shows those actions in its operation log', async () => {
    await openTab(page, 'Operation log');
    await page.getByRole('heading', { name: 'Operation log', exact: true }).waitFor();
    const rows = page.locator('[data-testid=log-table] tbody tr');
    await expect.poll(() => rows.count()).toBeGreaterThan(0);
    const mine = await rows.evaluateAll((trs, id) => trs
      .filter((tr) => tr.querySelectorAll('td')[2]?.textContent === `#${id}`)
      .map((tr) => tr.querySelector('td:nth-child(2) code')?.textContent), subId);
    // Newest first: delete, enable, disable, the ACL save, the top-up, the creation.
    expect(mine).toEqual(['delete_user', 'update_user', 'update_user', 'update_user', 'update_user', 'add_user']);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'reseller-logs-en');
  });

  it('dismisses a news entry aimed at it for today, and it stays dismissed after a reload', async () => {
    await openTab(page, 'Broadcast news');
    await page.getByRole('heading', { name: 'Broadcast news', exact: true }).waitFor();
    const entry = page.locator('.news-item', { hasText: NEWS_TITLE });
    await entry.waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    const dismiss = entry.getByRole('button', { name: 'Dismiss for today' });
    expect(await dismiss.getAttribute('aria-describedby')).toBe(await entry.locator('strong').getAttribute('id'));
    await dismiss.click();
    await expect.poll(() => entry.count()).toBe(0);
    const stored = await page.evaluate(() => Object.entries(localStorage).filter(([k]) => k.startsWith('switchyard.news.dismissed.')));
    expect(stored).toHaveLength(1);
    expect(stored[0][0]).toMatch(new RegExp(`^switchyard\\.news\\.dismissed\\.${reseller.id}\\.\\d+$`));
    expect(stored[0][1]).toBe(localDay());

    await page.reload();
    await page.getByRole('heading', { name: 'Broadcast news', exact: true }).waitFor();
    const toggle = page.getByLabel('Show dismissed (1)');
    await toggle.waitFor();
    expect(await entry.count()).toBe(0);
    await toggle.check();
    await entry.waitFor();
    expect(await entry.locator('.badge-off').textContent()).toBe('Dismissed for today');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'reseller-news-en');
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  it('is the same in Chinese', async () => {
    const zh = await h.open(chinese);
    zh.setDefaultTimeout(10_000);
    await zh.locator('#api-key').fill(reseller.key);
    await zh.getByRole('button', { name: '登录' }).click();
    await zh.getByRole('heading', { name: '余额', exact: true }).waitFor();
    expect(await nav(zh, '控制台栏目').getByRole('link').allTextContents()).toEqual(expect.arrayContaining(['账户', '广播公告', '操作日志']));
    await nav(zh, '控制台栏目').getByRole('link', { name: '账户', exact: true }).click();
    await zh.getByRole('button', { name: '新建子账户' }).click();
    await zh.locator('[data-testid=acl-AllowModels]').getByRole('radio', { name: '仅限以下' }).click();
    await zh.locator('#acl-AllowModels').pressSequentially('-gpt');
    expect(await zh.locator('[data-testid=acl-AllowModels-problem]').textContent()).toContain('“-gpt”不是模型名称');
    expect(await seriousViolations(zh)).toEqual([]);
    await screenshots(zh, 'reseller-accounts-zh');
    await nav(zh, '控制台栏目').getByRole('link', { name: '广播公告', exact: true }).click();
    // Another browser: the dismissal was this browser's (localStorage), so the entry shows here.
    await zh.locator('.news-item', { hasText: NEWS_TITLE }).getByRole('button', { name: '今日不再显示' }).waitFor();
    expect(await seriousViolations(zh)).toEqual([]);
    await screenshots(zh, 'reseller-news-zh');
    await nav(zh, '控制台栏目').getByRole('link', { name: '操作日志', exact: true }).click();
    await zh.locator('[data-testid=log-table]').waitFor();
    expect(await seriousViolations(zh)).toEqual([]);
    await screenshots(zh, 'reseller-logs-zh');
    await zh.close();
  });
});

describe('who gets which tabs', needs('chromium'), () => {
  it('gives a plain account (no manage permission) no Accounts tab and no news form', async () => {
    const page = await h.open(await h.browser.newContext({ viewport: DESKTOP }));
    page.setDefaultTimeout(10_000);
    await signIn(page, plain.key);
    await page.getByRole('heading', { name: 'Balance', exact: true }).waitFor();
    const tabs = await nav(page).getByRole('link').allTextContents();
    expect(tabs).not.toContain('Accounts');
    expect(tabs).toEqual(expect.arrayContaining(['Broadcast news', 'Operation log']));
    await page.evaluate(() => { location.hash = '#/accounts'; });
    await page.getByRole('heading', { name: 'Balance', exact: true }).waitFor();
    await openTab(page, 'Broadcast news');
    await page.getByRole('heading', { name: 'Broadcast news', exact: true }).waitFor();
    await page.getByText('No news is visible to your account right now.').waitFor();
    expect(await page.locator('[data-testid=news-form]').count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await page.context().close();
  });

  it('gives an Owner its Owner console with Balance and Models added', async () => {
    const page = await h.openAsRoot(await h.browser.newContext({ viewport: DESKTOP }));
    page.setDefaultTimeout(10_000);
    const tabs = await nav(page).getByRole('link').allTextContents();
    expect(tabs).toEqual(expect.arrayContaining(['AI API examples', 'Accounts', 'Providers', 'Balance', 'Models']));
    await openTab(page, 'Balance');
    await page.getByRole('heading', { name: 'Balance', exact: true }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await openTab(page, 'Models');
    await page.getByRole('heading', { name: 'Models', exact: true }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.context().close();
  });
});
