import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import OpenAI, { toFile } from 'openai';
import { startMockUpstream, type MockUpstream } from '../server/testing/mock-upstream';
import { AUDIO_BYTES_PER_SECOND } from '../server/testing/mock-upstream/uploads';
import { fileBytes } from '../server/testing/multipart';
import { ConsoleHarness, openTab, screenshots } from './test-support';
import { needs } from '../server/testing/requirements';

/**
 * The Requests tab shows what each call used: tokens for a chat call, the route's own units
 * (images, seconds of audio, calls) for the calls billed by them, as the request log returns them.
 */
const h = new ConsoleHarness();
let mock: MockUpstream;
let page: Page;
let accountId = 0;

beforeAll(async () => {
  await h.start();
  mock = await startMockUpstream();
  expect((await h.gw.root.post('/x-keys', { Name: 'main', Level: 1, Provider: mock.url, SecretKey: 'sk-console-requests-0123456789', Status: true })).status).toBe(201);
  const created = await h.gw.root.post('/x-users', { Name: `units${process.pid}`, Email: `units${process.pid}@example.test`, CreditGranted: 20 });
  expect(created.status).toBe(201);
  accountId = created.body.User.ID;
  const client = new OpenAI({ apiKey: created.body.User.SecretKey, baseURL: `${h.gw.url}/v1`, maxRetries: 0 });
  await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
  await client.images.generate({ model: 'dall-e-3', prompt: 'a lighthouse', n: 2, size: '1024x1024', quality: 'standard' });
  await client.audio.transcriptions.create({ file: await toFile(fileBytes(12 * AUDIO_BYTES_PER_SECOND), 'talk.mp3', { type: 'audio/mpeg' }), model: 'whisper-1' });
  await h.gw.gateway.usage.flush();
  page = await h.openAsRoot(h.context);
  page.setDefaultTimeout(10_000);
}, 180_000);
afterAll(async () => {
  await h.close();
  await mock?.close();
});

describe('the Requests tab', needs('chromium'), () => {
  it('shows the units of the calls billed by their own unit, and none for a call billed by tokens', async () => {
    await openTab(page, 'Requests');
    await page.locator('#rq-user').selectOption(String(accountId));
    await page.getByRole('button', { name: 'Show' }).click();
    const rows = page.locator('[data-testid=requests-table] tbody tr');
    await expect.poll(() => rows.count()).toBe(3);
    const cells = async (label: string) => rows.locator(`td[data-label="${label}"]`).allTextContents();
    // Newest first.
    expect(await cells('Model')).toEqual(['whisper-1', 'dall-e-3', 'gpt-4o-mini']);
    expect(await cells('Units')).toEqual(['12 s of audio, 1 call', '2 images', '–']);
    // Each call's Level, and the kind of key that served it (an OpenAI-compatible one here).
    expect(await cells('Level, key kind')).toEqual(['1OpenAI-compatible', '1OpenAI-compatible', '1OpenAI-compatible']);
    expect(await page.locator('[data-testid=requests-table] thead th').allTextContents()).toContain('Units');
    await screenshots(page, 'tab-requests-units');
  });
});
