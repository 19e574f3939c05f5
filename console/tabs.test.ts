import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createAccount, rootAccount, usageOf } from '../server/testing/accounts';
import { ConsoleHarness, openTab, screenshots } from './test-support';
import { needs } from '../server/testing/requirements';

/**
 * Every tab of the Owner console doing its main job in a real browser against a real gateway,
 * signed in as Root; then where the key travelled meanwhile. Sign-in and sign-out are in
 * session.test.ts.
 */
const h = new ConsoleHarness();
let page: Page;
/** A subaccount to aim news at. */
let subaccountKey: string;
/** A syntactically PEM-shaped private key (the gateway stores it encrypted and never returns it). */
const PEM = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----';

const stat = (id: string) => page.locator(`[data-testid=${id}] .stat-value`);

beforeAll(async () => {
  await h.start();
  const created = await h.gw.root.post('/x-users', { Name: 'console-user', Email: 'console-user@example.test', CreditGranted: 50 });
  expect(created.status).toBe(201);
  subaccountKey = created.body.User.SecretKey;
  page = await h.openAsRoot(h.context);
}, 180_000);
afterAll(() => h.close());

describe('AI API examples', needs('chromium'), () => {
  it('shows OpenAI- and Anthropic-format snippets with this server\'s base URL', async () => {
    const openai = page.locator('[data-testid=snippet-openai] pre');
    expect(await openai.textContent()).toContain(`${h.gw.url}/v1/chat/completions`);
    await page.locator('[data-testid=snippet-openai]').getByRole('tab', { name: 'Python' }).click();
    expect(await openai.textContent()).toContain(`base_url="${h.gw.url}/v1"`);
    await page.locator('#openai-model').fill('gpt-4.1');
    expect(await openai.textContent()).toContain('model="gpt-4.1"');
    const anthropic = page.locator('[data-testid=snippet-anthropic] pre');
    expect(await anthropic.textContent()).toContain(`${h.gw.url}/v1/messages`);
    await page.locator('[data-testid=snippet-anthropic]').getByRole('tab', { name: 'Node.js' }).click();
    expect(await anthropic.textContent()).toContain(`baseURL: '${h.gw.url}'`);
    // The Owner's own key is never put into a snippet.
    expect(await page.locator('main').textContent()).not.toContain(h.gw.rootKey);
    await h.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.gw.url });
    await page.locator('[data-testid=snippet-anthropic]').getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toContain('@anthropic-ai/sdk');
    // The routes beyond chat have theirs: images, audio, speech, realtime over WebSocket, rerank.
    for (const id of ['images', 'transcription', 'speech', 'realtime', 'rerank']) await page.locator(`[data-testid=snippet-${id}]`).waitFor();
    expect(await page.locator('[data-testid=snippet-realtime] pre').textContent()).toContain(`${h.gw.url.replace('http', 'ws')}/v1/realtime?model=gpt-realtime`);
    expect(await page.locator('[data-testid=snippet-transcription] pre').textContent()).toContain('-F file=@speech.mp3');
    // The coding agents, two lines of environment each (the README's quick start, step 7).
    const agents = page.locator('[data-testid=snippet-agents] pre');
    expect(await agents.textContent()).toContain(`export ANTHROPIC_BASE_URL=${h.gw.url}\nexport ANTHROPIC_API_KEY=$SWITCHYARD_API_KEY\nclaude -p`);
    await page.locator('[data-testid=snippet-agents]').getByRole('tab', { name: 'Codex CLI' }).click();
    expect(await agents.textContent()).toContain(`base_url="${h.gw.url}/v1",env_key="OPENAI_API_KEY"`);
    await page.locator('[data-testid=snippet-agents]').getByRole('tab', { name: 'Gemini CLI' }).click();
    expect(await agents.textContent()).toContain(`export GOOGLE_GEMINI_BASE_URL=${h.gw.url}\nexport GEMINI_API_KEY=$SWITCHYARD_API_KEY\ngemini --skip-trust`);
    // Gemini's own format: curl, and Google's SDK with the gateway as its base URL.
    const gemini = page.locator('[data-testid=snippet-gemini] pre');
    expect(await gemini.textContent()).toContain(`${h.gw.url}/v1beta/models/gemini-2.5-flash:generateContent`);
    await page.locator('[data-testid=snippet-gemini]').getByRole('tab', { name: 'Node.js' }).click();
    expect(await gemini.textContent()).toContain(`new GoogleGenAI({ apiKey: process.env.SWITCHYARD_API_KEY, httpOptions: { baseUrl: '${h.gw.url}' } })`);
    // The Owner's call that adds a Bedrock or a Gemini key.
    const keys = page.locator('[data-testid=snippet-provider-keys] pre');
    expect(await keys.textContent()).toContain(`${h.gw.url}/x-keys -H "Authorization: Bearer $SWITCHYARD_OWNER_KEY"`);
    expect(await keys.textContent()).toContain('"provider_type":"bedrock","region":"us-east-1"');
    await page.locator('[data-testid=snippet-provider-keys]').getByRole('tab', { name: 'Gemini API' }).click();
    expect(await keys.textContent()).toContain('"config":{"provider_type":"gemini"}');
    expect(await page.locator('main').textContent()).not.toContain(h.gw.rootKey);
    await screenshots(page, 'tab-examples');
  });
});

describe('providers', needs('chromium'), () => {
  it('adds a standard key, shows the automatic LEVEL_MAPPER entry, and updates the stat cards', async () => {
    await openTab(page, 'Providers');
    await page.getByText('No provider keys yet').waitFor();
    expect(await stat('stat-keys').textContent()).toBe('0');
    await page.getByRole('button', { name: 'Add provider key' }).click();
    await page.locator('#pk-name').fill('openai-main');
    await page.locator('#pk-level').fill('1');
    await page.locator('#pk-provider').fill('https://api.openai.com');
    // Client-side checks first: nothing is sent with a short secret.
    await page.locator('#pk-secret').fill('too-short');
    await page.getByRole('button', { name: 'Add key', exact: true }).click();
    await page.getByText('at least 20 characters').waitFor();
    expect((await h.gw.root.get('/x-keys')).body).toEqual([]);

    await page.locator('#pk-secret').fill('sk-proj-console-test-0123456789abcdef');
    await page.getByRole('button', { name: 'Add key', exact: true }).click();
    await expect.poll(() => page.locator('[data-testid=level-mapper-entry]').textContent()).toBe('gpt-*=1');
    await expect.poll(() => stat('stat-keys').textContent()).toBe('1');
    expect(await stat('stat-levels').textContent()).toBe('1');
    expect(await stat('stat-active').textContent()).toBe('1');
    const [key] = (await h.gw.root.get('/x-keys')).body;
    expect(key).toMatchObject({ Name: 'openai-main', Level: 1, Provider: 'https://api.openai.com', Status: true, config: { provider_type: 'standard' } });
    expect(await page.locator('main').textContent()).not.toContain('sk-proj-console-test');
  });

  it('adds a cloud-hosted key with its deployments at another Level', async () => {
    await page.getByRole('button', { name: 'Add provider key' }).click();
    await page.locator('#pk-name').fill('azure-east');
    await page.locator('#pk-level').fill('3');
    await page.locator('#pk-provider').fill('https://east.openai.azure.com');
    await page.locator('#pk-secret').fill('azure-secret-0123456789-abcdefgh');
    await page.locator('#pk-kind').selectOption('azure');
    await page.getByLabel('Model 1').first().fill('gpt-4o');
    await page.getByLabel('Deployment 1').fill('gpt4o-prod');
    await screenshots(page, 'tab-providers-form');
    await page.getByRole('button', { name: 'Add key', exact: true }).click();
    await expect.poll(() => stat('stat-levels').textContent()).toBe('2');
    expect(await stat('stat-keys').textContent()).toBe('2');
    expect(await page.locator('[data-testid=level-3]').textContent()).toContain('azure-east');
    const keys = (await h.gw.root.get('/x-keys?level=3')).body;
    expect(keys[0].config).toEqual({ provider_type: 'azure', deployments: { 'gpt-4o': 'gpt4o-prod' } });
  });

  it('adds a cloud-platform key; its private key is write-only', async () => {
    await page.getByRole('button', { name: 'Add provider key' }).click();
    await page.locator('#pk-name').fill('vertex-eu');
    await page.locator('#pk-level').fill('2');
    await page.locator('#pk-provider').fill('https://europe-west4-aiplatform.googleapis.com');
    await page.locator('#pk-secret').fill('vertex-secret-0123456789-abcdefgh');
    await page.locator('#pk-kind').selectOption('vertex');
    await page.locator('#pk-base-url').fill('https://europe-west4-aiplatform.googleapis.com');
    await page.locator('#pk-project').fill('acme-ai');
    await page.locator('#pk-client-email').fill('gateway@acme-ai.iam.gserviceaccount.com');
    await page.getByRole('button', { name: 'Add key', exact: true }).click();
    await page.getByText('Paste the PEM private key').waitFor();
    await page.locator('#pk-private-key').fill(PEM);
    await page.getByRole('button', { name: 'Add key', exact: true }).click();
    await expect.poll(() => stat('stat-levels').textContent()).toBe('3');
    const [vertex] = (await h.gw.root.get('/x-keys?level=2')).body;
    expect(vertex.config).toEqual({
      provider_type: 'vertex', base_url: 'https://europe-west4-aiplatform.googleapis.com', project_id: 'acme-ai',
      client_email: 'gateway@acme-ai.iam.gserviceaccount.com', private_key_set: true,
    });
    // Editing keeps the stored private key when the field is left empty.
    await page.locator('[data-testid=level-2] tr', { hasText: 'vertex-eu' }).getByRole('button', { name: 'Edit' }).click();
    expect(await page.locator('#pk-kind').inputValue()).toBe('vertex');
    expect(await page.locator('#pk-project').inputValue()).toBe('acme-ai');
    expect(await page.locator('#pk-private-key').inputValue()).toBe('');
    await page.locator('#pk-project').fill('acme-ai-prod');
    expect(await page.locator('#pk-publisher').inputValue()).toBe('google');
    await page.locator('#pk-publisher').selectOption('anthropic');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved key vertex-eu').waitFor();
    expect((await h.gw.root.get('/x-keys?level=2')).body[0].config).toMatchObject({ project_id: 'acme-ai-prod', publisher: 'anthropic', private_key_set: true });
    expect(await page.content()).not.toContain('MIIEvQIBADANBgkqhkiG9w0BAQEFAASC');
  });

  it('disables and enables a key', async () => {
    const row = page.locator('[data-testid=level-1] tr', { hasText: 'openai-main' });
    await row.getByRole('button', { name: 'Disable' }).click();
    await expect.poll(() => stat('stat-active').textContent()).toBe('2');
    expect(await row.textContent()).toContain('Disabled');
    expect((await h.gw.root.get('/x-keys?level=1')).body[0].Status).toBe(false);
    await row.getByRole('button', { name: 'Enable' }).click();
    await expect.poll(() => stat('stat-active').textContent()).toBe('3');
    expect((await h.gw.root.get('/x-keys?level=1')).body[0].Status).toBe(true);
  });

  it('edits a key (moving it to another Level) and deletes one after confirmation', async () => {
    const row = page.locator('[data-testid=level-3] tr', { hasText: 'azure-east' });
    await row.getByRole('button', { name: 'Edit' }).click();
    expect(await page.locator('#pk-secret').inputValue()).toBe('');
    await page.locator('#pk-level').fill('1');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => stat('stat-levels').textContent()).toBe('2');
    expect(await page.locator('[data-testid=level-1]').textContent()).toContain('azure-east');
    const moved = (await h.gw.root.get('/x-keys?level=1')).body.find((k: { Name: string }) => k.Name === 'azure-east');
    expect(moved.config.deployments).toEqual({ 'gpt-4o': 'gpt4o-prod' });

    const azureRow = page.locator('[data-testid=level-1] tr', { hasText: 'azure-east' });
    await azureRow.getByRole('button', { name: 'Delete' }).click();
    await azureRow.getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => stat('stat-keys').textContent()).toBe('2');
    expect((await h.gw.root.get('/x-keys')).body.map((k: { Name: string }) => k.Name)).toEqual(['openai-main', 'vertex-eu']);
    await screenshots(page, 'tab-providers');
  });

  it('adds an Anthropic-format key, then makes it a chat-only standard key', async () => {
    await page.getByRole('button', { name: 'Add provider key' }).click();
    await page.locator('#pk-name').fill('claude-direct');
    await page.locator('#pk-level').fill('2');
    await page.locator('#pk-provider').fill('https://llm.example.com');
    await page.locator('#pk-secret').fill('anthropic-secret-0123456789-abcd');
    await page.locator('#pk-kind').selectOption('anthropic');
    await page.getByRole('button', { name: 'Add key', exact: true }).click();
    const row = page.locator('[data-testid=level-2] tr', { hasText: 'claude-direct' });
    await row.waitFor();
    expect(await row.locator('[data-label=Kind]').textContent()).toBe('Anthropic');
    const find = async () => (await h.gw.root.get('/x-keys?level=2')).body.find((k: { Name: string }) => k.Name === 'claude-direct');
    expect((await find()).config).toEqual({ provider_type: 'anthropic' });
    await row.getByRole('button', { name: 'Edit' }).click();
    await page.locator('#pk-kind').selectOption('standard');
    await page.locator('#pk-chat-only').check();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved key claude-direct').waitFor();
    expect((await find()).config).toEqual({ provider_type: 'standard', responses: false });
    await row.getByRole('button', { name: 'Edit' }).click();
    expect(await page.locator('#pk-chat-only').isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => stat('stat-keys').textContent()).toBe('2');
  });

  it('shows a failed load with a retry', async () => {
    await page.route('**/trpc/keys.list**', (route) => route.fulfill({
      status: 503, contentType: 'application/json',
      body: JSON.stringify([{ error: { message: 'Service unavailable', code: -32603, data: { code: 'SERVICE_UNAVAILABLE', httpStatus: 503 } } }]),
    }));
    await openTab(page, 'Operation log');
    await openTab(page, 'Providers');
    const alert = page.locator('main [role=alert]');
    await expect.poll(() => alert.textContent()).toContain('The server failed (503)');
    await page.unroute('**/trpc/keys.list**');
    await alert.getByRole('button', { name: 'Retry' }).click();
    await page.locator('[data-testid=level-1]').waitFor();
    expect(await alert.count()).toBe(0);
  });
});

describe('system configuration', needs('chromium'), () => {
  const configPuts: string[] = [];

  it('saves a configuration value', async () => {
    page.on('request', (r) => { if (r.url().includes('/trpc/config.put')) configPuts.push(r.postData() ?? ''); });
    await openTab(page, 'System configuration');
    await page.locator('#cfg-MODEL_MAPPER').fill('gpt-3.5*=gpt-4o-mini');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved MODEL_MAPPER.').waitFor();
    expect((await h.gw.root.get('/x-config')).body.configs.MODEL_MAPPER).toBe('gpt-3.5*=gpt-4o-mini');
    // The write-only password was left empty, so it was not sent.
    expect(configPuts).toHaveLength(1);
    expect(configPuts[0]).not.toContain('EMAIL_PASS');
  });

  it('shows JSON syntax errors and the server\'s PRICING error next to the field, writing nothing', async () => {
    const pricing = page.locator('#cfg-PRICING');
    await pricing.fill('{"ChatPricing": ');
    await page.locator('#cfg-PRICING-error').getByText('Invalid JSON').waitFor();
    expect(await page.getByRole('button', { name: 'Save changes' }).isDisabled()).toBe(true);

    await pricing.fill('{"NoSuchSection": {"gpt-4o": {"InputText": 1}}}');
    expect(await page.locator('#cfg-PRICING-error').count()).toBe(0);
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.locator('#cfg-PRICING-error').textContent()).toContain('PRICING');
    expect(await page.locator('#cfg-PRICING-error').textContent()).toContain('NoSuchSection');
    expect((await h.gw.root.get('/x-config')).body.configs.PRICING).toBe('');
    await screenshots(page, 'tab-config-error');

    await pricing.fill('');
    expect(await page.locator('#cfg-PRICING-error').count()).toBe(0);
  });

  it('sends EMAIL_PASS only when it is filled, and never shows it', async () => {
    configPuts.length = 0;
    await page.locator('#cfg-EMAIL_SMTP').fill('smtp.example.com');
    await page.locator('#cfg-EMAIL_PASS').fill('mail-password-123');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved EMAIL_SMTP, EMAIL_PASS.').waitFor();
    expect(JSON.parse(configPuts[0])).toMatchObject({ 0: { EMAIL_SMTP: 'smtp.example.com', EMAIL_PASS: 'mail-password-123' } });
    await expect.poll(() => page.locator('#cfg-EMAIL_PASS').inputValue()).toBe('');
    expect(await page.locator('main').innerHTML()).not.toContain('mail-password-123');
    expect((await h.gw.root.get('/x-config')).body.configs.EMAIL_SMTP).toBe('smtp.example.com');
    await screenshots(page, 'tab-config');
  });
});

describe('broadcast news', needs('chromium'), () => {
  it('counts title and content as they are typed and refuses too long a message', async () => {
    await openTab(page, 'Broadcast news');
    await page.locator('#news-title').fill('Maintenance');
    expect(await page.locator('#news-title-count').textContent()).toBe('11 / 100');
    await page.locator('#news-content').fill('x'.repeat(1001));
    expect(await page.locator('#news-content-count').textContent()).toBe('1001 / 1000');
    expect(await page.locator('#news-content-count.counter-over').count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Send news' }).isDisabled()).toBe(true);
  });

  it('sends system-wide news', async () => {
    await page.getByLabel('System-wide').check();
    await page.locator('#news-content').fill('The gateway restarts at 22:00 UTC.');
    await page.locator('#news-days').fill('3');
    await page.getByRole('button', { name: 'Send news' }).click();
    await page.getByText('News sent to everyone').waitFor();
    await page.locator('.news-list').getByText('Maintenance').waitFor();
    const feed = (await h.gw.as(subaccountKey).get('/dashboard/news')).body;
    expect(feed.sys_news).toHaveLength(1);
    expect(feed.sys_news[0]).toMatchObject({ title: 'Maintenance', content: 'The gateway restarts at 22:00 UTC.' });
    const days = (Date.parse(feed.sys_news[0].expires_at) - Date.parse(feed.sys_news[0].created_at)) / 86_400_000;
    expect(days).toBeCloseTo(3, 1);
  });

  it('sends news targeted at one account by username', async () => {
    await page.getByLabel('One account or a subtree').check();
    await page.locator('#news-target').fill('console-user');
    await page.locator('#news-title').fill('Your quota');
    await page.locator('#news-content').fill('Your monthly quota was raised.');
    await page.getByRole('button', { name: 'Send news' }).click();
    await page.getByText(/News sent to account #\d+/).waitFor();
    const feed = (await h.gw.as(subaccountKey).get('/dashboard/news')).body;
    expect(feed.user_news.map((n: { title: string }) => n.title)).toEqual(['Your quota']);

    // An unknown target: the server's answer is shown, nothing is sent.
    await page.locator('#news-target').fill('nobody-here');
    await page.locator('#news-title').fill('Lost');
    await page.locator('#news-content').fill('Nobody reads this.');
    await page.getByRole('button', { name: 'Send news' }).click();
    await expect.poll(() => page.locator('#news-target-error').textContent()).toContain('nobody-here');
    await screenshots(page, 'tab-news');
  });
});

describe('operation log', needs('chromium'), () => {
  it('pages through the log 24 entries at a time and refreshes on entering the tab', async () => {
    for (let i = 0; i < 26; i++) expect((await h.gw.root.put('/x-config', { SWITCH_OVER: `1=${i + 2}` })).status).toBe(200);
    const total = (await h.gw.root.get('/dashboard/logs?size=1')).body.total as number;
    expect(total).toBeGreaterThan(24);
    await openTab(page, 'Operation log');
    const rows = page.locator('[data-testid=log-table] tbody tr');
    await expect.poll(() => rows.count()).toBe(24);
    const pages = Math.ceil(total / 24);
    expect(await page.getByTestId('pager-status').textContent()).toContain(`Page 1 of ${pages} · ${total} entries`);
    expect(await rows.first().textContent()).toContain('update_config');
    await screenshots(page, 'tab-logs');

    await page.getByRole('button', { name: 'Next' }).click();
    await expect.poll(() => page.getByTestId('pager-status').textContent()).toContain('Page 2 of');
    await expect.poll(() => rows.count()).toBe(Math.min(24, total - 24));

    await h.gw.root.put('/x-config', { SWITCH_OVER: '1=2' });
    await openTab(page, 'Providers');
    await openTab(page, 'Operation log');
    await expect.poll(() => page.getByTestId('pager-status').textContent()).toContain(`Page 1 of ${Math.ceil((total + 1) / 24)} · ${total + 1} entries`);
  });
});

describe('usage', needs('chromium'), () => {
  it('charts the last 30 days of the Owner and its subaccounts', async () => {
    const user = await createAccount(h.gw, rootAccount(h.gw), { Name: 'charting-user', Email: 'charting-user@example.test' });
    const day = 86_400_000;
    for (let d = 0; d < 12; d++) {
      h.gw.gateway.usage.record(usageOf(rootAccount(h.gw), { model: 'gpt-4o', creditUsed: 0.05, at: new Date(Date.now() - d * day) }));
      h.gw.gateway.usage.record(usageOf(user, { model: 'claude-sonnet-4-5', creditUsed: 0.02, at: new Date(Date.now() - d * 2 * day) }));
    }
    await h.gw.gateway.usage.flush();
    await openTab(page, 'Usage');
    await expect.poll(() => page.locator('[data-testid=usage-requests] .stat-value').textContent()).toBe('24');
    // 30 days in each of the two uPlot charts, read from the table beside each canvas.
    expect(await page.locator('[data-testid=chart-requests] .sr-only table tbody tr').count()).toBe(30);
    expect(await page.locator('[data-testid=chart-credit] .sr-only table tbody tr').count()).toBe(30);
    expect(await page.locator('[data-testid=chart-requests] canvas').count()).toBeGreaterThan(0);
    expect(await page.locator('.share-bars').textContent()).toContain('gpt-4o');
    expect(await page.locator('main').textContent()).toContain('charting-user');
    await page.getByRole('tab', { name: 'Subaccounts' }).click();
    await expect.poll(() => page.locator('[data-testid=usage-requests] .stat-value').textContent()).toBe('12');
    await page.getByRole('tab', { name: 'Everything' }).click();
    await screenshots(page, 'tab-usage');
  });
});

describe('request lines', needs('chromium'), () => {
  it('kept each /trpc request line within one TCP segment (console/src/api.ts, maxURLLength)', () => {
    const calls = h.requests.filter((r) => r.url().startsWith(`${h.gw.url}/trpc/`));
    expect(calls.length).toBeGreaterThan(10);
    for (const r of calls) expect(r.url().length - h.gw.url.length, r.url().slice(0, 120)).toBeLessThanOrEqual(1200);
  });
});

describe('the key', needs('chromium'), () => {
  it('sent the key only in the Authorization header of same-origin /trpc calls', async () => {
    expect(h.requests.length).toBeGreaterThan(10);
    for (const r of h.requests) {
      expect(r.url()).not.toContain(h.gw.rootKey);
      expect(r.postData() ?? '').not.toContain(h.gw.rootKey);
      const auth = (await r.allHeaders()).authorization;
      if (auth) {
        expect(r.url().startsWith(`${h.gw.url}/trpc/`)).toBe(true);
      }
    }
  });
});
