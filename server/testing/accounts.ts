import { eq } from 'drizzle-orm';
import type { TestGateway } from './gateway';
import { accountKeys, accounts } from '../adapters/storage/schema';
import { generateAccountKey, hashKey, hint } from '../adapters/security/crypto';
import { grantCredit } from '../state/credits/ledger';
import type { UsageEvent } from '../domain/usage/types';

export interface TestAccount {
  id: number;
  name: string;
  email: string;
  dna: string;
  ownerId: number;
  key: string;
}

type AccountFields = Partial<Omit<typeof accounts.$inferInsert, 'id' | 'parentId' | 'ownerId' | 'dna' | 'depth'>>;

let serial = 0;

/**
 * Test-only: inserts an account below `parent` (Root when omitted) with a key and a credit
 * card, skipping the accounts API (its rules and operation log). Prefer `createAccount`.
 */
export async function insertAccount(gw: TestGateway, opts: { parent?: TestAccount; credit?: number } & AccountFields = {}): Promise<TestAccount> {
  const { parent, credit = 0, ...fields } = opts;
  const db = gw.gateway.database.db;
  const n = ++serial;
  const name = fields.name ?? `acct${process.pid}x${n}`;
  const email = fields.email ?? `${name}@example.test`;
  const key = generateAccountKey();
  const [parentRow] = await db.select().from(accounts).where(eq(accounts.id, parent?.id ?? 1));
  return db.transaction(async (tx) => {
    const [row] = await tx.insert(accounts).values({
      ...fields, name, email, parentId: parentRow.id, ownerId: parentRow.ownerId, dna: `.pending${n}.`, depth: parentRow.depth + 1,
    }).returning({ id: accounts.id });
    const dna = `${parentRow.dna}${row.id}.`;
    const ownerId = fields.role === 'owner' ? row.id : parentRow.ownerId;
    await tx.update(accounts).set({ dna, ownerId }).where(eq(accounts.id, row.id));
    await tx.insert(accountKeys).values({ accountId: row.id, keyHash: hashKey(key), hint: hint(key) });
    if (credit > 0) await grantCredit(tx, row.id, credit, 180, 'test grant');
    return { id: row.id, name, email, dna, ownerId, key };
  });
}

/** Creates a subaccount of `parent` through `POST /x-users`, as a client would. */
export async function createAccount(gw: TestGateway, parent: TestAccount, body: Record<string, unknown> = {}): Promise<TestAccount> {
  const name = `usr${process.pid}x${++serial}`;
  const r = await gw.as(parent.key).post('/x-users', { Name: name, Email: `${name}@example.test`, CreditGranted: 5, ...body });
  if (r.status !== 201) throw new Error(`POST /x-users answered ${r.status}: ${r.text}`);
  const u = r.body.User;
  return { id: u.ID, name: u.Name, email: u.Email, dna: u.DNA, ownerId: u.OwnerID, key: u.SecretKey };
}

export const rootAccount = (gw: TestGateway): TestAccount => ({ id: 1, name: 'root', email: 'root@localhost', dna: '.1.', ownerId: 1, key: gw.rootKey });

/** A usage event of `account`, as the proxy reports one. */
export function usageOf(account: TestAccount, fields: Partial<UsageEvent> = {}): UsageEvent {
  return {
    accountId: account.id, ownerId: account.ownerId, dna: account.dna, model: 'gpt-4o', level: 1, keyId: null,
    endpoint: '/v1/chat/completions', prompt: 100, completion: 50, reasoning: 0, cached: 0, creditUsed: 0.01, status: 'ok', at: new Date(),
    ...fields,
  };
}
