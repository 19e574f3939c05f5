/**
 * Stage 5, admission: may this call spend now. One admission-store call checks and reserves
 * every counter of the call at once: the credit (not for Root and Owners: the request's
 * maximum cost, refused 402 `insufficient_balance` when the spendable balance less open
 * reservations cannot cover it above UserMinBalance), the spend caps of the account and its
 * ancestors within the tenant (402 `daily_limit_reached` / `hard_limit_reached`), and the rate
 * and token limits (the account's RPM…TPD, then the model's ModelLimits or the Owner's
 * MODEL_LIMITS; 429 `rate_limit_exceeded` with the x-ratelimit-* headers). The reservation
 * stays on the call until settle replaces it with the actual cost or releases it.
 *
 * The input is held at its byte bound (domain/pricing/estimate.ts), which costs nothing to
 * compute. When that bound alone refuses a call a smaller input could pass (credit, a spend cap,
 * a token limit), the input is counted (admission/input-count.ts: the model's tokenizer, or the
 * key's own count endpoint within its deadline) and the call admitted again with the count; it is
 * refused only if the count does not fit either.
 */
import type { ProxyCall } from '../call';
import { MONEY_EPSILON, type AdmissionRefusal, type AdmissionRequest, type AdmissionStore, type SpendClaim } from '../admission/store';
import { countInput, inputCounter, type CountDeps, type InputCounter } from '../admission/input-count';
import { creditClaim, rateClaims, spendClaims } from '../admission/profile';
import { refusalHeaders, refusalMessage } from '../limits/account-limits';
import { policyPrice } from '../../domain/pricing/unpriced-policy';
import { affordableOutput, DEFAULT_OUTPUT_TOKENS, estimateInputTokens, maxCostOf, maxOutputTokens, modelLimits } from '../../domain/pricing/estimate';
import type { ResolvedPrice } from '../../domain/pricing/cost';
import type { Verdict } from '../errors';
import { equivalentTokens, unitCallCost } from '../../domain/pricing/units';
import { maxUnits, unitMeterOf, unitPriceOf } from '../meter';

export interface AdmissionDeps {
  settings: {
    userMinBalance: number;
    /** Low-balance alert threshold: spendable credit below it. */
    userApiBalance: number;
    upstreamTimeoutMs: number;
  };
  admission: Pick<AdmissionStore, 'admit'>;
}

/** With these, an input the byte bound alone refuses is counted before refusing (the proxy has them all; a test may leave them out). */
export type CountingAdmissionDeps = AdmissionDeps & Partial<CountDeps>;

/**
 * A reservation unsettled this long after UPSTREAM_TIMEOUT_MS is released by the store: the
 * call it belonged to is gone (in one process only a crash does that; with a shared store, an
 * instance that died).
 */
export const RESERVATION_GRACE_MS = 60_000;

const NO_SPEND: readonly SpendClaim[] = [];

/** Synchronous when the counters are in memory; a promise only when a base must be read or the input counted. */
export function admit(d: CountingAdmissionDeps, c: ProxyCall): Verdict | Promise<Verdict> {
  const p = c.profile;
  const row = c.row;
  const now = Date.now();
  const rates = rateClaims(p, c.model, c.ownerRules.modelLimits);
  const credit = creditClaim(p, d.settings.userMinBalance, d.settings.userApiBalance);
  const spend = p.exempt ? NO_SPEND : spendClaims(p, now);
  if (credit === null && spend.length === 0 && rates.length === 0) return null;

  let tokenLimited = false;
  for (let i = 0; i < rates.length; i++) if (rates[i].kind === 'tokens') tokenLimited = true;
  const charged = credit !== null || spend.length > 0;
  const hold = holdOf(c, charged, tokenLimited, null);
  const r: AdmissionRequest = {
    id: c.serial, ownerId: row.ownerId, credit, spend, rates, amount: hold.amount, tokens: hold.tokens, now,
    expiresAt: now + d.settings.upstreamTimeoutMs + RESERVATION_GRACE_MS,
  };
  const v = d.admission.admit(r);
  if (v === null) {
    c.reservation = r;
    return null;
  }
  if (v instanceof Promise) return v.then((x) => (x === null ? verdictOf(c, r, x, hold.bound) : refused(d, c, r, x, hold, charged, tokenLimited)));
  return refused(d, c, r, v, hold, charged, tokenLimited);
}

/** What a call holds: its tokens on token limits, its maximum cost, and how that cost was made up (null: not token-billed, or embeddings). */
interface Hold {
  tokens: number;
  amount: number;
  bound: TokenBound | null;
}

/** Input bounds by model that replace the byte bound where smaller: the counts (or 0, for what no count can go below). */
type InputCounts = Pick<ReadonlyMap<string, number>, 'get'>;
const NO_INPUT: InputCounts = { get: () => 0 };

function holdOf(c: ProxyCall, charged: boolean, tokenLimited: boolean, counts: InputCounts | null): Hold {
  const row = c.row;
  let tokens = 0;
  let amount = 0;
  let bound: TokenBound | null = null;
  const meter = unitMeterOf(c);
  if (meter !== null && (charged || tokenLimited)) {
    // A unit-billed route reserves its most units: n images at the dearest matching size, the upload's longest audio, …
    const price = unitPriceOf(c, meter, c.model);
    const max = maxUnits(c, meter, price);
    const e = equivalentTokens(max);
    tokens = e.prompt + e.completion;
    if (charged) amount = unitCallCost(max, price, c.owner.unpricedPolicy, row.rates, row.factor);
  } else if (charged || tokenLimited) {
    const embeddings = c.endpoint === 'embeddings' || c.endpoint === 'gemini_embed';
    const own = tokenBound(c, c.model, embeddings, counts);
    tokens = own.input + own.rateOutput;
    if (charged) {
      amount = maxCostOf(own.input, own.output, own.price, row.rates, row.factor);
      if (!embeddings) bound = own;
      // A MODEL_FAILOVER fallback is billed at its own price and limits: the call holds the dearest.
      for (const m of fallbacks(c)) {
        const b = tokenBound(c, m, embeddings, counts);
        const most = maxCostOf(b.input, b.output, b.price, row.rates, row.factor);
        if (most > amount) {
          amount = most;
          if (!embeddings) bound = b;
        }
      }
    }
  }
  return { tokens, amount, bound };
}

/** The MODEL_FAILOVER fallbacks of the call's model that its account may use. */
function fallbacks(c: ProxyCall): string[] {
  const chain = c.owner.failover.size ? c.owner.failover.match(c.model) : undefined;
  return chain ? chain.filter((m) => m !== c.model && c.profile.models.allows(m)) : [];
}

/**
 * A refusal: final unless some model of the call can have its input counted and either a smaller
 * input could pass the refused claim or the 402 would blame the input by its bytes; then the
 * count decides the verdict and its advice (see the header).
 */
function refused(d: CountingAdmissionDeps, c: ProxyCall, r: AdmissionRequest, v: AdmissionRefusal, hold: Hold, charged: boolean, tokenLimited: boolean): Verdict | Promise<Verdict> {
  // A unit-billed route holds units, not a prompt's tokens.
  if (unitMeterOf(c) !== null) return verdictOf(c, r, v, hold.bound);
  if (!smallerInputMayPass(v, holdOf(c, charged, tokenLimited, NO_INPUT)) && !inputAdviceByBytes(c, v, hold)) return verdictOf(c, r, v, hold.bound);
  const models = charged ? [c.model, ...fallbacks(c)] : [c.model];
  const counters: [string, InputCounter][] = [];
  for (const m of models) {
    const counter = inputCounter(d, c, m);
    if (counter) counters.push([m, counter]);
  }
  if (counters.length === 0) return verdictOf(c, r, v, hold.bound);
  return admitCounted(d, c, r, v, hold, counters, charged, tokenLimited);
}

/**
 * A 402 whose advice would be "the input alone does not fit" by the bytes while the balance covers
 * some input: counted, the input may fit and the advice become the output limit that does.
 */
function inputAdviceByBytes(c: ProxyCall, v: AdmissionRefusal, hold: Hold): boolean {
  if (v.kind !== 'credit' || hold.bound === null) return false;
  const budget = v.available - v.claim.floor;
  return budget > 0 && outputThatFits(c, budget, hold.bound) < 1;
}

/** Whether the refused claim would pass with the call holding `least` (no input at all). */
function smallerInputMayPass(v: AdmissionRefusal, least: Hold): boolean {
  switch (v.kind) {
    case 'credit':
      return v.available - least.amount >= v.claim.floor - MONEY_EPSILON;
    case 'spend':
      return v.claim.cap !== null && v.committed + least.amount <= v.claim.cap + MONEY_EPSILON;
    case 'rate':
      return v.claim.kind === 'tokens' && v.used + Math.min(least.tokens, v.claim.limit) <= v.claim.limit;
    case 'unavailable':
      return false;
  }
}

/** Counts the input of each model that can be, and admits the call again with what it then holds. */
async function admitCounted(
  d: CountingAdmissionDeps, c: ProxyCall, r: AdmissionRequest, v: AdmissionRefusal, hold: Hold,
  counters: [string, InputCounter][], charged: boolean, tokenLimited: boolean,
): Promise<Verdict> {
  const counts = new Map<string, number>();
  await Promise.all(counters.map(async ([model, counter]) => {
    // A count that cannot be made leaves the byte bound: the refusal stands, as without counting.
    const n = await countInput(d, c, model, counter).catch(() => null);
    if (n !== null) counts.set(model, n);
  }));
  if (counts.size === 0 || c.ex.aborted) return verdictOf(c, r, v, hold.bound);
  const counted = holdOf(c, charged, tokenLimited, counts);
  if (counted.amount >= r.amount && counted.tokens >= r.tokens) return verdictOf(c, r, v, hold.bound);
  const now = Date.now();
  const again: AdmissionRequest = { ...r, amount: counted.amount, tokens: counted.tokens, now, expiresAt: now + (r.expiresAt - r.now) };
  return verdictOf(c, again, await d.admission.admit(again), counted.bound);
}

/** How a token-billed call's maximum cost was made up, to tell a refused client what would fit. */
interface TokenBound {
  input: number;
  output: number;
  /**
   * Output counted against TPM/TPH/TPD and a model's tpm: the request's own limit, else at most
   * DEFAULT_OUTPUT_TOKENS. A token limit paces throughput rather than holding money, and settle
   * counts what was really used; holding the model's whole output limit (gpt-5's 128,000) would
   * refuse every call without max_tokens for good under any TPM below it.
   */
  rateOutput: number;
  price: ResolvedPrice;
}

/** The most a token-billed call can use and what it costs per token, on `model`: its input at the byte bound, or at its count where smaller. */
function tokenBound(c: ProxyCall, model: string, embeddings: boolean, counts: InputCounts | null): TokenBound {
  const limits = modelLimits(model, c.owner.defaultOutputLimit);
  const bytes = estimateInputTokens(c.doc, c.raw, model, limits.context);
  const n = counts?.get(model);
  const input = n !== undefined && n < bytes ? n : bytes;
  const output = maxOutputTokens(c.doc, limits.output, embeddings);
  const rateOutput = maxOutputTokens(c.doc, Math.min(limits.output, DEFAULT_OUTPUT_TOKENS), embeddings);
  return { input, output, rateOutput, price: policyPrice(model, c.owner.pricing, c.owner.unpricedPolicy) };
}

const usd = (x: number) => (Math.round(x * 1e6) / 1e6).toString();

/**
 * What the maximum cost is made of, and the output limit that would fit the credit (as
 * OpenRouter answers): a client without max_tokens is reserved the model's whole output limit.
 */
function lowerLimit(c: ProxyCall, budget: number, b: TokenBound): string {
  const made = ` (up to ${b.input} input and ${b.output} output tokens)`;
  if (!(budget > 0)) return `${made}; the balance is at or below that minimum: top up first`;
  const fits = outputThatFits(c, budget, b);
  if (fits < 1) return `${made}; the input alone does not fit: top up or send less`;
  return `${made}; a lower output limit would fit: ${LIMIT_FIELD[c.endpoint] ?? 'max_tokens'} of ${fits} or less`;
}

/** The largest output limit whose call would fit `budget` with this input (0: the input alone does not). */
function outputThatFits(c: ProxyCall, budget: number, b: TokenBound): number {
  // Adding the field adds its bytes to the input bound: `"max_completion_tokens":1234567,` and some.
  return affordableOutput(budget, b.input + 48, b.price, c.row.rates, c.row.factor);
}

/** The request field that limits the output, per endpoint. */
const LIMIT_FIELD: Partial<Record<ProxyCall['endpoint'], string>> = {
  chat: 'max_completion_tokens (or max_tokens)',
  responses: 'max_output_tokens',
  messages: 'max_tokens',
  gemini: 'generationConfig.maxOutputTokens',
};

function verdictOf(c: ProxyCall, r: AdmissionRequest, v: AdmissionRefusal | null, bound: TokenBound | null): Verdict {
  if (v === null) {
    c.reservation = r;
    return null;
  }
  switch (v.kind) {
    case 'credit':
      return {
        status: 402,
        code: 'insufficient_balance',
        message: `Insufficient balance: ${usd(v.available)} available (balance less calls in progress) cannot hold this call's maximum cost of ${usd(v.amount)} above the minimum balance of ${usd(v.claim.floor)}${bound ? lowerLimit(c, v.available - v.claim.floor, bound) : ''}`,
      };
    case 'spend': {
      const whose = v.claim.accountId === c.row.id ? 'this account' : `account #${v.claim.accountId} above this one`;
      const what = v.claim.kind === 'day' ? `DailyLimit of ${usd(v.claim.cap!)} for today (UTC)` : `HardLimit of ${usd(v.claim.cap!)} for this month (UTC)`;
      return {
        status: 402,
        code: v.claim.code,
        message: `Spend cap reached: ${whose} has spent or holds ${usd(v.committed)} of its ${what}; this call may cost up to ${usd(v.amount)}`,
      };
    }
    case 'rate': {
      const now = Date.now();
      return { status: 429, code: 'rate_limit_exceeded', message: refusalMessage(v, r.tokens), headers: refusalHeaders(v, now) };
    }
    case 'unavailable': {
      const retry = Math.max(1, Math.ceil((v.retryAt - Date.now()) / 1000));
      return { status: 503, code: 'shared_state_unavailable', message: 'Balances and spend caps cannot be checked right now (shared state unavailable); retry shortly', headers: { 'retry-after': String(retry) } };
    }
  }
}
