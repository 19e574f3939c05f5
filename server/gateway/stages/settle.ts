/**
 * Stage 7, settle: bills what reached the client — cost from the model's price, the account's
 * Rates and Factor; the usage record; tokens added to the token limits; the balance lowered.
 * A passed-through upstream error is not billed; a stream cut before its usage arrived is
 * billed by estimate. Refuses nothing: the answer is already out.
 */
import { costOf, priceFor, type TokenUsage } from '../../domain/pricing/cost';
import type { UsageSink } from '../../domain/usage/types';
import type { Balances } from '../admission/balances';
import type { LimitStore } from '../limits/counters';
import type { ProxyCall } from '../call';
import type { Delivered } from '../dispatch/attempt';
import { switchScope } from '../dispatch/levels';
import { estimateUsage } from '../dispatch/response-usage';

export interface SettleDeps {
  usage: Pick<UsageSink, 'record'>;
  limits: Pick<LimitStore, 'noteAbnormal' | 'addTokens'>;
  balances: Pick<Balances, 'spend'>;
}

const ZERO: TokenUsage = { prompt: 0, completion: 0, reasoning: 0, cached: 0, cacheWrite: 0 };

/** Recording is a synchronous append; the database write happens later in the recorder. */
export function settle(d: SettleDeps, c: ProxyCall, o: Delivered): void {
  if (o.status >= 300) return;
  const now = Date.now();
  const level = c.servedLevel;
  const model = c.servedModel;
  if (o.abnormal) d.limits.noteAbnormal(switchScope(c.row.ownerId, level), now);
  let usage = o.usage;
  if (o.streamed && !o.complete) usage = estimateUsage(usage, c.raw.length, o.events);
  usage ??= ZERO;
  const row = c.row;
  const credit = costOf(usage, priceFor(model, c.owner.pricing), row.rates, row.factor);
  d.usage.record({
    accountId: row.id,
    ownerId: row.ownerId,
    dna: row.dna,
    model,
    level,
    keyId: c.servedBy!.id,
    endpoint: c.path,
    prompt: usage.prompt,
    completion: usage.completion,
    reasoning: usage.reasoning,
    cached: usage.cached,
    creditUsed: credit,
    status: o.abnormal || o.clientGone ? 'abnormal' : 'ok',
    at: new Date(now),
  });
  if (c.checks.length) d.limits.addTokens(c.checks, usage.prompt + usage.completion, now);
  if (!c.profile.exempt) d.balances.spend(row.id, credit);
}
