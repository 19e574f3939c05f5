/**
 * Stage 3, map model: the model that is routed and billed (the account's ModelMapper, its
 * ancestors' nearest first, then the Owner's MODEL_MAPPER; one step only) and the Level it
 * starts on (the account's LevelMapper, the Owner's LEVEL_MAPPER, the account's Level).
 * Refuses nothing: whether the account may use them is the access stage's question.
 */
import type { ProxyCall } from '../call';
import { routedModel } from '../../domain/mapping/routed-model';

export function mapModel(c: ProxyCall): void {
  const { profile, owner } = c;
  const model = routedModel(c.requestedModel, profile.modelMappers, owner.modelMapper);
  c.model = model;
  c.level = profile.levelMapper.match(model) ?? owner.levelMapper.match(model) ?? c.row.level;
}
