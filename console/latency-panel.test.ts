import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { createAccount, rootAccount, usageOf, type TestAccount } from '../server/testing/accounts';
import { ConsoleHarness, screenshots, seriousViolations } from './test-support';
import { needs } from '../server/testing/requirements';

/**
 * The latency panel (tabs/LatencyPanel.tsx) on the Usage tab of the account console: p50/p90
 * per day as a chart, p50/p90/p99 of duration and first byte per model and per provider key
 * kind, in English and in Chinese, accessible and without sideways scrolling on a phone.
 * Calls are placed on the current day; their times sit in 1 ms wide buckets where exact figures
 * are asserted (below 4 ms an estimate is the time itself).
 */
const h = new ConsoleHarness();
let chinese: BrowserContext;
let reseller: TestAccount;
let cafe: TestAccount;
let owner: TestAccount;

beforeAll(async () => {
  await h.start();
  chinese = await h.chineseContext();
  // Above USER_API_BALANCE ($20): the reseller may manage.
  reseller = await createAccount(h.gw, rootAccount(h.gw), { Alias: 'Reseller', CreditGranted: 60 });
  cafe = await createAccount(h.gw, reseller, { Alias: 'Cafe', CreditGranted: 5 });
  const usage = h.gw.gateway.usage;
  // The reseller's own streamed calls: 2 ms to the first byte, 3 ms in all, on OpenAI-compatible keys.
  for (let i = 0; i < 10; i++) usage.record(usageOf(reseller, { model: 'gpt-4o', keyKind: 'standard', durationMs: 3, firstByteMs: 2, creditUsed: 0.01 }));
  // Not streamed: a duration, no first byte.
  for (let i = 0; i < 4; i++) usage.record(usageOf(reseller, { model: 'gpt-4o-mini', keyKind: 'bedrock', durationMs: 1, creditUsed: 0.01 }));
  // The cafe's, on its own model: only a subtree view lists it.
  for (let i = 0; i < 3; i++) usage.record(usageOf(cafe, { model: 'claude-sonnet-4-5', keyKind: 'anthropic', durationMs: 2, firstByteMs: 1, creditUsed: 0.01 }));
  // Root's own calls (with one tenant Root is the Owner), for the Owner console's Usage tab.
  owner = rootAccount(h.gw);
  for (let i = 0; i < 5; i++) usage.record(usageOf(owner, { model: 'gemini-2.5-pro', keyKind: 'gemini', durationMs: 2, firstByteMs: 1, creditUsed: 0 }));
  await usage.flush();
}, 180_000);
afterAll(async () => {
  await chinese?.close();
  await h.close();
});

const rowsOf = (page: Page, table: string) => page.locator(`[data-testid=latency-panel] [data-testid=${table}] tbody tr`);
/** Each row of a table as its cells' text. */
const table = async (page: Page, id: string) => {
  const out: string[][] = [];
  for (const row of await rowsOf(page, id).all()) out.push(await row.locator('td').allTextContents());
  return out;
};

async function openUsage(page: Page, key: string, names = { usage: 'Usage', nav: 'Console sections', signIn: 'Sign in' }) {
  await page.locator('#api-key').fill(key);
  await page.getByRole('button', { name: names.signIn }).click();
  await page.getByRole('navigation', { name: names.nav }).getByRole('link', { name: names.usage, exact: true }).click();
  await page.getByRole('heading', { name: names.usage, exact: true }).waitFor();
}

describe('the latency panel on the Usage tab', needs('chromium'), () => {
  it('charts p50/p90 per day and lists p50/p90/p99 per model and key kind, each time as the language writes it', async () => {
    const page = await h.open(h.context);
    page.setDefaultTimeout(15_000);
    await openUsage(page, reseller.key);
    const panel = page.locator('[data-testid=latency-panel]');
    await panel.waitFor();
    await panel.getByRole('heading', { name: 'Latency', exact: true }).waitFor();
    await expect.poll(() => rowsOf(page, 'latency-models').count()).toBeGreaterThan(0);
    const models = await table(page, 'latency-models');
    // Model, calls, streamed, duration p50/p90/p99, first byte p50/p90/p99.
    expect(models.find((r) => r[0] === 'gpt-4o')).toEqual(['gpt-4o', '10', '10', '3 ms', '3 ms', '3 ms', '2 ms', '2 ms', '2 ms']);
    // Not streamed: no first byte, a dash read out as "none".
    expect(models.find((r) => r[0] === 'gpt-4o-mini')).toEqual(['gpt-4o-mini', '4', '0', '1 ms', '1 ms', '1 ms', '–none', '–none', '–none']);
    const kinds = await table(page, 'latency-key-kinds');
    expect(kinds.find((r) => r[0] === 'OpenAI-compatible')?.slice(0, 4)).toEqual(['OpenAI-compatible', '10', '10', '3 ms']);
    expect(kinds.find((r) => r[0] === 'AWS Bedrock')?.slice(0, 3)).toEqual(['AWS Bedrock', '4', '0']);
    // The bars: each model's p90 duration, its p50/p90/p99 in words.
    const bar = page.locator('[data-testid=latency-bars] li', { hasText: 'gpt-4o-mini' });
    expect(await bar.locator('.share-detail').textContent()).toBe('p50 1 ms · p90 1 ms · p99 1 ms');
    // The chart's numbers, in its table for screen readers: one row per day of the period, today's last.
    const today = Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`) / 1000;
    const chartRows = page.locator('[data-testid=latency-chart] .sr-only table tbody tr');
    expect(await chartRows.last().getAttribute('data-x')).toBe(String(today));
    // Today's duration p50: 3 ms whether the cafe's three 2 ms calls are in or not.
    expect((await chartRows.last().locator('td').allTextContents()).slice(1, 2)).toEqual(['3 ms']);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'latency-panel');
    await page.close();
  });

  it('is on the Owner console\'s Usage tab too (Root, the single tenant\'s Owner)', async () => {
    const page = await h.open(h.context);
    page.setDefaultTimeout(15_000);
    await page.locator('#api-key').fill(owner.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name: 'Usage', exact: true }).click();
    await page.locator('[data-testid=latency-panel]').getByRole('heading', { name: 'Latency', exact: true }).waitFor();
    await expect.poll(() => rowsOf(page, 'latency-models').count()).toBeGreaterThan(0);
    // The panel may show the Owner's own calls first and its subtree's once its permission is read.
    await expect.poll(async () => (await table(page, 'latency-models')).find((r) => r[0] === 'gemini-2.5-pro')).toEqual(['gemini-2.5-pro', '5', '5', '2 ms', '2 ms', '2 ms', '1 ms', '1 ms', '1 ms']);
    expect((await table(page, 'latency-key-kinds')).map((r) => r[0])).toContain('Gemini');
    expect(await seriousViolations(page)).toEqual([]);
    await page.close();
  });

  it('reads in Chinese', async () => {
    const page = await h.open(chinese);
    page.setDefaultTimeout(15_000);
    await openUsage(page, reseller.key, { usage: '用量', nav: '控制台栏目', signIn: '登录' });
    const panel = page.locator('[data-testid=latency-panel]');
    await panel.getByRole('heading', { name: '延迟', exact: true }).waitFor();
    await expect.poll(() => rowsOf(page, 'latency-models').count()).toBeGreaterThan(0);
    const models = await table(page, 'latency-models');
    expect(models.find((r) => r[0] === 'gpt-4o')?.slice(3, 4)).toEqual(['3毫秒']);
    expect((await table(page, 'latency-key-kinds')).map((r) => r[0])).toContain('OpenAI 兼容');
    expect(await seriousViolations(page)).toEqual([]);
    await page.close();
  });
});
