import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Db } from '../../adapters/storage/database';
import { databaseIdentity, usageBatches } from '../../adapters/storage/schema';
import { readLines, type OrphanRun } from './journal';

/** This database's identity (made on first use): the name of its usage journal directory. */
export async function databaseId(db: Db): Promise<string> {
  await db.insert(databaseIdentity).values({ one: true, id: randomUUID() }).onConflictDoNothing();
  const [row] = await db.select({ id: databaseIdentity.id }).from(databaseIdentity).limit(1);
  return row.id;
}

/**
 * Which of an orphaned run's journal events are already in the database: the ranges its own
 * `written` marks name, and those of its batches in usage_batches (a batch committed in the last
 * moments before a crash may lack its mark: its ID, `<run>/<from>-<to>`, says so).
 */
export async function writtenIn(db: Db, orphan: OrphanRun): Promise<(seq: number) => boolean> {
  const done: [number, number][] = [];
  for await (const line of readLines(orphan.segments)) if (line?.kind === 'written') done.push([line.from, line.to]);
  const prefix = `${orphan.run}/`;
  const ids = await db.select({ id: usageBatches.id }).from(usageBatches)
    .where(sql`${usageBatches.id} >= ${prefix} and ${usageBatches.id} < ${orphan.run + '0'}`);
  for (const { id } of ids) {
    const m = /\/(\d+)-(\d+)$/.exec(id);
    if (m) done.push([Number(m[1]), Number(m[2])]);
  }
  return (seq) => done.some(([f, t]) => seq >= f && seq <= t);
}
