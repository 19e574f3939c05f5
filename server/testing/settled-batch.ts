import { eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { gatewayBatches } from '../adapters/storage/schema';
import { OwnerConfigStore } from '../state/owner-config/store';
import { recordWriterFor } from '../state/usage/record-writers';
import { settleBatch, type BatchBill } from '../gateway/batches/settlement';
import type { TestGateway } from './gateway';
import type { TestAccount } from './accounts';

/** One OpenAI batch output line: a 200 with this usage, or a provider error (no usage billed). */
export const outputLine = (n: number, usage: { prompt_tokens: number; completion_tokens: number } | null) => JSON.stringify(usage
  ? { id: `batch_req_${n}`, custom_id: `line-${n}`, response: { status_code: 200, request_id: `r${n}`, body: { usage } }, error: null }
  : { id: `batch_req_${n}`, custom_id: `line-${n}`, response: { status_code: 500, request_id: `r${n}`, body: { error: { message: 'server error' } } }, error: null });

/**
 * A provider batch of `account`'s billed by the gateway's own settlement (gateway/batches): the
 * batch's row as the create route leaves it, then its end with this output, so the usage record,
 * its rollups and the credit deduction are exactly what the poller writes.
 */
export async function settleTestBatch(gw: TestGateway, account: TestAccount, b: { id: string; model: string; output: string[]; at?: Date }): Promise<BatchBill> {
  const { db, kind } = gw.gateway.database;
  const row = {
    id: b.id, ownerId: account.ownerId, accountId: account.id, dna: account.dna, keyId: 1, level: 1, api: 'openai', endpoint: '/v1/chat/completions',
    model: b.model, inputFileId: 'file-test', status: 'in_progress', lines: b.output.length, reserved: 1,
    expiresAt: new Date(Date.now() + 86_400_000), createdAt: b.at ?? new Date(),
  };
  await db.insert(gatewayBatches).values(row);
  const [inserted] = await db.select().from(gatewayBatches).where(eq(gatewayBatches.id, b.id));
  const log = { warn: () => {}, info: () => {} };
  const bill = await settleBatch({ db, config: new OwnerConfigStore(db), writeRecords: recordWriterFor(kind), log }, inserted, {
    status: 'completed', billable: true, completed: b.output.length, failed: 0,
    output: async () => (async function* () { yield Buffer.from(`${b.output.join('\n')}\n`); })(),
  });
  expect(bill).not.toBeNull();
  return bill!;
}
