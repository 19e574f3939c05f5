import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { startMockUpstream, type MockUpstream } from '../server/testing/mock-upstream';
import { ConsoleHarness, openTab, screenshots, signIn } from './test-support';
import { needs } from '../server/testing/requirements';

/**
 * The signed-in Owner rotates its own key from the console: asked first, the new key shown once
 * and copied, the old key refused by the AI proxy at once, and the console still signed in with
 * the new key (no 401 from a call still carrying the old one signs it out).
 */
const h = new ConsoleHarness();
let mock: MockUpstream;
let ctx: BrowserContext;
let page: Page;

const chat = (key: string) => fetch(`${h.gw.url}/v1/chat/completions`, {
  method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
});

beforeAll(async () => {
  await h.start();
  mock = await startMockUpstream();
  const r = await h.gw.root.post('/x-keys', { Name: 'main', Level: 1, Provider: mock.url, SecretKey: 'sk-console-rotate-0123456789', Status: true });
  expect(r.status).toBe(201);
  ctx = await h.browser.newContext({ viewport: { width: 1280, height: 900 } });
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.gw.url });
  page = await h.open(ctx, '#/accounts');
  page.setDefaultTimeout(10_000);
  await signIn(page, h.gw.rootKey);
  await page.getByRole('heading', { name: 'Accounts' }).waitFor();
}, 180_000);
afterAll(async () => {
  await h.close();
  await mock?.close();
});

describe('rotate my key', needs('chromium'), () => {
  it('asks first, and keeping the key changes nothing', async () => {
    expect((await chat(h.gw.rootKey)).status).toBe(200);
    await page.getByRole('button', { name: 'Rotate my key' }).click();
    const panel = page.locator('[data-testid=rotate-self]');
    await panel.getByText('The old key stops working at once').waitFor();
    await screenshots(page, 'rotate-self-confirm');
    await page.screenshot({ path: '/tmp/rotate-self-confirm.png', fullPage: true });
    await panel.getByRole('button', { name: 'Keep my key' }).click();
    await expect.poll(() => panel.count()).toBe(0);
    expect((await chat(h.gw.rootKey)).status).toBe(200);
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([h.gw.rootKey]);
  });

  it('rotates, shows the new key once with a copy button, and keeps the console signed in with it', async () => {
    const oldKey = h.gw.rootKey;
    await page.getByRole('button', { name: 'Rotate my key' }).click();
    const panel = page.locator('[data-testid=rotate-self]');
    await panel.getByRole('button', { name: 'Rotate now' }).click();
    const shown = panel.locator('[data-testid=new-key]');
    await shown.waitFor();
    const newKey = (await shown.locator('[data-testid=new-key-value]').textContent())!;
    expect(newKey).toMatch(/^sk-Xvs[A-Za-z0-9]{45}$/);
    expect(newKey).not.toBe(oldKey);
    await shown.getByRole('button', { name: 'Copy key' }).click();
    await expect.poll(() => shown.getByRole('button', { name: 'Copied' }).count()).toBe(1);
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(newKey);
    await page.screenshot({ path: '/tmp/rotate-self-done.png', fullPage: true });
    await screenshots(page, 'rotate-self-done');

    // The old key is refused by the proxy at once; the copied one works.
    const refused = await chat(oldKey);
    expect(refused.status).toBe(401);
    expect(await refused.text()).not.toContain(oldKey);
    expect((await chat(copied)).status).toBe(200);

    // The console switched its session to the new key and keeps working, across tabs and a reload.
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([newKey]);
    await panel.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => panel.count()).toBe(0);
    await openTab(page, 'Providers');
    // The provider key list loads only with a key the server accepts.
    await page.locator('[data-testid^=key-row-]').first().waitFor();
    await openTab(page, 'Accounts');
    await page.reload();
    await page.getByRole('heading', { name: 'Accounts' }).waitFor();
    expect(await page.locator('#api-key').count()).toBe(0);
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([newKey]);
    // Every admin call after the rotation carried the new key; none the old one.
    // Those sent after the rotation itself: tRPC batches calls, so a fixed count could reach back before it.
    const rotation = h.requests.findLastIndex((r) => r.url().includes('rotateSelf'));
    expect(rotation).toBeGreaterThanOrEqual(0);
    const later = h.requests.slice(rotation + 1).filter((r) => r.url().includes('/trpc/'));
    expect(later.length).toBeGreaterThan(0);
    for (const r of later) expect(r.headers().authorization).toBe(`Bearer ${newKey}`);
  });
});
