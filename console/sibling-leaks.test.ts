import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page, Response } from 'playwright-core';
import { createAccount, rootAccount, usageOf, type TestAccount } from '../server/testing/accounts';
import { ConsoleHarness, signIn } from './test-support';
import { needs } from '../server/testing/requirements';

/**
 * Two sibling resellers, each with a customer, usage, news and an operation log of its own. One
 * signs in and goes through every page of its console, and types the other's IDs into the
 * address: no page and no API answer the console received names anything of the sibling's.
 */
const h = new ConsoleHarness();
let alpha: TestAccount;
let alphaCustomer: TestAccount;
let beta: TestAccount;
let betaCustomer: TestAccount;

/** What only the sibling's subtree holds: names, aliases, e-mails and a news title. */
let betaMarks: string[];

beforeAll(async () => {
  await h.start();
  const root = rootAccount(h.gw);
  alpha = await createAccount(h.gw, root, { Alias: 'Alpha Reseller', CreditGranted: 50 });
  beta = await createAccount(h.gw, root, { Alias: 'Beta Reseller', CreditGranted: 50 });
  alphaCustomer = await createAccount(h.gw, alpha, { Alias: 'Alpha Customer', CreditGranted: 5 });
  betaCustomer = await createAccount(h.gw, beta, { Alias: 'Beta Customer', CreditGranted: 5, Email: `beta-customer-${process.pid}@example.test` });
  for (const [a, credit] of [[alpha, 0.5], [alphaCustomer, 0.25], [beta, 0.75], [betaCustomer, 1.5]] as const) {
    h.gw.gateway.usage.record(usageOf(a, { model: 'gpt-4o-mini', creditUsed: credit, prompt: 1000, completion: 100 }));
  }
  await h.gw.gateway.usage.flush();
  // News for each reseller's subtree, posted by Root; each reseller's own actions fill its log.
  for (const [a, title] of [[alpha, 'Alpha maintenance window'], [beta, 'Beta-only price notice']] as const) {
    const r = await h.gw.as(h.gw.rootKey).post(`/x-news/${a.dna}`, { title, content: `${title}: details` });
    expect(r.status).toBeLessThan(300);
  }
  expect((await h.gw.as(beta.key).put(`/x-users/${betaCustomer.id}`, { Alias: 'Beta Customer' })).status).toBe(200);
  expect((await h.gw.as(alpha.key).put(`/x-users/${alphaCustomer.id}`, { Alias: 'Alpha Customer' })).status).toBe(200);
  betaMarks = [beta.name, beta.email, 'Beta Reseller', betaCustomer.name, betaCustomer.email, 'Beta Customer', 'Beta-only price notice'];
}, 180_000);
afterAll(async () => { await h.close(); });

const leaks = (text: string) => betaMarks.filter((m) => text.includes(m));

/** Every API answer the page receives, as text, to search for the sibling's names. */
function recordAnswers(page: Page): string[] {
  const bodies: string[] = [];
  page.on('response', (r: Response) => {
    if (!r.url().includes('/trpc/') && !r.url().includes('/dashboard/') && !r.url().includes('/x-')) return;
    void r.text().then((t) => bodies.push(`${r.url()}\n${t}`), () => {});
  });
  return bodies;
}

async function settle(page: Page): Promise<void> {
  await page.waitForLoadState('networkidle');
  await page.waitForTimeout(200);
}

describe('two sibling resellers', needs('chromium'), () => {
  it('each sees only its own subtree on every page of its console, even with the other\'s IDs in the address', async () => {
    const page = await h.open(h.context);
    page.setDefaultTimeout(15_000);
    const answers = recordAnswers(page);
    await signIn(page, alpha.key);
    const nav = page.getByRole('navigation', { name: 'Console sections' });
    await nav.waitFor();
    const tabs = await nav.getByRole('link').evaluateAll((links) => links.map((l) => l.getAttribute('href') ?? ''));
    // Every page of the account console, Accounts among them (a reseller manages its customers).
    expect(tabs.length).toBeGreaterThanOrEqual(5);
    expect(tabs).toContain('#/accounts');

    const seen: Record<string, string> = {};
    for (const hash of tabs) {
      await page.evaluate((h) => { location.hash = h; }, hash);
      await page.locator('main.content h1').first().waitFor();
      await settle(page);
      seen[hash] = await page.locator('body').innerText();
      expect(leaks(seen[hash]), `${hash} shows the sibling's`).toEqual([]);
    }
    // The pages did show the caller's own subtree, so the absence above means something.
    expect(seen['#/accounts']).toContain('Alpha Customer');
    expect(Object.values(seen).some((t) => t.includes('Alpha maintenance window'))).toBe(true);

    // The sibling's IDs typed into the address: the console shows its own pages, nothing of theirs.
    for (const hash of [`#/accounts/${beta.id}`, `#/accounts?id=${betaCustomer.id}`, `#/requests?user=${beta.id}`, `#/usage?user=${betaCustomer.id}`]) {
      await page.evaluate((h) => { location.hash = h; }, hash);
      await page.locator('main.content h1').first().waitFor();
      await settle(page);
      expect(leaks(await page.locator('body').innerText()), hash).toEqual([]);
    }
    // The same IDs asked of the API with the reseller's key: refused, not answered.
    for (const path of [`/x-users/${beta.id}`, `/x-dna/${betaCustomer.id}`, `/dashboard/requests?user=${betaCustomer.id}`, `/x-bill?user=${beta.id}`]) {
      const r = await h.gw.as(alpha.key).get(path);
      expect(r.status, path).toBeGreaterThanOrEqual(400);
      expect(leaks(r.text), path).toEqual([]);
    }

    await settle(page);
    expect(answers.length).toBeGreaterThan(tabs.length);
    expect(answers.flatMap((a) => leaks(a).map((m) => `${m} in ${a.split('\n')[0]}`))).toEqual([]);
    await page.close();
  }, 120_000);
});
