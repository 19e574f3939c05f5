import type { ModelList } from '../../../contract/dashboard/schemas';
import type { OwnerRouting } from '../../state/owner-config/store';
import { cataloguedModelNames } from '../../domain/pricing/catalogue';
import { UNCATALOGUED_PRICES } from '../../domain/pricing/default-prices';
import { parseModelMapper, type PatternEntry } from '../../domain/mapping/mappers';
import { parseAllowModels } from '../../domain/access/allow-lists';
import { familyOfModel } from '../../domain/providers/families';
import { routedModel } from '../../domain/mapping/routed-model';
import type { PatternTable } from '../../domain/mapping/mappers';
import { modelPricing } from './model-prices';

const familyOf = (model: string) => familyOfModel(model)?.name;
const exact = (p: string) => !p.includes('*');

/**
 * The models a caller may name: those the catalogue prices by their makers' names (and the few
 * priced beside it), the Owner's PRICING overrides, and
 * the exact (wildcard-free) names of the Owner's MODEL_MAPPER (both sides), LEVEL_MAPPER and
 * the account's own ModelMapper; then narrowed by the account's AllowModels, read exactly as the
 * proxy reads it. `owned_by` is the provider family, or the family of the model an alias maps
 * to, or `system`. `pricing` is what the account pays for it (model-prices.ts), the name routed
 * through `mappers` (the account's ModelMapper, then its ancestors', nearest first) and the
 * Owner's MODEL_MAPPER as a call is.
 */
export function visibleModels(
  routing: OwnerRouting,
  account: { modelMapper: string; allowModels: string; rates: number; factor: number },
  mappers: readonly PatternTable<string>[],
): ModelList {
  let own: PatternEntry<string>[] = [];
  try { own = parseModelMapper(account.modelMapper); } catch { /* validated on write; a bad legacy value adds nothing */ }
  const target = new Map<string, string>();
  const names = new Set<string>([...cataloguedModelNames(), ...Object.keys(UNCATALOGUED_PRICES)]);
  for (const section of Object.values(routing.pricing)) for (const model of Object.keys(section ?? {})) names.add(model);
  for (const e of [...routing.modelMapperEntries, ...own]) {
    names.add(e.value);
    if (exact(e.pattern)) {
      names.add(e.pattern);
      target.set(e.pattern, e.value);
    }
  }
  for (const e of routing.levelMapperEntries) if (exact(e.pattern)) names.add(e.pattern);
  const allowed = parseAllowModels(account.allowModels);
  const data = [...names].filter((m) => exact(m) && allowed.allows(m)).sort().map((id) => ({
    id,
    object: 'model' as const,
    owned_by: familyOf(id) ?? familyOf(target.get(id) ?? '') ?? 'system',
    pricing: modelPricing(routedModel(id, mappers, routing.modelMapper), routing, account),
  }));
  return { object: 'list', data };
}
