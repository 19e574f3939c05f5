import type { Actor } from '../../../contract/services';
import type { Tx } from '../../adapters/storage/database';
import { operationLogs } from '../../adapters/storage/schema';

export interface LogEntry {
  action: string;
  targetId?: number | null;
  /** Human-readable summary. Never include secrets. */
  details?: string | Record<string, unknown>;
  status?: 'success' | 'failure';
}

/** Writes an operation-log entry inside the caller's transaction, so it exists iff the change does. */
export async function recordOperation(tx: Tx, actor: Actor, entry: LogEntry): Promise<void> {
  await tx.insert(operationLogs).values({
    ownerId: actor.caller.ownerId,
    operatorId: actor.caller.id,
    operatorDna: actor.caller.dna,
    action: entry.action,
    targetId: entry.targetId ?? null,
    details: typeof entry.details === 'string' ? entry.details : JSON.stringify(entry.details ?? {}),
    ip: actor.ip,
    status: entry.status ?? 'success',
  });
}
