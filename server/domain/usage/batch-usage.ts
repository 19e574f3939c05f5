/**
 * Batch usage apart from calls in the daily rollups: a provider batch's record is rolled up
 * under its model's name with this mark (`gpt-4o (batch)`), so usage_daily and
 * usage_subtree_daily keep batch spend on rows of its own through their (…, day, model) key,
 * with no column of their own, and every bill, line item and dashboard that reads them shows it
 * as such. Model names carry no spaces (the catalogue's, the providers'), so none ends so.
 */
const MARK = ' (batch)';

/** The rollup key of a record: its model, marked when it bills a provider batch. */
export const rollupModel = (model: string, batchId: string | undefined): string => (batchId ? `${model}${MARK}` : model);

/** A rollup key read back: the model and whether its usage is a batch's. */
export function fromRollupModel(key: string): { model: string; batch: boolean } {
  return key.endsWith(MARK) && key.length > MARK.length ? { model: key.slice(0, -MARK.length), batch: true } : { model: key, batch: false };
}
