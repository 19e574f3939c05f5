import type { Actor } from '../auth/caller';
import type { BillInfo, BillQuery, DescendantBillInfo, DescendantBillQuery } from './schemas';

export interface BillingService {
  /** `/dashboard/bill`: the caller's own usage over a period (today by default). */
  bill(actor: Actor, query: BillQuery): Promise<BillInfo>;
  /** `/x-bill`: the caller's descendants (the caller itself not counted), all or filtered by `user`. */
  descendants(actor: Actor, query: DescendantBillQuery): Promise<DescendantBillInfo>;
}
