import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { expectEnvelope } from '../../testing/http';

let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway(); });
afterAll(async () => { await gw?.close(); });

const writes = async () => (await gw.gateway.database.rows<{ n: number }>(sql`select (select count(*) from owner_configs) + (select count(*) from operation_logs) as n`))[0].n;
const PASSWORD = 'mail-pass-Zq81!never-shown';

describe('/x-config', () => {
  it('lists every readable key, unset ones as empty strings, with the Owner ID', async () => {
    const r = await gw.root.get('/x-config');
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    expect(r.body.oid).toBe(1);
    expect(Object.keys(r.body.configs).sort()).toEqual(['DEFAULT_OUTPUT_LIMIT', 'EMAIL_AUTH', 'EMAIL_PORT', 'EMAIL_SMTP', 'LEVEL_MAPPER', 'MODEL_FAILOVER', 'MODEL_LIMITS', 'MODEL_MAPPER', 'PRICING', 'RESOURCES', 'SWITCH_OVER', 'UNPRICED_MODEL_POLICY', 'UNSUPPORTED_TOOLS', 'XAI_MAIL']);
    expect(Object.values(r.body.configs).every((v) => v === '')).toBe(true);
  });

  it('sets values with PUT and POST; EMAIL_PASS is accepted, stored encrypted and never returned', async () => {
    const put = await gw.root.put('/x-config', {
      MODEL_MAPPER: 'gpt-3.5*=gpt-4o-mini, o*=gpt-4o', LEVEL_MAPPER: 'gpt-4*=2,claude*=3', SWITCH_OVER: '1=2,2=3',
      EMAIL_SMTP: 'smtp.example.com', EMAIL_PORT: '587', EMAIL_AUTH: 'noreply@example.com', EMAIL_PASS: PASSWORD,
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ success: true, oid: 1 });
    expect(put.body.updated.sort()).toEqual(['EMAIL_AUTH', 'EMAIL_PASS', 'EMAIL_PORT', 'EMAIL_SMTP', 'LEVEL_MAPPER', 'MODEL_MAPPER', 'SWITCH_OVER']);
    const post = await gw.root.post('/x-config', { XAI_MAIL: 'owner@example.com', RESOURCES: '/v1/chat/completions /v1/embeddings', MODEL_FAILOVER: 'gpt-4o=gpt-4o-mini|gpt-4.1-mini' });
    expect(post.status).toBe(200);
    const get = await gw.root.get('/x-config');
    expect(get.body.configs).toMatchObject({ MODEL_MAPPER: 'gpt-3.5*=gpt-4o-mini, o*=gpt-4o', EMAIL_PORT: '587', XAI_MAIL: 'owner@example.com' });
    expect(get.body.configs).not.toHaveProperty('EMAIL_PASS');
    for (const r of [put, post, get]) expect(r.text).not.toContain(PASSWORD);
    const stored = await gw.gateway.database.rows<{ value: string }>(sql`select value from owner_configs where key = 'EMAIL_PASS'`);
    expect(stored[0].value).toMatch(/^v1\./);
    expect(stored[0].value).not.toContain(PASSWORD);
    expect(gw.logs.join('\n')).not.toContain(PASSWORD);

    const conf = await gw.root.get('/x-conf');
    expect(conf.body).toMatchObject({
      ModelMapper: { 'gpt-3.5*': 'gpt-4o-mini', 'o*': 'gpt-4o' }, LevelMapper: { 'gpt-4*': 2, 'claude*': 3 }, SwitchOver: { 1: 2, 2: 3 },
      Resources: ['/v1/chat/completions', '/v1/embeddings'], ModelFailover: { 'gpt-4o': ['gpt-4o-mini', 'gpt-4.1-mini'] },
    });
  });

  it('rejects non-string values, unknown keys and malformed formats, writing nothing', async () => {
    const before = await writes();
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ EMAIL_PORT: 587 }, /EMAIL_PORT: must be a string/],
      [{ MODEL_MAPPER: null }, /MODEL_MAPPER/],
      [{ LEVEL_MAPPER: ['a=1'] }, /LEVEL_MAPPER/],
      [{ EMAIL_TLS: 'true' }, /unknown field: EMAIL_TLS/],
      [{ MODEL_MAPPER: 'gpt-4o' }, /MODEL_MAPPER: "gpt-4o" is not of the form/],
      [{ LEVEL_MAPPER: 'gpt-4*=two' }, /not a Level/],
      [{ SWITCH_OVER: '1=1' }, /itself/],
      [{ MODEL_LIMITS: '{"gpt-4o":{"rpm":-1}}' }, /MODEL_LIMITS.gpt-4o.rpm/],
      [{ MODEL_LIMITS: '{"gpt-4o":{"rpd":5}}' }, /unknown field "rpd"/],
      [{ MODEL_LIMITS: 'not json' }, /not valid JSON/],
      [{ RESOURCES: 'v1/chat' }, /not a path/],
      [{ EMAIL_PORT: '70000' }, /EMAIL_PORT/],
      [{ XAI_MAIL: 'nobody' }, /XAI_MAIL/],
      [{ UNSUPPORTED_TOOLS: 'ignore' }, /UNSUPPORTED_TOOLS: must be "drop" or "refuse"/],
      [{ MODEL_MAPPER: 'a=b', PRICING: '{"ChatPricing":{"gpt-4o":{"InputText":"1"}}}' }, /PRICING/],
      [{}, /Nothing to update/],
    ];
    for (const [body, message] of bad) {
      for (const method of ['PUT', 'POST'] as const) {
        const e = expectEnvelope(await gw.root.request(method, '/x-config', { body }), 400);
        expect(e.message, JSON.stringify(body)).toMatch(message);
      }
    }
    expect(await writes()).toBe(before);
  });

  it('enforces the PRICING limits: 128k, 1024 entries, known fields, finite non-negative numbers', async () => {
    const chat = (entries: Record<string, unknown>) => JSON.stringify({ ChatPricing: entries });
    const bad: [string, RegExp][] = [
      [chat({ 'gpt-4o': { InputText: -0.5 } }), /finite non-negative/],
      [chat({ 'gpt-4o': { InputText: 1e999 } }), /finite non-negative/],
      [chat({ 'gpt-4o': { Bogus: 1 } }), /unknown field "Bogus"/],
      [JSON.stringify({ MysteryPricing: {} }), /unknown section/],
      [JSON.stringify([1, 2]), /JSON object/],
      ['{', /not valid JSON/],
      [chat(Object.fromEntries(Array.from({ length: 1025 }, (_, i) => [`m${i}`, { InputText: 1 }]))), /more than 1024 entries/],
      [chat({ big: { InputText: 1 }, pad: { InputText: 1 } }).replace('"pad"', `"${'p'.repeat(200)}"`).padEnd(128 * 1024 + 10, ' '), /larger than 131072 bytes/],
    ];
    for (const [value, message] of bad) {
      const e = expectEnvelope(await gw.root.put('/x-config', { PRICING: value }), 400);
      expect(e.message).toMatch(message);
    }
    const good = JSON.stringify({ ChatPricing: { 'gpt-4o': { InputText: 1, OutputText: 2, Rates: 1.5 } }, ImgPricing: { 'dall-e-3': { Call: 0.04, Sizes: { '1024x1024': 0.04 } } } });
    expect((await gw.root.put('/x-config', { PRICING: good })).status).toBe(200);
    expect((await gw.root.get('/x-config')).body.configs.PRICING).toBe(good);
  });

  it('deletes keys by JSON body or query, and deleting PRICING restores the defaults', async () => {
    const del = await gw.root.delete('/x-config', { keys: ['PRICING', 'SWITCH_OVER'] });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ success: true, oid: 1, deleted: ['PRICING', 'SWITCH_OVER'] });
    const after = (await gw.root.get('/x-config')).body.configs;
    expect(after.PRICING).toBe('');
    expect(after.SWITCH_OVER).toBe('');
    expect((await gw.root.get('/x-conf')).body.SwitchOver).toEqual({});
    expect((await gw.root.request('DELETE', '/x-config?keys=XAI_MAIL')).body.deleted).toEqual(['XAI_MAIL']);
    expectEnvelope(await gw.root.delete('/x-config', { keys: ['NOPE'] }), 400);
    expectEnvelope(await gw.root.delete('/x-config', { keys: [] }), 400);
    expectEnvelope(await gw.root.delete('/x-config', { keys: [5] }), 400);
    expectEnvelope(await gw.root.delete('/x-config', { keys: ['PRICING'], extra: 1 }), 400);
    // Like the query form `?keys=PRICING`, a single name is taken as a one-element list.
    expect((await gw.root.delete('/x-config', { keys: 'PRICING' })).status).toBe(200);
    expectEnvelope(await gw.root.delete('/x-config'), 400);
  });

  it('setting a key to an empty string removes it', async () => {
    await gw.root.put('/x-config', { MODEL_FAILOVER: '' });
    const r = await gw.root.put('/x-config', { XAI_MAIL: 'a@b.co', MODEL_FAILOVER: '' });
    expect(r.body.removed).toEqual(['MODEL_FAILOVER']);
    expect((await gw.root.get('/x-config')).body.configs.MODEL_FAILOVER).toBe('');
  });
});

describe('/x-conf', () => {
  it('applies every batch field', async () => {
    const r = await gw.root.post('/x-conf', {
      Resources: '/v1/chat/completions,/v1/messages', LevelMapper: 'gpt-*=1', ModelMapper: 'gpt-3.5*=gpt-4o-mini', ModelFailover: 'gpt-4o=gpt-4o-mini',
      ModelLimits: { 'gpt-4o': { rpm: 30, tpm: 90000 } }, LoadKeys: true, LogEnable: true, SaveCache: true, DelKeys: false,
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, cascaded: 0, reloadedKeys: 0, flushedRecords: 0 });
    const v = (await gw.root.get('/x-conf')).body;
    expect(v).toMatchObject({
      Resources: ['/v1/chat/completions', '/v1/messages'], LevelMapper: { 'gpt-*': 1 }, ModelMapper: { 'gpt-3.5*': 'gpt-4o-mini' },
      ModelFailover: { 'gpt-4o': ['gpt-4o-mini'] }, ModelLimits: { 'gpt-4o': { rpm: 30, tpm: 90000 } },
      SleepingKeys: [], DisabledKeys: [], DefaultOutputLimit: 131_072, UserMinBalance: 2, UserApiBalance: 20,
    });
    expect((await gw.root.get('/x-config')).body.configs.MODEL_LIMITS).toBe('{"gpt-4o":{"rpm":30,"tpm":90000}}');
  });

  it('ModelLimits: an object merges, "-model" removes one, "*" and "=" clear all', async () => {
    await gw.root.post('/x-conf', { ModelLimits: { 'claude-sonnet-4': { rpm: 5 } } });
    expect((await gw.root.get('/x-conf')).body.ModelLimits).toEqual({ 'gpt-4o': { rpm: 30, tpm: 90000 }, 'claude-sonnet-4': { rpm: 5 } });
    await gw.root.post('/x-conf', { ModelLimits: '-gpt-4o' });
    expect((await gw.root.get('/x-conf')).body.ModelLimits).toEqual({ 'claude-sonnet-4': { rpm: 5 } });
    await gw.root.post('/x-conf', { ModelLimits: '*' });
    expect((await gw.root.get('/x-conf')).body.ModelLimits).toEqual({});
    await gw.root.post('/x-conf', { ModelLimits: { a: { tpm: 1 } } });
    await gw.root.post('/x-conf', { ModelLimits: '=' });
    expect((await gw.root.get('/x-conf')).body.ModelLimits).toEqual({});
  });

  it('cascades ModelMapper, LevelMapper and ModelLimits into descendants that set their own', async () => {
    const child = (await gw.root.post('/x-users', { Name: 'cascadechild', Email: 'cascade.child@example.test', CreditGranted: 50, ModelMapper: 'gpt-3.5*=gpt-4o, mine=gpt-4o', LevelMapper: 'gpt-*=1', ModelLimits: { 'gpt-4o': { rpm: 1 } } })).body.User;
    const plain = (await gw.root.post('/x-users', { Name: 'cascadeplain', Email: 'cascade.plain@example.test', CreditGranted: 5 })).body.User;
    const made = await gw.as(child.SecretKey).post('/x-users', { Name: 'cascadegrand', Email: 'cascade.grand@example.test', CreditGranted: 3, ModelMapper: 'gpt-3.5*=o1' });
    expect(made.status, made.text).toBe(201);
    const grandchild = made.body.User;
    const r = await gw.root.post('/x-conf', { ModelMapper: 'gpt-3.5*=gpt-4o-mini', LevelMapper: 'gpt-*=2', ModelLimits: { 'gpt-4o': { rpm: 60 } } });
    expect(r.body.cascaded).toBeGreaterThanOrEqual(2);
    const user = async (id: number) => (await gw.root.get(`/x-users/${id}`)).body[0];
    const c = await user(child.ID);
    expect(c.ModelMapper).toContain('gpt-3.5*=gpt-4o-mini');
    expect(c.ModelMapper).toContain('mine=gpt-4o');
    expect(c.ModelLimits).toEqual({ 'gpt-4o': { rpm: 60 } });
    expect(c.LevelMapper).toBe('gpt-*=2');
    expect((await user(grandchild.ID)).ModelMapper).toBe('gpt-3.5*=gpt-4o-mini');
    // An account that follows its parent keeps following: nothing is copied into it.
    expect(await user(plain.ID)).toMatchObject({ ModelMapper: '', LevelMapper: '', ModelLimits: {} });
    for (const id of [grandchild.ID, child.ID, plain.ID]) await gw.root.delete(`/x-users/${id}`);
  });

  it('lists disabled keys with their reason', async () => {
    const k = await gw.root.post('/x-keys', { Name: 'off', Level: 4, Provider: 'https://api.example.net', SecretKey: 'sk-aaaaaaaaaaaaaaaaaaaaaaaa' });
    const v = (await gw.root.get('/x-conf')).body;
    expect(v.DisabledKeys).toEqual([{ ID: k.body.Key.ID, Name: 'off', Level: 4, Reason: 'disabled by the Owner', At: null }]);
    // DelKeys removes only keys the gateway disabled, not those the Owner switched off.
    expect((await gw.root.post('/x-conf', { DelKeys: true })).body.deletedKeys).toBe(0);
    expect((await gw.root.get(`/x-keys/${k.body.Key.ID}`)).status).toBe(200);
  });

  it('rejects bad input with 400 and writes nothing', async () => {
    const before = await writes();
    const bad: [unknown, RegExp][] = [
      [{}, /Nothing to update/],
      [{ LoadKeys: 'yes' }, /LoadKeys/],
      [{ Resources: 5 }, /Resources/],
      [{ ModelMapper: 'broken' }, /ModelMapper/],
      [{ LevelMapper: 'gpt=x' }, /LevelMapper/],
      [{ ModelFailover: 'a=' }, /ModelFailover/],
      [{ ModelLimits: 'nonsense' }, /ModelLimits/],
      [{ ModelLimits: { m: { rpm: 1.5 } } }, /ModelLimits/],
      [{ ModelLimits: { m: { rpm: 1, extra: 2 } } }, /ModelLimits|extra/],
      [{ Unknown: true }, /unknown field: Unknown/],
      // One bad field spoils the batch: the valid one is not applied either.
      [{ ModelMapper: 'x=y', LevelMapper: 'bad' }, /LevelMapper/],
    ];
    for (const [body, message] of bad) expect(expectEnvelope(await gw.root.post('/x-conf', body), 400).message, JSON.stringify(body)).toMatch(message);
    expect(await writes()).toBe(before);
    expect((await gw.root.get('/x-conf')).body.ModelMapper).toEqual({ 'gpt-3.5*': 'gpt-4o-mini' });
  });
});
