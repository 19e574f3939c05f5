import type { OwnerRouting } from '../../state/owner-config/store';
import type { PatternTable } from '../../domain/mapping/mappers';
import { parseResourceList, type AllowList } from '../../domain/access/allow-lists';
import { limitTable, type ModelLimit } from './profile';

/** The Owner's RESOURCES and MODEL_LIMITS in the form the access and admission stages read. */
export interface OwnerRules {
  resources: AllowList<string>;
  modelLimits: PatternTable<ModelLimit>;
}

const byRouting = new WeakMap<OwnerRouting, OwnerRules>();

/** Parsed once per Owner configuration: the store builds a new routing object on every change. */
export function ownerRules(owner: OwnerRouting): OwnerRules {
  let r = byRouting.get(owner);
  if (!r) byRouting.set(owner, (r = { resources: parseResourceList(owner.resources), modelLimits: limitTable(owner.modelLimits) }));
  return r;
}
