/**
 * Stage 5, admission: may this call spend now. One admission-store call checks and reserves
 * every counter of the call at once: the credit (not for Root and Owners: the request's
 * maximum cost, refused 402 `insufficient_balance` when the spendable balance less open
 * reservations cannot cover it above UserMinBalance), the spend caps of the account and its
 * ancestors within the tenant (402 `daily_limit_reached` / `hard_limit_reached`), and the rate
 * and token limits (the account's RPM…TPD, then the model's ModelLimits or the Owner's
 * MODEL_LIMITS; 429 `rate_limit_exceeded` with the x-ratelimit-* headers). The reservation
 * stays on the call until settle replaces it with the actual cost or releases it.
 */
import type { ProxyCall } from '../call';
import type { AdmissionRefusal, AdmissionRequest, AdmissionStore, SpendClaim } from '../admission/store';
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

/**
 * A reservation unsettled this long after UPSTREAM_TIMEOUT_MS is released by the store: the
 * call it belonged to is gone (in one process only a crash does that; with a shared store, an
 * instance that died).
 */
export const RESERVATION_GRACE_MS = 60_000;

const NO_SPEND: readonly SpendClaim[] = [];

/** Synchronous when the counters are in memory; a promise only when a base must be read. */
export function admit(d: AdmissionDeps, c: ProxyCall): Verdict | Promise<Verdict> {
  const p = c.profile;
  const row = c.row;
  const now = Date.now();
  const rates = rateClaims(p, c.model, c.ownerRules.modelLimits);
  const credit = creditClaim(p, d.settings.userMinBalance, d.settings.userApiBalance);
  const spend = p.exempt ? NO_SPEND : spendClaims(p, now);
  if (credit === null && spend.length === 0 && rates.length === 0) return null;

  let tokenLimited = false;
  for (let i = 0; i < rates.length; i++) if (rates[i].kind === 'tokens') tokenLimited = true;
  let tokens = 0;
  let amount = 0;
  let bound: TokenBound | null = null;
  const meter = unitMeterOf(c);
  if (meter !== null && (credit !== null || spend.length > 0 || tokenLimited)) {
    // A unit-billed route reserves its most units: n images at the dearest matching size, the upload's longest audio, …
    const price = unitPriceOf(c, meter, c.model);
    const max = maxUnits(c, meter, price);
    const e = equivalentTokens(max);
    tokens = e.prompt + e.completion;
    if (credit !== null || spend.length > 0) amount = unitCallCost(max, price, c.owner.unpricedPolicy, row.rates, row.factor);
  } else if (credit !== null || spend.length > 0 || tokenLimited) {
    const embeddings = c.endpoint === 'embeddings';
    const own = tokenBound(c, c.model, embeddings);
    tokens = own.input + own.rateOutput;
    if (credit !== null || spend.length > 0) {
      amount = maxCostOf(own.input, own.output, own.price, row.rates, row.factor);
      if (!embeddings) bound = own;
      // A MODEL_FAILOVER fallback is billed at its own price and limits: the call holds the dearest.
      const chain = c.owner.failover.size ? c.owner.failover.match(c.model) : undefined;
      for (const m of chain ?? []) {
        if (m === c.model || !p.models.allows(m)) continue;
        const b = tokenBound(c, m, embeddings);
        const most = maxCostOf(b.input, b.output, b.price, row.rates, row.factor);
        if (most > amount) {
          amount = most;
          if (!embeddings) bound = b;
        }
      }
    }
  }
  const r: AdmissionRequest = {
    id: c.serial, ownerId: row.ownerId, credit, spend, rates, amount, tokens, now,
    expiresAt: now + d.settings.upstreamTimeoutMs + RESERVATION_GRACE_MS,
  };
  const v = d.admission.admit(r);
  if (v === null) {
    c.reservation = r;
    return null;
  }
  if (v instanceof Promise) return v.then((x) => verdictOf(c, r, x, bound));
  return verdictOf(c, r, v, bound);
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

/** The most a token-billed call can use and what it costs per token, on `model`. */
function tokenBound(c: ProxyCall, model: string, embeddings: boolean): TokenBound {
  const limits = modelLimits(model, c.owner.defaultOutputLimit);
  const input = estimateInputTokens(c.doc, c.raw, model, limits.context);
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
  // Adding the field adds its bytes to the input bound: `"max_completion_tokens":1234567,` and some.
  const fits = affordableOutput(budget, b.input + 48, b.price, c.row.rates, c.row.factor);
  if (fits < 1) return `${made}; the input alone does not fit: top up or send less`;
  return `${made}; a lower output limit would fit: ${LIMIT_FIELD[c.endpoint] ?? 'max_tokens'} of ${fits} or less`;
}

/** The request field that limits the output, per endpoint. */
const LIMIT_FIELD: Partial<Record<ProxyCall['endpoint'], string>> = {
  chat: 'max_completion_tokens (or max_tokens)',
  responses: 'max_output_tokens',
  messages: 'max_tokens',
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
