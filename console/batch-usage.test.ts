import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createAccount, rootAccount, usageOf, type TestAccount } from '../server/testing/accounts';
import { outputLine, settleTestBatch } from '../server/testing/settled-batch';
import { ConsoleHarness, openTab, screenshots } from './test-support';
import { needs } from '../server/testing/requirements';

/**
 * A provider batch billed by the gateway's settlement, as the console shows it: in the Requests
 * tab one row naming the batch and the lines it billed, in the Usage tab its spend apart.
 */
const h = new ConsoleHarness();
let page: Page;
let user: TestAccount;
let cost = 0;
const BATCH_ID = `batch_console_${process.pid}`;

beforeAll(async () => {
  await h.start();
  user = await createAccount(h.gw, rootAccount(h.gw), { CreditGranted: 20 });
  h.gw.gateway.usage.record(usageOf(user, { model: 'gpt-4o', creditUsed: 0.2, requestId: 'call-1', at: new Date(Date.now() - 60_000) }));
  await h.gw.gateway.usage.flush();
  // 600k tokens in, 60k out at half gpt-4o's price: (600k·2.50 + 60k·10) / 1M / 2 = $1.05.
  cost = (await settleTestBatch(h.gw, user, { id: BATCH_ID, model: 'gpt-4o', output: [1, 2, 3].map((n) => outputLine(n, { prompt_tokens: 100_000 * n, completion_tokens: 10_000 * n })) })).cost;
  page = await h.openAsRoot(h.context);
  page.setDefaultTimeout(10_000);
}, 180_000);
afterAll(async () => { await h.close(); });

describe('a provider batch in the console', needs('chromium'), () => {
  it('is one row of the Requests tab naming the batch and its lines; a call\'s row has no batch mark', async () => {
    expect(cost).toBeCloseTo(1.05, 10);
    await openTab(page, 'Requests');
    await page.locator('#rq-user').selectOption(String(user.id));
    await page.getByRole('button', { name: 'Show' }).click();
    const rows = page.locator('[data-testid=requests-table] tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    const cells = (label: string) => rows.locator(`td[data-label="${label}"]`).allTextContents();
    expect(await cells('Request ID')).toEqual([BATCH_ID, 'call-1']);
    expect(await cells('Credit')).toEqual(['$1.05', '$0.20']);
    const badges = page.locator('[data-testid=batch-badge]');
    expect(await badges.count()).toBe(1);
    expect(await rows.nth(0).locator('[data-testid=batch-badge]').textContent()).toBe('batch · 3 lines');
    expect(await rows.nth(1).locator('[data-testid=batch-badge]').count()).toBe(0);
    await screenshots(page, 'tab-requests-batch');
  });

  it('shows the batch spend apart in the Usage tab', async () => {
    await openTab(page, 'Usage');
    await expect.poll(() => page.locator('[data-testid=usage-requests] .stat-value').textContent()).toBe('4');
    expect(await page.locator('[data-testid=usage-requests] .stat-hint').textContent()).toBe('last 30 days · 3 in batches');
    expect(await page.locator('[data-testid=usage-credit] .stat-value').textContent()).toBe('$1.25');
    expect(await page.locator('[data-testid=usage-credit] .stat-hint').textContent()).toBe('last 30 days · $1.05 in batches');
    const bars = await page.locator('.share-bars').textContent();
    expect(bars).toContain('gpt-4o (batch)');
    expect(bars).toContain('$1.05');
    // The recent-requests card counts the batch's record as its three lines.
    await page.locator('[data-testid=recent-health] select').selectOption(String(user.id));
    await expect.poll(() => page.locator('[data-testid=failure-rate] .stat-hint').textContent()).toBe('0 of 4 cut or stalled');
    await screenshots(page, 'tab-usage-batch');
  });
});
