/**
 * A batch's reservation: its worst case — every line's input bound plus its output cap, or the
 * model's output limit — computed as a call's is (domain/pricing/estimate.ts), at the batch price
 * (domain/pricing/batch-price.ts), × the account's Rates and Factor; held against the credit and
 * the spend caps (DailyLimit, HardLimit) by the same admission store as a call, without rate
 * claims (RPM/RPD do not count a batch; its tokens count on TPM/TPD when it is settled).
 *
 * The store's admission is what makes it hold under concurrency: one atomic check-and-reserve
 * (a Lua script in Redis across instances, synchronous in one process), so two batches created
 * at once, on one instance or two, cannot both fit when only one does. Once the provider has
 * the batch and its gateway_batches row is committed, the reservation is settled as a charge the
 * database holds (`onWritten`): from then on every base the store loads takes the row's
 * `reserved` off the credit and counts it against the spend caps (batches/held.ts), on every
 * instance and after restarts, until the batch is settled.
 */
import { estimateInputTokens, maxCostOf, maxOutputTokens, modelLimits } from '../../domain/pricing/estimate';
import { policyPrice } from '../../domain/pricing/unpriced-policy';
import { batchPrice } from '../../domain/pricing/batch-price';
import type { ProxyCall } from '../call';
import type { Refusal } from '../errors';
import { creditClaim, spendClaims } from '../admission/profile';
import type { AdmissionRequest, AdmissionStore } from '../admission/store';
import { RESERVATION_GRACE_MS } from '../stages/admission';

/** A batch's worst case in tokens. */
export interface WorstCase {
  lines: number;
  input: number;
  output: number;
}

/** From what the upload noted of an OpenAI input file (batch_files: input bound, output caps, lines without one). */
export function fileWorstCase(c: ProxyCall, f: { lines: number; inputBound: number; outputCapped: number; uncappedLines: number; url: string | null }, model: string): WorstCase {
  const embeddings = f.url === '/v1/embeddings';
  const limit = modelLimits(model, c.owner.defaultOutputLimit).output;
  return { lines: f.lines, input: f.inputBound, output: f.outputCapped + (embeddings ? 0 : f.uncappedLines * limit) };
}

/** Anthropic's inline requests: each one's `params` bounded as a Messages call is. */
export function requestsWorstCase(c: ProxyCall, params: Record<string, unknown>[], model: string): WorstCase {
  const limits = modelLimits(model, c.owner.defaultOutputLimit);
  let input = 0;
  let output = 0;
  for (const p of params) {
    input += estimateInputTokens(p, undefined, model, limits.context);
    output += maxOutputTokens(p, limits.output, false);
  }
  return { lines: params.length, input, output };
}

/** The most the batch can cost the account. */
export function worstCost(c: ProxyCall, model: string, w: WorstCase): number {
  const price = batchPrice(policyPrice(model, c.owner.pricing, c.owner.unpricedPolicy));
  return maxCostOf(w.input, w.output, price, c.row.rates, c.row.factor);
}

export interface ReserveDeps {
  settings: { userMinBalance: number; userApiBalance: number; upstreamTimeoutMs: number };
  admission: Pick<AdmissionStore, 'admit' | 'settle' | 'release' | 'onWritten'>;
}

const usd = (x: number) => (Math.round(x * 1e6) / 1e6).toString();

/** Reserves `amount` for the call's batch; the reservation is on `c.reservation`, or the refusal is returned. */
export async function reserveBatch(d: ReserveDeps, c: ProxyCall, amount: number, w: WorstCase): Promise<Refusal | null> {
  const p = c.profile;
  const now = Date.now();
  const credit = creditClaim(p, d.settings.userMinBalance, d.settings.userApiBalance);
  const spend = p.exempt ? [] : spendClaims(p, now);
  if (credit === null && spend.length === 0) return null;
  const r: AdmissionRequest = {
    id: c.serial, ownerId: c.row.ownerId, credit, spend, rates: [], amount, tokens: 0, now,
    expiresAt: now + d.settings.upstreamTimeoutMs + RESERVATION_GRACE_MS,
  };
  const v = await d.admission.admit(r);
  if (v === null) {
    c.reservation = r;
    return null;
  }
  const holds = `this batch would hold ${usd(amount)} (its ${w.lines} lines at the batch price: up to ${w.input} input and ${w.output} output tokens)`;
  switch (v.kind) {
    case 'credit':
      return { status: 402, code: 'insufficient_balance', message: `Insufficient balance: ${holds}; ${usd(v.available)} is available (balance less calls and batches in progress) above the minimum balance of ${usd(v.claim.floor)}. Top up, or send fewer lines or lower max_tokens` };
    case 'spend': {
      const whose = v.claim.accountId === c.row.id ? 'this account' : `account #${v.claim.accountId} above this one`;
      const what = v.claim.kind === 'day' ? `DailyLimit of ${usd(v.claim.cap!)} for today (UTC)` : `HardLimit of ${usd(v.claim.cap!)} for this month (UTC)`;
      return { status: 402, code: v.claim.code, message: `Spend cap reached: ${whose} has spent or holds ${usd(v.committed)} of its ${what}; ${holds}` };
    }
    case 'rate':
      // No rate claim is made for a batch.
      return { status: 429, code: 'rate_limit_exceeded', message: 'Rate limit exceeded' };
    case 'unavailable': {
      const retry = Math.max(1, Math.ceil((v.retryAt - Date.now()) / 1000));
      return { status: 503, code: 'shared_state_unavailable', message: 'Balances and spend caps cannot be checked right now (shared state unavailable); retry shortly', headers: { 'retry-after': String(retry) } };
    }
  }
}

/**
 * The provider has the batch and its row (with `reserved`) is committed: the reservation becomes
 * a charge the database holds, so loads of the base (which read the row) and this charge never
 * count it twice once the base is read again.
 */
export function heldByRow(d: ReserveDeps, c: ProxyCall): void {
  const r = c.reservation;
  if (!r) return;
  c.reservation = null;
  d.admission.settle(r, { cost: r.amount, tokens: 0 }, Date.now());
  if (r.credit && r.amount > 0) d.admission.onWritten?.(new Map([[r.credit.accountId, r.amount]]));
}

/** The batch was not created: what it reserved goes back. */
export function releaseBatch(d: ReserveDeps, c: ProxyCall): void {
  const r = c.reservation;
  if (!r) return;
  c.reservation = null;
  d.admission.release(r, Date.now());
}

