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
import { estimateInputTokens, maxCostOf, maxOutputTokens } from '../../domain/pricing/estimate';
import type { Verdict } from '../errors';

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
  if (credit !== null || spend.length > 0 || tokenLimited) {
    const embeddings = c.endpoint === 'embeddings';
    const input = estimateInputTokens(c.doc);
    const output = maxOutputTokens(c.doc, c.model, embeddings);
    tokens = input + output;
    if (credit !== null || spend.length > 0) amount = maxCostOf(input, output, policyPrice(c.model, c.owner.pricing, c.owner.unpricedPolicy), row.rates, row.factor);
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
  if (v instanceof Promise) return v.then((x) => verdictOf(c, r, x));
  return verdictOf(c, r, v);
}

const usd = (x: number) => (Math.round(x * 1e6) / 1e6).toString();

function verdictOf(c: ProxyCall, r: AdmissionRequest, v: AdmissionRefusal | null): Verdict {
  if (v === null) {
    c.reservation = r;
    return null;
  }
  switch (v.kind) {
    case 'credit':
      return {
        status: 402,
        code: 'insufficient_balance',
        message: `Insufficient balance: ${usd(v.available)} available (balance less calls in progress) cannot hold this call's maximum cost of ${usd(v.amount)} above the minimum balance of ${usd(v.claim.floor)}`,
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
