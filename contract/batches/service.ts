import type { Actor } from '../auth/caller';
import type { BatchPage, BatchQuery, GatewayBatch } from './schemas';

/** The provider batches of the caller's subtree (created through /v1/batches and /v1/messages/batches). */
export interface BatchService {
  list(actor: Actor, query: BatchQuery): Promise<BatchPage>;
  /** One batch of the caller's subtree; 404 for any other. */
  get(actor: Actor, id: string): Promise<GatewayBatch>;
}
