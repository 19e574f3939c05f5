import { count, eq } from 'drizzle-orm';
import type { Db } from '../adapters/storage/database';
import { accountKeys, accounts } from '../adapters/storage/schema';
import { generateAccountKey, hashKey, hint } from '../adapters/security/crypto';

export interface RootBootstrap {
  /** Set only when this call created Root with a generated key: print it once. */
  generatedKey?: string;
  created: boolean;
}

/** On an empty database, creates Root (ID 1, DNA `.1.`) with ROOT_KEY or a generated key. */
export async function ensureRoot(db: Db, rootKey: string | undefined, email = 'root@localhost'): Promise<RootBootstrap> {
  const [{ n }] = await db.select({ n: count() }).from(accounts);
  if (n > 0) return { created: false };
  const key = rootKey ?? generateAccountKey();
  await db.transaction(async (tx) => {
    const [root] = await tx.insert(accounts).values({ name: 'root', email, alias: 'Root', role: 'root', ownerId: 0, dna: '.pending.', level: 1 }).returning({ id: accounts.id });
    await tx.update(accounts).set({ ownerId: root.id, dna: `.${root.id}.` }).where(eq(accounts.id, root.id));
    await tx.insert(accountKeys).values({ accountId: root.id, keyHash: hashKey(key), hint: hint(key) });
  });
  return { created: true, generatedKey: rootKey ? undefined : key };
}
