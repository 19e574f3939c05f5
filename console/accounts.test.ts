import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { SMTPServer } from 'smtp-server';
import { simpleParser } from 'mailparser';
import { startMockUpstream, type MockUpstream } from '../server/testing/mock-upstream';
import { ConsoleHarness, openTab, screenshots } from './test-support';
import { needs } from '../server/testing/requirements';

/**
 * Running the business from the console: a subaccount created with limits and an access list
 * set as form fields, its key shown once and copied, credit granted, a proxied call made with
 * the copied key, and that call found on the Requests tab and in the usage charts.
 */
const h = new ConsoleHarness();
let mock: MockUpstream;
let ctx: BrowserContext;
let page: Page;
let smtp: SMTPServer;
const mails: { to: string; subject: string }[] = [];
const NAME = `shop${process.pid}`;
let copiedKey = '';
let accountId = 0;
let requestId: string | null = null;

beforeAll(async () => {
  await h.start();
  mock = await startMockUpstream();
  const r = await h.gw.root.post('/x-keys', { Name: 'main', Level: 7, Provider: mock.url, SecretKey: 'sk-console-accounts-0123456789', Status: true });
  expect(r.status).toBe(201);
  smtp = new SMTPServer({
    disabledCommands: ['STARTTLS'], authOptional: true, logger: false,
    onData(stream, session, cb) {
      simpleParser(stream).then((m) => { mails.push({ to: session.envelope.rcptTo.map((t) => t.address).join(','), subject: m.subject ?? '' }); cb(); }, cb);
    },
  });
  const port = await new Promise<number>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve((smtp.server.address() as AddressInfo).port)));
  expect((await h.gw.root.put('/x-config', { EMAIL_SMTP: '127.0.0.1', EMAIL_PORT: String(port), XAI_MAIL: 'owner@example.test' })).status).toBe(200);
  // The copy button writes to the clipboard, which the test reads back.
  ctx = await h.browser.newContext({ viewport: { width: 1280, height: 900 } });
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.gw.url });
  page = await h.openAsRoot(ctx);
  page.setDefaultTimeout(10_000);
}, 180_000);
afterAll(async () => {
  await h.close();
  await mock?.close();
  await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
});

describe('accounts tab', needs('chromium'), () => {
  it('creates a subaccount with limits and an access list as form fields, and shows its key once with a copy button', async () => {
    await openTab(page, 'Accounts');
    await page.getByRole('button', { name: 'New subaccount' }).click();
    const form = page.locator('[data-testid=account-create]');
    await form.locator('#new-Name').fill(NAME);
    await form.locator('#new-Email').fill(`${NAME}@example.test`);
    await form.locator('#new-BillingEmail').fill(`billing-${NAME}@example.test`);
    await form.locator('#new-credit').fill('5');
    await form.locator('#new-days').fill('30');
    await form.locator('#new-RPM').fill('100');
    await form.locator('#new-SoftLimit').fill('3');
    await form.locator('#new-Level').fill('7');
    const models = form.locator('[data-testid=acl-AllowModels]');
    await models.getByRole('radio', { name: 'Only these' }).click();
    await models.getByRole('textbox').fill('gpt-4o*');
    await models.getByRole('button', { name: 'Add' }).click();
    await form.getByRole('button', { name: 'Add model limit' }).click();
    await form.getByLabel('Model 1').fill('gpt-4o');
    await form.getByLabel('rpm 1').fill('30');
    await screenshots(page, 'tab-accounts-create');
    await form.getByRole('button', { name: 'Create subaccount' }).click();

    const shown = page.locator('[data-testid=new-key]');
    await shown.waitFor();
    const key = (await shown.locator('[data-testid=new-key-value]').textContent())!;
    expect(key).toMatch(/^sk-/);
    await shown.getByRole('button', { name: 'Copy key' }).click();
    await expect.poll(() => shown.getByRole('button', { name: 'Copied' }).count()).toBe(1);
    copiedKey = await page.evaluate(() => navigator.clipboard.readText());
    expect(copiedKey).toBe(key);

    // Stored as the form said: the list and limits, not raw strings the user typed.
    const stored = (await h.gw.root.get(`/x-users/${NAME}`)).body[0];
    accountId = stored.ID;
    expect(stored).toMatchObject({ AllowModels: 'gpt-4o*', RPM: 100, SoftLimit: 3, Level: 7, BillingEmail: `billing-${NAME}@example.test`, ModelLimits: { 'gpt-4o': { rpm: 30 } } });
    expect(stored.Balance).toBeCloseTo(5, 6);
    await screenshots(page, 'tab-accounts-new-key');
    // Shown once: another visit to the tab does not show it again.
    await openTab(page, 'Usage');
    await openTab(page, 'Accounts');
    await page.locator(`[data-testid=tree-${NAME}]`).waitFor();
    expect(await page.locator('[data-testid=new-key]').count()).toBe(0);
  });

  it('grants credit with days, edits fields, suspends and resumes', async () => {
    await page.locator(`[data-testid=tree-${NAME}]`).click();
    const summary = page.locator('[data-testid=account-summary]');
    await summary.locator('#grant-amount').fill('10');
    await summary.locator('#grant-days').fill('60');
    await summary.getByRole('button', { name: 'Grant' }).click();
    await expect.poll(() => page.locator('[data-testid=account-balance]').textContent()).toBe('$15.00');
    const cards = (await h.gw.root.get(`/x-users/${accountId}`)).body[0].CreditBalance as { amount: number; granted_at: string; expires_at: string }[];
    const granted = cards.find((c) => c.amount === 10)!;
    expect(Math.round((Date.parse(granted.expires_at) - Date.parse(granted.granted_at)) / 86_400_000)).toBe(60);

    const edit = page.locator('[data-testid=account-edit]');
    await edit.locator('#edit-Alias').fill('The Shop');
    await edit.locator('#edit-RPM').fill('');
    const ips = edit.locator('[data-testid=acl-AllowIPs]');
    await ips.getByRole('radio', { name: 'Only these' }).click();
    await ips.getByRole('textbox').fill('127.0.0.0/8');
    await ips.getByRole('textbox').press('Enter');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(async () => (await h.gw.root.get(`/x-users/${accountId}`)).body[0].Alias).toBe('The Shop');
    const after = (await h.gw.root.get(`/x-users/${accountId}`)).body[0];
    expect(after).toMatchObject({ RPM: null, AllowIPs: '127.0.0.0/8', AllowModels: 'gpt-4o*' });

    await page.locator('[data-testid=account-summary]').getByRole('button', { name: 'Suspend' }).click();
    await page.locator(`[data-testid=tree-${NAME}] .badge-warn`).waitFor();
    const refused = await fetch(`${h.gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${copiedKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(refused.status).toBe(403);
    await page.locator('[data-testid=account-summary]').getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => page.locator(`[data-testid=tree-${NAME}] .badge-warn`).count()).toBe(0);
    await screenshots(page, 'tab-accounts');
  });

  it('searches the tree and deletes an account after a confirmation', async () => {
    await page.getByRole('button', { name: 'New subaccount' }).click();
    const form = page.locator('[data-testid=account-create]');
    await form.locator('#new-Name').fill(`gone${process.pid}`);
    await form.locator('#new-Email').fill(`gone${process.pid}@example.test`);
    await form.locator('#new-credit').fill('2');
    await form.getByRole('button', { name: 'Create subaccount' }).click();
    await page.locator('[data-testid=new-key]').waitFor();
    await page.getByLabel('Search accounts').fill('gone');
    await expect.poll(() => page.locator('[role=treeitem]').count()).toBe(1);
    await page.locator(`[data-testid=tree-gone${process.pid}]`).click();
    await page.locator('[data-testid=account-summary]').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Delete for good' }).click();
    await expect.poll(() => page.locator('[role=treeitem]').count()).toBe(0);
    expect((await h.gw.root.get(`/x-users/gone${process.pid}`)).status).toBe(404);
    await page.getByLabel('Search accounts').fill('');
    await page.locator(`[data-testid=tree-${NAME}]`).waitFor();
  });
});

describe('the call on the Requests tab and in the usage charts', needs('chromium'), () => {
  it('finds a proxied call made with the copied key', async () => {
    const r = await fetch(`${h.gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${copiedKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hello from the console test' }] }),
    });
    expect(r.status).toBe(200);
    requestId = r.headers.get('x-request-id');
    await h.gw.gateway.usage.flush();

    await openTab(page, 'Requests');
    await page.locator('#rq-user').selectOption(String(accountId));
    await page.getByRole('button', { name: 'Show' }).click();
    const rows = page.locator('[data-testid=requests-table] tbody tr');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().locator('td[data-label=Model]').textContent()).toBe('gpt-4o');
    expect(await rows.first().locator('td[data-label=Status]').textContent()).toBe('ok');
    // Its Level, and the kind of key that served it.
    expect(await rows.first().locator('td[data-label="Level, key kind"]').textContent()).toBe('7OpenAI-compatible');
    if (requestId) expect(await rows.first().getAttribute('data-request-id')).toBe(requestId);
    expect(await rows.first().locator('td[data-label="Duration / first byte"]').textContent()).toMatch(/^\d[\d,]* ms \/ \d[\d,]* ms$/);
    // The account by its name, its ID on hover.
    const account = rows.first().locator('td[data-label=Account] span');
    expect(await account.textContent()).toBe('The Shop');
    expect(await account.getAttribute('title')).toBe(`#${accountId}`);
    // Filters narrow it: another model, or a time window before the call, shows nothing.
    await page.locator('#rq-model').fill('gpt-4o-mini');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByText('No requests match.').waitFor();
    await page.locator('#rq-model').fill('');
    const hourAgo = new Date(Date.now() - 3_600_000);
    const local = (d: Date) => `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}T${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
    await page.locator('#rq-until').fill(local(hourAgo));
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByText('No requests match.').waitFor();
    await page.locator('#rq-until').fill('');
    await page.locator('#rq-since').fill(local(hourAgo));
    await page.locator('#rq-status').selectOption('ok');
    await page.getByRole('button', { name: 'Show' }).click();
    await expect.poll(() => rows.count()).toBe(1);
    await screenshots(page, 'tab-requests');

    await openTab(page, 'Usage');
    await page.getByRole('tab', { name: 'Subaccounts' }).click();
    const today = Date.parse(new Date().toISOString().slice(0, 10)) / 1000;
    const requestsToday = page.locator(`[data-testid=chart-requests] .sr-only table tr[data-x="${today}"] td`).nth(1);
    await expect.poll(() => requestsToday.textContent()).toBe('1');
    expect(await page.locator('[data-testid=chart-requests] canvas').count()).toBeGreaterThan(0);
    // Spend by subaccount: the account by its name, its #ID on hover.
    const spent = page.locator(`[data-testid=usage-subaccounts] tbody tr[data-account-id="${accountId}"] td`).first().locator('span');
    await expect.poll(() => spent.textContent()).toBe('The Shop');
    expect(await spent.getAttribute('title')).toBe(`#${accountId}`);
    // Failure rate of the account's recent requests: none failed.
    await page.locator('[data-testid=recent-health] select').selectOption(String(accountId));
    await expect.poll(() => page.locator('[data-testid=failure-rate] .stat-value').textContent()).toBe('0%');
    await expect.poll(() => page.locator('[data-testid=chart-failures] .sr-only table tbody tr').count()).toBe(1);
    await screenshots(page, 'tab-usage-subaccount-call');
  }, 120_000);
});

describe('test mail', needs('chromium'), () => {
  it('the configuration tab sends a test mail with the stored settings', async () => {
    await openTab(page, 'System configuration');
    const box = page.locator('[data-testid=test-mail]');
    await box.getByRole('button', { name: 'Send a test mail' }).click();
    await box.getByText('Test mail sent; the server accepted owner@example.test.').waitFor();
    await expect.poll(() => mails.filter((m) => m.subject === 'Switchyard test mail').map((m) => m.to)).toEqual(['owner@example.test']);
    // The call left the subaccount below USER_API_BALANCE (20): its low-balance alert was mailed too, once.
    expect(mails.filter((m) => m.subject.startsWith('Balance low')))
      .toEqual([{ to: `billing-${NAME}@example.test,owner@example.test`, subject: `Balance low: The Shop (#${accountId})` }]);
    await screenshots(page, 'tab-config-test-mail');
  });
});
