import type { Actor } from '../auth/caller';
import type { Page } from '../trpc';
import type { ProviderKey, ProviderKeyCreate, ProviderKeyListQuery, ProviderKeyPatch, ProviderKeyResult } from './schemas';

export interface ProviderKeyService {
  list(actor: Actor, query: ProviderKeyListQuery): Promise<Page<ProviderKey>>;
  /** `selector`: a numeric ID, `L{n}` or a provider host. */
  select(actor: Actor, selector: string, paging: { page?: number; size?: number }): Promise<Page<ProviderKey>>;
  create(actor: Actor, input: ProviderKeyCreate): Promise<ProviderKeyResult>;
  update(actor: Actor, id: number, patch: ProviderKeyPatch): Promise<ProviderKeyResult>;
  remove(actor: Actor, id: number): Promise<ProviderKeyResult>;
}
