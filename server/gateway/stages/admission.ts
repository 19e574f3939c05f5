/**
 * Stage 5, admission: may this call spend now — the balance (not for Root and Owners) and the
 * rate limits (the account's RPM…TPD, then the model's ModelLimits or the Owner's MODEL_LIMITS).
 * Refuses 402 insufficient_balance and 429 rate_limit_exceeded with the x-ratelimit-* headers;
 * an admitted call is counted against its request limits.
 */
import type { ProxyCall } from '../call';
import type { Balances } from '../admission/balances';
import type { LimitStore } from '../limits/counters';
import { modelChecks, refusalHeaders, refusalMessage } from '../limits/account-limits';
import type { Verdict } from '../errors';

export interface AdmissionDeps {
  settings: { userMinBalance: number };
  balances: Pick<Balances, 'peek' | 'load'>;
  limits: Pick<LimitStore, 'admit'>;
}

/** Synchronous when the balance is in memory; a promise only on the account's first call. */
export function admit(d: AdmissionDeps, c: ProxyCall): Verdict | Promise<Verdict> {
  if (!c.profile.exempt) {
    const balance = d.balances.peek(c.row.id);
    if (balance === undefined) return d.balances.load(c.row.id).then((b) => checkBalance(d, b) ?? checkLimits(d, c));
    const refusal = checkBalance(d, balance);
    if (refusal) return refusal;
  }
  return checkLimits(d, c);
}

function checkBalance(d: AdmissionDeps, balance: number): Verdict {
  const min = d.settings.userMinBalance;
  if (balance >= min) return null;
  return { status: 402, message: `Insufficient balance: ${balance.toFixed(4)} is below the minimum of ${min}`, code: 'insufficient_balance' };
}

function checkLimits(d: AdmissionDeps, c: ProxyCall): Verdict {
  const { profile, model } = c;
  const modelLimits = c.ownerRules.modelLimits;
  const limit = profile.modelLimits.size ? profile.modelLimits.match(model) ?? modelLimits.match(model) : modelLimits.match(model);
  const checks = limit ? profile.checks.concat(modelChecks(c.row.id, model, limit)) : profile.checks;
  c.checks = checks;
  if (checks.length === 0) return null;
  const now = Date.now();
  const refusal = d.limits.admit(checks, now);
  return refusal ? { status: 429, message: refusalMessage(refusal), code: 'rate_limit_exceeded', headers: refusalHeaders(refusal, now) } : null;
}
