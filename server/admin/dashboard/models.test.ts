import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { expectEnvelope } from '../../testing/http';
import { createAccount, rootAccount, type TestAccount } from '../../testing/accounts';
import { cataloguedModelNames } from '../../domain/pricing/catalogue';

let gw: TestGateway;
let ownerB: TestAccount;

beforeAll(async () => {
  gw = await startTestGateway({ tenancy: 'multi' });
  ownerB = await createAccount(gw, rootAccount(gw), { Role: 'owner' });
  const put = await gw.root.put('/x-config', {
    PRICING: JSON.stringify({ ChatPricing: { 'acme-large': { InputText: 1, OutputText: 2 } }, CallPricing: { 'acme-search': { Call: 0.01 } } }),
    MODEL_MAPPER: 'fast=gpt-4o-mini, gpt-3.5*=gpt-4o-mini, house=house-model',
    LEVEL_MAPPER: 'lvl-model=2, claude-*=3',
  });
  expect(put.status).toBe(200);
});
afterAll(async () => { await gw?.close(); });

const ids = (r: { body: { data: { id: string }[] } }) => r.body.data.map((m) => m.id);

describe('GET /dashboard/models, /v1/models, /models', () => {
  it('lists the catalogue\'s models, PRICING models and the exact names of the Owner\'s mappers', async () => {
    const r = await gw.root.get('/dashboard/models');
    expect(r.status).toBe(200);
    expect(r.body.object).toBe('list');
    const list = ids(r);
    for (const m of cataloguedModelNames()) expect(list).toContain(m);
    for (const m of ['gpt-4o-mini', 'claude-sonnet-4-5', 'deepseek-chat', 'llama-3.3-70b-versatile', 'text-embedding-004']) expect(list).toContain(m);
    for (const m of ['acme-large', 'acme-search', 'fast', 'house', 'house-model', 'lvl-model']) expect(list).toContain(m);
    expect(list.some((m) => m.includes('*'))).toBe(false);
    expect(list).toEqual([...list].sort());
    expect(new Set(list).size).toBe(list.length);
    const byId = Object.fromEntries(r.body.data.map((m: any) => [m.id, m]));
    expect(byId['gpt-4o']).toMatchObject({ id: 'gpt-4o', object: 'model', owned_by: 'openai' });
    // The OpenAI shape, and Switchyard's `pricing` beside it (model-prices.test.ts).
    expect(Object.keys(byId['gpt-4o']).sort()).toEqual(['id', 'object', 'owned_by', 'pricing']);
    expect(byId['claude-sonnet-4-5'].owned_by).toBe('anthropic');
    expect(byId['gemini-2.5-pro'].owned_by).toBe('google');
    expect(byId.fast.owned_by).toBe('openai');
    expect(byId['acme-large'].owned_by).toBe('system');
  });

  it('serves the same list on the three paths, with Bearer or x-api-key', async () => {
    const a = await gw.root.get('/dashboard/models');
    expect((await gw.root.get('/v1/models')).body).toEqual(a.body);
    expect((await gw.root.get('/models')).body).toEqual(a.body);
    const viaHeader = await gw.as(null).get('/v1/models', { 'x-api-key': gw.rootKey });
    expect(viaHeader.body).toEqual(a.body);
  });

  it('keeps each tenant\'s configuration to itself', async () => {
    const list = ids(await gw.as(ownerB.key).get('/v1/models'));
    expect(list).toContain('gpt-4o');
    for (const m of ['acme-large', 'fast', 'lvl-model']) expect(list).not.toContain(m);
  });

  it('narrows the list by the caller\'s AllowModels and adds its own ModelMapper names', async () => {
    const root = rootAccount(gw);
    const only4o = await createAccount(gw, root, { AllowModels: 'gpt-4o*' });
    const fourO = ids(await gw.as(only4o.key).get('/v1/models'));
    expect(fourO).toEqual(expect.arrayContaining(['gpt-4o', 'gpt-4o-mini']));
    expect(fourO.every((m) => m.startsWith('gpt-4o'))).toBe(true);
    const none = await createAccount(gw, root, { AllowModels: '-*' });
    expect((await gw.as(none.key).get('/models')).body).toEqual({ object: 'list', data: [] });
    const claudeAndO3 = await createAccount(gw, root, { AllowModels: 'claude-*, o3' });
    const claude = ids(await gw.as(claudeAndO3.key).get('/dashboard/models'));
    expect(claude).toContain('o3');
    expect(claude).toContain('claude-opus-4-1');
    expect(claude.every((m) => m.startsWith('claude-') || m === 'o3')).toBe(true);
    const mapped = await createAccount(gw, root, { ModelMapper: 'mine=claude-haiku-4-5, mini*=gpt-4o-mini' });
    const mine = (await gw.as(mapped.key).get('/dashboard/models')).body.data.find((m: any) => m.id === 'mine');
    expect(mine).toMatchObject({ id: 'mine', object: 'model', owned_by: 'anthropic', pricing: { billed_as: 'claude-haiku-4-5' } });
    expect(ids(await gw.as(mapped.key).get('/dashboard/models'))).not.toContain('mini*');
  });

  it('answers bad input with the envelope', async () => {
    expectEnvelope(await gw.root.get('/v1/models?limit=5'), 400);
    expectEnvelope(await gw.root.get('/dashboard/models?x=1'), 400);
    expectEnvelope(await gw.as(null).get('/v1/models'), 401);
    expectEnvelope(await gw.as('not-a-key').get('/models'), 401);
    expectEnvelope(await gw.root.post('/dashboard/models', {}), 404);
  });
});
