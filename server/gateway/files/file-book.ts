/**
 * The files uploaded through the gateway and the batch output and error files it hands out:
 * whose each is and which provider key holds it. A file lives in the provider organization of
 * the key that received it, so every read, its deletion and a batch naming it go to that key.
 *
 * The pair (file → key, account) is kept as a stored response's is (state/response-keys: in
 * Redis with REDIS_URL, else in the database, and in this instance's memory), so a read on any
 * instance finds the key without a database round trip; `batch_files` keeps each file's
 * metadata for lists, bills and batches, and is where the pair is read back once the shared
 * store has let it expire (RESPONSE_KEY_TTL_MS) or did not take it.
 */
import { and, asc, desc, eq, isNull, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../adapters/storage/database';
import { batchFiles, providerKeys } from '../../adapters/storage/schema';
import type { ResponseCreator, ResponseKeys } from '../../state/response-keys/response-keys';

/**
 * File IDs as providers make them: anything else is no file the gateway can note or hand out,
 * and never reaches a path upstream.
 */
export const FILE_ID = /^[A-Za-z0-9_-]{1,200}$/;

export type FileRow = typeof batchFiles.$inferSelect;

/** A file to note: who has it, where it is, and (a batch input) what its lines ask for. */
export interface NewFile {
  id: string;
  ownerId: number;
  accountId: number;
  keyId: number;
  purpose: string;
  filename?: string;
  bytes?: number;
  model?: string | null;
  url?: string | null;
  lines?: number;
  inputBound?: number;
  outputCapped?: number;
  uncappedLines?: number;
}

/** A page of an account's files, as OpenAI's `GET /v1/files` pages them. */
export interface FilePageQuery {
  limit: number;
  order: 'asc' | 'desc';
  after?: string;
  purpose?: string;
}

export class FileBook {
  constructor(private readonly db: Db, private readonly pairs: Pick<ResponseKeys, 'remember' | 'creatorOf'>) {}

  /**
   * Notes a file: its row, then its pair where every instance reads it. The batch routes call
   * it for a batch's output and error files, so their owner reads them at the key that ran it.
   * Noting a file again (a batch settled twice) changes nothing.
   */
  async rememberFile(f: NewFile): Promise<void> {
    await this.db.insert(batchFiles).values({
      id: f.id, ownerId: f.ownerId, accountId: f.accountId, keyId: f.keyId, purpose: f.purpose,
      filename: f.filename ?? '', bytes: f.bytes ?? 0, model: f.model ?? null, url: f.url ?? null,
      lines: f.lines ?? 0, inputBound: f.inputBound ?? 0, outputCapped: f.outputCapped ?? 0, uncappedLines: f.uncappedLines ?? 0,
    }).onConflictDoNothing();
    await this.pairs.remember({ ownerId: f.ownerId, accountId: f.accountId }, f.id, f.keyId);
  }

  /** The key holding the file and the account it belongs to; null for a file the gateway never handed out. */
  async holderOf(ownerId: number, fileId: string): Promise<ResponseCreator | null> {
    const pair = await this.pairs.creatorOf(ownerId, fileId);
    if (pair) return pair;
    const [row] = await this.db.select({ keyId: batchFiles.keyId, accountId: batchFiles.accountId }).from(batchFiles)
      .where(and(eq(batchFiles.id, fileId), eq(batchFiles.ownerId, ownerId)));
    return row ?? null;
  }

  /** The account's file (not deleted), with what its lines ask for: what a batch naming it reserves from. */
  async fileOf(who: { ownerId: number; accountId: number }, fileId: string): Promise<FileRow | null> {
    const [row] = await this.db.select().from(batchFiles)
      .where(and(eq(batchFiles.id, fileId), eq(batchFiles.ownerId, who.ownerId), eq(batchFiles.accountId, who.accountId), isNull(batchFiles.deletedAt)));
    return row ?? null;
  }

  /** One page of the account's files; `more` when others follow. Undefined when `after` is none of its files. */
  async page(who: { ownerId: number; accountId: number }, q: FilePageQuery): Promise<{ rows: FileRow[]; more: boolean } | undefined> {
    const mine = and(eq(batchFiles.accountId, who.accountId), eq(batchFiles.ownerId, who.ownerId), isNull(batchFiles.deletedAt));
    const where: (SQL | undefined)[] = [mine];
    if (q.purpose !== undefined) where.push(eq(batchFiles.purpose, q.purpose));
    if (q.after !== undefined) {
      const [at] = await this.db.select({ id: batchFiles.id }).from(batchFiles).where(and(mine, eq(batchFiles.id, q.after)));
      if (!at) return undefined;
      // Compared in the database, at its own precision; files made in the same instant are ordered by ID.
      const cursor = sql`(select ${batchFiles.createdAt}, ${batchFiles.id} from ${batchFiles} where ${batchFiles.id} = ${q.after})`;
      where.push(q.order === 'asc' ? sql`(${batchFiles.createdAt}, ${batchFiles.id}) > ${cursor}` : sql`(${batchFiles.createdAt}, ${batchFiles.id}) < ${cursor}`);
    }
    const by = q.order === 'asc' ? asc : desc;
    const rows = await this.db.select().from(batchFiles).where(and(...where)).orderBy(by(batchFiles.createdAt), by(batchFiles.id)).limit(q.limit + 1);
    return { rows: rows.slice(0, q.limit), more: rows.length > q.limit };
  }

  /** Marks the account's file deleted (its row stays for bills). */
  async forget(who: { ownerId: number; accountId: number }, fileId: string): Promise<void> {
    await this.db.update(batchFiles).set({ deletedAt: new Date() })
      .where(and(eq(batchFiles.id, fileId), eq(batchFiles.ownerId, who.ownerId), eq(batchFiles.accountId, who.accountId)));
  }

  /** Why a key no longer in the pool cannot be used: disabled or deleted. */
  async whyUnusable(ownerId: number, keyId: number): Promise<string> {
    const [k] = await this.db.select({ status: providerKeys.status }).from(providerKeys)
      .where(and(eq(providerKeys.id, keyId), eq(providerKeys.ownerId, ownerId)));
    if (!k) return 'has been deleted';
    // Why it was disabled may quote the provider: the Owner reads it in the console, not the caller.
    if (!k.status) return 'is disabled';
    return 'is not available on this instance yet; retry shortly';
  }
}
