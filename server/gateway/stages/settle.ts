/**
 * Stage 7, settle: bills what reached the client — cost from the model's price, the account's
 * Rates and Factor; the usage record (with the request ID); the admission reservation replaced
 * by the actual cost and tokens (credit, spend caps, token limits). A passed-through upstream
 * error is not billed and, like a call that delivered nothing, releases its reservation
 * (`releaseReservation`, run by the pipeline whatever happened); a stream cut before its usage
 * arrived is billed by estimate, and so is a whole answer that came without usage. Refuses
 * nothing: the answer is already out.
 */
import { costOf, type TokenUsage } from '../../domain/pricing/cost';
import { policyPrice } from '../../domain/pricing/unpriced-policy';
import type { UsageSink } from '../../domain/usage/types';
import type { AdmissionStore } from '../admission/store';
import type { ProxyCall } from '../call';
import type { Delivered } from '../dispatch/attempt';
import type { SwitchOver } from '../key-health/switch-over';
import { estimateUsage, estimateWholeUsage } from '../dispatch/response-usage';
import { equivalentTokens, unitCallCost } from '../../domain/pricing/units';
import { unitMeterOf, unitPriceOf, usedUnits } from '../meter';
import { usageUnitsOf, type UsageUnits } from '../../domain/usage/units';
import { keyKindOf } from '../../state/provider-keys/key-pool';

export interface SettleDeps {
  usage: Pick<UsageSink, 'record'>;
  switchOver: Pick<SwitchOver, 'noteAbnormal'>;
  admission: Pick<AdmissionStore, 'settle' | 'release'>;
}

const ZERO: TokenUsage = { prompt: 0, completion: 0, reasoning: 0, cached: 0, cacheWrite: 0 };

/** Recording is a synchronous append; the database write happens later in the recorder. */
export function settle(d: SettleDeps, c: ProxyCall, o: Delivered): void {
  if (o.status >= 300) return;
  const now = Date.now();
  const level = c.servedLevel;
  const model = c.servedModel;
  if (o.abnormal) d.switchOver.noteAbnormal(c.row.ownerId, level, now);
  const row = c.row;
  const meter = unitMeterOf(c);
  let usage = o.usage;
  let credit: number;
  let billedUnits: UsageUnits | undefined;
  if (meter !== null) {
    // Billed by its unit; its equivalent tokens fill the record's token columns and the token limits.
    const price = unitPriceOf(c, meter, model);
    const units = usedUnits(c, meter, price, o);
    c.units = units;
    billedUnits = usageUnitsOf(meter, units);
    c.billedUnits = billedUnits ?? null;
    usage = equivalentTokens(units);
    credit = unitCallCost(units, price, c.owner.unpricedPolicy, row.rates, row.factor);
  } else {
    if (o.streamed && !o.complete) usage = estimateUsage(usage, c.raw.length, o.events);
    else if (!usage && o.body) usage = estimateWholeUsage(c.raw.length, o.body.length);
    usage ??= ZERO;
    credit = costOf(usage, policyPrice(model, c.owner.pricing, c.owner.unpricedPolicy, c.servedPriceAs), row.rates, row.factor);
    // The searches the provider ran are billed per search beside the tokens, and kept with them.
    if (usage.webSearches) c.billedUnits = billedUnits = { web_searches: usage.webSearches };
  }
  c.usage = usage;
  c.credit = credit;
  d.usage.record({
    accountId: row.id,
    ownerId: row.ownerId,
    dna: row.dna,
    model,
    level,
    keyId: c.servedBy!.id,
    keyKind: keyKindOf(c.servedBy!),
    endpoint: c.path,
    prompt: usage.prompt,
    completion: usage.completion,
    reasoning: usage.reasoning,
    cached: usage.cached,
    creditUsed: credit,
    status: o.abnormal || o.clientGone ? 'abnormal' : 'ok',
    at: new Date(now),
    requestId: c.id,
    durationMs: performance.now() - c.startedAt,
    firstByteMs: c.headMs >= 0 ? c.headMs : undefined,
    units: billedUnits,
    ...(c.droppedTools.length ? { droppedTools: c.droppedTools } : {}),
  });
  const r = c.reservation;
  if (r) {
    c.reservation = null;
    d.admission.settle(r, { cost: credit, tokens: usage.prompt + usage.completion }, now);
  }
}

/** Closes a reservation the call did not settle: nothing billable reached the client. */
export function releaseReservation(d: Pick<SettleDeps, 'admission'>, c: ProxyCall): void {
  const r = c.reservation;
  if (!r) return;
  c.reservation = null;
  d.admission.release(r, Date.now());
}
