import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secret } from '../test-fixture';
import { until } from '../../testing/until';
import { hello, leaks, startFaults, type Faults } from './test-support';

/**
 * Nothing served for free: a model no price table knows is refused (UNPRICED_MODEL_POLICY
 * `refuse`, the default) or billed at the Owner's fallback price (`bill:<in>,<out>`), and the
 * requested unpriced models are listed for the Owner in `/x-conf`.
 */
let x: Faults;
let upstream: string;
beforeAll(async () => {
  x = await startFaults();
  upstream = secret('unpriced');
  await x.addKey(1, upstream);
}, 60_000);
afterAll(() => x?.close());

const conf = async () => (await x.f.gw.root.get('/x-conf')).body;
/** The Owner's list of unpriced models, once it names `models` (the proxy notes them in the background). */
const unpricedListed = async (...models: string[]) => {
  let listed: string[] = [];
  await until(async () => {
    listed = (await conf()).UnpricedModels.map((m: any) => m.Model);
    return models.every((m) => listed.includes(m));
  }).catch(() => undefined);
  return listed;
};

describe('fault suite: models without a price', () => {
  it('by default an unpriced model is refused with 403 model_not_priced in both envelopes, never reaches a provider, never billed, and is listed for the Owner', async () => {
    const user = await x.f.account({ level: 1 });
    const from = x.f.mock.requests.length;
    const err: any = await x.openai(user.key).chat.completions.create({ model: 'house-model-7', messages: hello }).catch((e) => e);
    expect(err.status).toBe(403);
    expect(err.error).toMatchObject({ code: 'model_not_priced', type: 'permission_error', request_id: err.headers.get('x-request-id') });
    expect(err.message).toContain('house-model-7');
    const anthropic: any = await x.anthropic(user.key).messages.create({ model: 'house-claude-1', max_tokens: 16, messages: hello }).catch((e) => e);
    expect(anthropic.status).toBe(403);
    expect(anthropic.error).toMatchObject({ type: 'error', error: { type: 'permission_error', code: 'model_not_priced' } });
    expect(x.f.mock.requests.length - from).toBe(0);
    expect(await x.f.usage(user.id)).toEqual([]);
    expect((await unpricedListed('house-claude-1', 'house-model-7')).sort()).toEqual(['house-claude-1', 'house-model-7']);
    const view = await conf();
    expect(view.UnpricedModelPolicy).toEqual({ Policy: 'refuse', InputText: null, OutputText: null });
    expect(view.UnpricedModels.map((m: any) => m.Model).sort()).toEqual(['house-claude-1', 'house-model-7']);
    for (const m of view.UnpricedModels) expect(Date.parse(m.LastAt)).toBeGreaterThanOrEqual(Date.parse(m.FirstAt));
    expect(x.logged('unpriced_model_requested').map((l) => l.model).sort()).toEqual(['house-claude-1', 'house-model-7']);
  });

  it('Root and Owners, never charged for their own calls, are served an unpriced model under refuse', async () => {
    const r = await x.post(x.f.gw.rootKey, '/v1/chat/completions', { model: 'root-only-model', messages: hello });
    expect(r.status).toBe(200);
    expect(await unpricedListed('root-only-model')).toContain('root-only-model');
  });

  it('a MODEL_FAILOVER fallback without a price is not tried under refuse', async () => {
    await x.f.config({ MODEL_FAILOVER: 'gpt-4.1=house-fallback' });
    x.f.mock.behave(upstream, { status: 503, onlyModels: ['gpt-4.1'] });
    try {
      const user = await x.f.account({ level: 1 });
      const from = x.f.mock.requests.length;
      const r = await x.post(user.key, '/v1/chat/completions', { model: 'gpt-4.1', messages: hello });
      expect(r.status).toBe(502);
      expect(x.f.mock.requests.slice(from).map((q) => (q.body as { model: string }).model)).toEqual(['gpt-4.1']);
    } finally {
      x.f.mock.behave(upstream, {});
      await x.f.config({ MODEL_FAILOVER: '' });
    }
  });

  it('an invalid policy is a 400 naming the field, on /x-config and /x-conf; a free fallback is refused too', async () => {
    const put = await x.f.gw.root.put('/x-config', { UNPRICED_MODEL_POLICY: 'free' });
    expect(put.status).toBe(400);
    expect(put.body.error).toMatchObject({ code: 'invalid_config_value', message: expect.stringContaining('UNPRICED_MODEL_POLICY') });
    const batch = await x.f.gw.root.post('/x-conf', { UnpricedModelPolicy: 'bill:0,0' });
    expect(batch.status).toBe(400);
    expect(batch.body.error.message).toMatch(/^UnpricedModelPolicy: .*for free/);
  });

  it('with UnpricedModelPolicy bill:10,30 an unpriced model is served and billed at that fallback (reserved at it too); a priced model keeps its own price; refuse restores the default', async () => {
    const set = await x.f.gw.root.post('/x-conf', { UnpricedModelPolicy: 'bill:10,30' });
    expect(set.status).toBe(200);
    expect((await x.f.gw.root.get('/x-config')).body.configs.UNPRICED_MODEL_POLICY).toBe('bill:10,30');
    expect((await conf()).UnpricedModelPolicy).toEqual({ Policy: 'bill', InputText: 10, OutputText: 30 });
    const user = await x.f.account({ level: 1 });
    const r = await x.openai(user.key).chat.completions.create({ model: 'house-model-7', messages: hello });
    const priced = await x.openai(user.key).chat.completions.create({ model: 'gpt-4o', messages: hello });
    const rows = await x.f.usage(user.id);
    expect(rows.map((row) => row.model)).toEqual(['house-model-7', 'gpt-4o']);
    expect(rows[0].credit_used).toBeCloseTo((r.usage!.prompt_tokens * 10 + r.usage!.completion_tokens * 30) / 1e6, 12);
    expect(rows[1].credit_used).toBeCloseTo((priced.usage!.prompt_tokens * 2.5 + priced.usage!.completion_tokens * 10) / 1e6, 12);
    // The reservation uses the fallback as well: DEFAULT_OUTPUT_LIMIT's 131,072 output tokens at 30 USD/M (3.93) is more than this account holds.
    const poor = await x.f.account({ level: 1, credit: 2.1 });
    const refused = await x.post(poor.key, '/v1/chat/completions', { model: 'house-model-7', messages: hello });
    expect(refused.status).toBe(402);
    expect((await x.post(poor.key, '/v1/chat/completions', { model: 'house-model-7', messages: hello, max_tokens: 10 })).status).toBe(200);

    expect((await x.f.gw.root.post('/x-conf', { UnpricedModelPolicy: 'refuse' })).status).toBe(200);
    expect((await x.f.gw.root.get('/x-config')).body.configs.UNPRICED_MODEL_POLICY).toBe('');
    expect((await x.post(user.key, '/v1/chat/completions', { model: 'house-model-7', messages: hello })).status).toBe(403);
  });

  it('a requested model priced later through PRICING leaves the list', async () => {
    expect((await conf()).UnpricedModels.map((m: any) => m.Model)).toContain('house-model-7');
    await x.f.config({ PRICING: JSON.stringify({ ChatPricing: { 'house-model-7': { InputText: 1, OutputText: 2 } } }) });
    const models = (await conf()).UnpricedModels.map((m: any) => m.Model);
    expect(models).not.toContain('house-model-7');
    expect(models).toContain('house-claude-1');
    const user = await x.f.account({ level: 1 });
    expect((await x.post(user.key, '/v1/chat/completions', { model: 'house-model-7', messages: hello })).status).toBe(200);
  });

  it('no response body of any scenario above names an upstream host, URL, address or SecretKey, or an internal error', async () => {
    await x.settled();
    expect(x.bodies.filter((b) => b.status === 403).length).toBeGreaterThanOrEqual(2);
    expect(leaks(x.bodies, x.needles)).toEqual([]);
  });
});
