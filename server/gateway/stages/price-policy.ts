/**
 * Stage 4b, price policy (after access checks, before admission): a model that neither the
 * default price table nor the Owner's PRICING knows is noted for the Owner (`/x-conf`
 * UnpricedModels) and, under UNPRICED_MODEL_POLICY `refuse` (the default), refused with 403
 * `model_not_priced`; under `bill:<in>,<out>` it goes on and is reserved and billed at that
 * fallback price. Root and Owners are never charged for their own calls, so they are served
 * either way (and the model is still noted).
 */
import type { Db } from '../../adapters/storage/database';
import { ownerConfigs } from '../../adapters/storage/schema';
import { errorFields, type Logger } from '../../core/log';
import { priceFor } from '../../domain/pricing/cost';
import type { UnpricedPolicy } from '../../domain/pricing/unpriced-policy';
import type { PricingOverrides } from '../../domain/pricing/overrides';
import type { ProxyCall } from '../call';
import type { Meter } from '../routes';
import { unitPriceFor } from '../../domain/pricing/units';
import type { Verdict } from '../errors';

/** The owner_configs key of a requested unpriced model (as the configuration service reads it). */
const KEY_PREFIX = '_UNPRICED:';
/** A model already noted is written again (its last-seen time) at most this often per instance. */
const REWRITE_MS = 60_000;
/** New unpriced models noted per Owner and hour per instance: model names come from clients. */
const NEW_PER_HOUR = 100;

export interface PricePolicyDeps {
  unpriced: Pick<UnpricedModels, 'note'>;
}

/** Whether the call may go on; synchronous (the note is written in the background). */
export function checkPrice(d: PricePolicyDeps, c: ProxyCall): Verdict {
  if (isPriced(c.route.meter, c.model, c.owner.pricing)) return null;
  d.unpriced.note(c.row.ownerId, c.model);
  if (c.owner.unpricedPolicy.kind === 'bill' || c.profile.exempt) return null;
  return {
    status: 403,
    code: 'model_not_priced',
    message: `Model ${c.model} has no price on this gateway, so it is not served; the Owner can add it to PRICING or set UNPRICED_MODEL_POLICY`,
  };
}

/** Whether a MODEL_FAILOVER fallback may be tried for this call: priced, or allowed by the policy. */
export function mayServeModel(model: string, pricing: PricingOverrides, policy: UnpricedPolicy, exempt: boolean, meter: Meter = 'tokens'): boolean {
  return exempt || policy.kind === 'bill' || isPriced(meter, model, pricing);
}

/** Whether the route's price table (ChatPricing for tokens, the route's own PRICING section otherwise) knows the model. */
function isPriced(meter: Meter, model: string, pricing: PricingOverrides): boolean {
  return meter === 'tokens' ? priceFor(model, pricing).known : unitPriceFor(meter, model, pricing).known;
}

/**
 * The requested models without a price, per Owner, kept in owner_configs (`_UNPRICED:<model>`,
 * first seen as the value, last seen as updated_at) so every instance's notes reach `/x-conf`.
 * Written off the hot path, at most once a minute per model and instance.
 */
export class UnpricedModels {
  private written = new Map<string, number>();
  private fresh = new Map<number, { hour: number; count: number }>();
  private background = new Set<Promise<unknown>>();

  constructor(private readonly db: Db, private readonly log: Pick<Logger, 'info' | 'debug'>) {}

  note(ownerId: number, model: string, now = Date.now()): void {
    const id = `${ownerId}\n${model}`;
    const last = this.written.get(id);
    if (last !== undefined && now - last < REWRITE_MS) return;
    if (last === undefined) {
      const hour = Math.floor(now / 3_600_000);
      let f = this.fresh.get(ownerId);
      if (!f || f.hour !== hour) this.fresh.set(ownerId, (f = { hour, count: 0 }));
      if (f.count >= NEW_PER_HOUR) return;
      f.count++;
      this.log.info('unpriced_model_requested', { owner: ownerId, model });
    }
    if (this.written.size > 10_000) this.written.clear();
    this.written.set(id, now);
    const at = new Date(now);
    const p = this.db.insert(ownerConfigs).values({ ownerId, key: `${KEY_PREFIX}${model}`, value: at.toISOString(), updatedAt: at })
      .onConflictDoUpdate({ target: [ownerConfigs.ownerId, ownerConfigs.key], set: { updatedAt: at } })
      .catch((err) => this.log.debug('unpriced_model_note_failed', { owner: ownerId, ...errorFields(err) }));
    this.background.add(p);
    void p.finally(() => this.background.delete(p));
  }

  /** Waits for the notes being written (shutdown, tests). */
  async settle(): Promise<void> {
    while (this.background.size) await Promise.allSettled([...this.background]);
  }
}
