import { describe, expect, it } from 'vitest';
import { MemoryAdmissionStore } from '../admission/memory-store';
import { FakeBases } from '../admission/store.contract';
import { counterKeys, periodOf } from '../admission/store';
import { admit, type AdmissionDeps } from './admission';
import { accountRow, callFor, ownerRouting } from './test-support';

function deps(balance: number) {
  const bases = new FakeBases();
  bases.credits.set(42, balance);
  const store = new MemoryAdmissionStore(bases, { refreshMs: 60_000 });
  const d: AdmissionDeps = { settings: { userMinBalance: 2, userApiBalance: 20, upstreamTimeoutMs: 300_000 }, admission: store };
  return { d, store, bases };
}

/** 1,000 output tokens of a model priced at 1,000 USD per million output tokens: 1 USD at most. */
const pricey = ownerRouting();
pricey.pricing = { ChatPricing: { pricey: { InputText: 0, OutputText: 1000 } } };
const dollarCall = (fields: Parameters<typeof accountRow>[0] = {}) => callFor({ owner: pricey, row: accountRow(fields), body: { model: 'pricey', max_tokens: 1000, messages: [] } });

describe('admission', () => {
  it('reserves the maximum cost and refuses what the balance less reservations cannot hold above the minimum', async () => {
    const { d, store } = deps(5);
    const first = dollarCall();
    const v = admit(d, first);
    expect(v).toBeInstanceOf(Promise); // the balance is read once
    expect(await v).toBeNull();
    // The input is bounded by the request's bytes (free here); the output by its max_tokens.
    expect(first.reservation).toMatchObject({ id: first.id, amount: 1, tokens: first.raw.length + 1000 });
    const second = dollarCall();
    expect(admit(d, second)).toBeNull();
    expect(admit(d, third())).toBeNull();
    const refused = admit(d, dollarCall());
    expect(refused).toMatchObject({ status: 402, code: 'insufficient_balance', message: expect.stringContaining('2 available') });
    expect(store.credit(counterKeys.credit(1, 42))).toEqual({ spendable: 5, reserved: 3 });
    function third() { return dollarCall(); }
  });

  it('reserves nothing for Root and Owners, and refuses a balance below the minimum even for a free model', async () => {
    const { d } = deps(0);
    const owner = callFor({ row: accountRow({ role: 'owner' }) });
    expect(admit(d, owner)).toBeNull();
    expect(owner.reservation).toBeNull();
    expect(await admit(d, callFor({ body: { model: 'unpriced-model', messages: [] } }))).toMatchObject({ status: 402, code: 'insufficient_balance' });
  });

  it('refuses at DailyLimit and HardLimit, an ancestor\'s cap binding the caller', async () => {
    const { d, bases } = deps(100);
    const day = periodOf('day', Date.now()).period;
    const month = periodOf('month', Date.now()).period;
    bases.spends.set(counterKeys.spend(1, 42, day), 1.5);
    expect(await admit(d, dollarCall({ dailyLimit: 2 }))).toMatchObject({ status: 402, code: 'daily_limit_reached', message: expect.stringContaining('this account') });
    expect(admit(d, dollarCall({ dailyLimit: 2.5 }))).toBeNull();
    bases.spends.set(counterKeys.spend(1, 7, month), 9.5);
    const child = callFor({ owner: pricey, row: accountRow({ dna: '.1.7.42.' }), ancestorCaps: [{ id: 7, dna: '.1.7.', dailyLimit: null, hardLimit: 10, softLimit: null }], body: { model: 'pricey', max_tokens: 1000, messages: [] } });
    expect(await admit(d, child)).toMatchObject({ status: 402, code: 'hard_limit_reached', message: expect.stringContaining('account #7 above this one') });
  });

  it('counts admitted calls against RPM and refuses the one past it with the limit headers', async () => {
    const { d } = deps(100);
    const row = accountRow({ rpm: 2 });
    expect(await admit(d, callFor({ row }))).toBeNull();
    expect(admit(d, callFor({ row }))).toBeNull();
    const refused = admit(d, callFor({ row }));
    expect(refused).toMatchObject({ status: 429, code: 'rate_limit_exceeded', headers: { 'x-ratelimit-scope': 'RPM', 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '0', 'retry-after': '30', 'x-ratelimit-reset': '60' } });
  });

  it('adds the per-model limit: the account ModelLimits entry, else the Owner MODEL_LIMITS one', async () => {
    const { d } = deps(100);
    const owner = ownerRouting({ MODEL_LIMITS: { 'gpt-*': { rpm: 1 } } });
    const first = callFor({ owner });
    expect(await admit(d, first)).toBeNull();
    expect(first.reservation!.rates.map((k) => k.name)).toEqual(['gpt-4o rpm']);
    expect(admit(d, callFor({ owner }))).toMatchObject({ status: 429, headers: { 'x-ratelimit-scope': 'gpt-4o rpm' } });
    const own = callFor({ owner, row: accountRow({ id: 43, modelLimits: { 'gpt-4o': { rpm: 3 } } }) });
    d.admission = new MemoryAdmissionStore(Object.assign(new FakeBases(), { credits: new Map([[43, 100]]) }), { refreshMs: 60_000 });
    expect(await admit(d, own)).toBeNull();
    expect(own.reservation!.rates).toEqual([expect.objectContaining({ name: 'gpt-4o rpm', limit: 3 })]);
  });

  it('reserves estimated tokens on token limits: input bound plus max_tokens', async () => {
    const { d } = deps(100);
    const row = accountRow({ tpm: 1000 });
    // A model whose input cannot be counted here (no tokenizer of its own, no key to ask): its byte bound stands.
    const body = { model: 'mistral-lg', max_tokens: 250, messages: [{ role: 'user', content: 'x'.repeat(16) }] };
    // The request's 97 bytes bound its input tokens, + 250 output: two fit in 1,000, not three.
    const per = Buffer.byteLength(JSON.stringify(body)) + 250;
    expect(per).toBe(347);
    const c = callFor({ row, body });
    expect(await admit(d, c)).toBeNull();
    expect(c.reservation!.tokens).toBe(per);
    expect(admit(d, callFor({ row, body }))).toBeNull();
    expect(admit(d, callFor({ row, body }))).toMatchObject({ status: 429, headers: { 'x-ratelimit-scope': 'TPM' }, message: expect.stringContaining(`reserves up to ${per}`) });
  });
  it('holds the model\'s whole output limit on credit but at most 4,096 output tokens on a token limit when the call names none', async () => {
    const { d } = deps(100_000);
    const row = accountRow({ tpm: 40_000 });
    const call = callFor({ row, body: { model: 'gpt-5', messages: [{ role: 'user', content: 'hi' }] } });
    expect(await admit(d, call)).toBeNull();
    // gpt-5 may answer 128,000 tokens: credit holds them all, TPM paces what a call usually takes.
    expect(call.reservation!.tokens).toBe(call.raw.length + 4096);
    const limited = callFor({ row: accountRow({ id: 43, tpm: 40_000 }), body: { model: 'gpt-5', max_completion_tokens: 9000, messages: [] } });
    d.admission = new MemoryAdmissionStore(Object.assign(new FakeBases(), { credits: new Map([[43, 100_000]]) }), { refreshMs: 60_000 });
    expect(await admit(d, limited)).toBeNull();
    expect(limited.reservation!.tokens).toBe(limited.raw.length + 9000);
  });
});
