/**
 * A batch being created: its gateway_batches row is committed BEFORE the provider is asked,
 * under a gateway ID (`pending_<uuid>`, status `creating`) holding the batch's reservation, so
 * an instance killed after the provider accepts the batch but before the row gets the
 * provider's ID leaves a row that still holds the money and names the batch. The create
 * replaces the pending ID by the provider's in one UPDATE; a refused create deletes the row.
 * A row left `creating` (its creator died) is recovered by the poller after a grace: the key's
 * batches are listed and the one that is this row's is adopted (then polled and billed as
 * usual), or, when the provider has none, the row is released with an operation-log entry.
 *
 * Which provider batch is the row's: OpenAI's carries the pending ID in its `metadata`
 * (`switchyard_batch`), stripped from what clients see. Anthropic's Message Batches take no
 * metadata: the row's batch is the key's one batch created within the row's window (from the
 * row's creation to the upstream timeout after it, a minute of clock skew either side) with the
 * row's request count that no other row already names; none or several → not adopted.
 */
import { randomUUID } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import { errorFields } from '../../core/log';
import { gatewayBatches } from '../../adapters/storage/schema';
import type { Refusal } from '../errors';
import { CREATING, insertBatch, type BatchRow } from './records';
import type { ProxyCall } from '../call';
import { heldByRow } from './reserve';
import type { BatchApi } from './routes';
import { callWhole, type BatchTarget } from './upstream';
import { jsonOf, type BatchDeps } from './service';
import { releaseUnfinished } from './settlement';

export { CREATING };
/** OpenAI metadata key carrying the pending ID. */
export const MARKER = 'switchyard_batch';
/** A row left `creating` is looked for at the provider no sooner than this after its creation (and after the upstream timeout). */
export const PENDING_GRACE_MS = 120_000;
/** Clock skew allowed between the gateway and the provider when matching an Anthropic batch by its time. */
const SKEW_MS = 60_000;

export const pendingId = () => `pending_${randomUUID()}`;
export const isPending = (row: Pick<BatchRow, 'status'>) => row.status === CREATING;

/** OpenAI's metadata limits (https://platform.openai.com/docs/api-reference/batch/create: 16 pairs, keys ≤ 64, values ≤ 512 characters). */
const MAX_PAIRS = 16;

/** The client's metadata with the pending ID added, or a refusal when it leaves no room for it. */
export function withMarker(meta: unknown, id: string): { metadata: Record<string, string> } | { refusal: Refusal } {
  const invalid = (message: string) => ({ refusal: { status: 400, code: 'invalid_request', message } });
  if (meta === undefined || meta === null) return { metadata: { [MARKER]: id } };
  if (typeof meta !== 'object' || Array.isArray(meta)) return invalid("Invalid type for 'metadata': expected an object.");
  const m = meta as Record<string, unknown>;
  if (MARKER in m) return invalid(`metadata.${MARKER}: this key is kept by the gateway (it names the batch while it is created); use another key`);
  if (Object.keys(m).length >= MAX_PAIRS) return invalid(`metadata: at most ${MAX_PAIRS - 1} keys through this gateway (OpenAI takes ${MAX_PAIRS}; the gateway keeps one, ${MARKER})`);
  return { metadata: { ...(m as Record<string, string>), [MARKER]: id } };
}

/** An OpenAI Batch object as the client sees it: the gateway's marker taken out of its metadata (null when nothing else is left). */
export function withoutMarker<T>(o: T): T {
  if (!o || typeof o !== 'object') return o;
  const b = o as Record<string, any>;
  if (!b.metadata || typeof b.metadata !== 'object' || !(MARKER in b.metadata)) return o;
  const { [MARKER]: _, ...rest } = b.metadata;
  return { ...b, metadata: Object.keys(rest).length ? rest : null } as T;
}

/** The pending row committed, and the call's reservation handed to it (heldByRow): from here the row holds the money. */
export async function holdPending(d: BatchDeps, c: ProxyCall, row: typeof gatewayBatches.$inferInsert): Promise<void> {
  await insertBatch(d.db, { ...row, status: CREATING });
  heldByRow(d, c);
}

/** Test hook: the provider has the batch, its row still the pending one (a kill lands here). */
export async function pauseBeforeAdopt(d: BatchDeps, pending: string, id: string): Promise<void> {
  if (!d.pauseBeforeAdoptMs) return;
  d.log.info('batch_create_paused', { batch: id, pending, ms: d.pauseBeforeAdoptMs });
  await new Promise((r) => setTimeout(r, d.pauseBeforeAdoptMs));
}

/** The pending row takes the provider's ID; throws when the row is no longer pending (released meanwhile), so the batch is cancelled. */
export async function adopt(db: BatchDeps['db'], pending: string, id: string, status: string): Promise<void> {
  const won = await db.update(gatewayBatches).set({ id, status })
    .where(and(eq(gatewayBatches.id, pending), eq(gatewayBatches.status, CREATING), isNull(gatewayBatches.settledAt)))
    .returning({ id: gatewayBatches.id });
  if (won.length === 0) throw new Error(`the pending batch row ${pending} is no longer open`);
}

/** The provider refused (or never got) the create: the row and its hold go at once. */
export async function dropPending(d: BatchDeps, row: Pick<BatchRow, 'id' | 'accountId' | 'ownerId'>): Promise<void> {
  try {
    await d.db.transaction(async (tx) => {
      await tx.delete(gatewayBatches).where(and(eq(gatewayBatches.id, row.id), eq(gatewayBatches.status, CREATING)));
      if (row.accountId !== row.ownerId) await d.changes?.announce(tx, [{ k: 'credit', id: row.accountId }]);
    });
  } catch (err) {
    // Left to the poller: it finds no batch at the provider and releases the row.
    d.log.warn('batch_pending_not_dropped', { batch: row.id, ...errorFields(err) });
  }
  d.admission.invalidate(row.accountId);
}

/** How long a row stays `creating` before the poller looks for its batch. */
export function pendingGrace(d: BatchDeps): number {
  // After the row's Anthropic matching window has closed: a batch created later is never taken for its.
  return d.pendingGraceMs ?? Math.max(PENDING_GRACE_MS, d.settings.upstreamTimeoutMs + SKEW_MS + 30_000);
}

/** Pages of the key's batches, newest first, down to `since` (epoch ms). */
async function* providerBatches(d: BatchDeps, t: BatchTarget, api: BatchApi, since: number): AsyncGenerator<Record<string, any>> {
  let after: string | null = null;
  for (let page = 0; page < 50; page++) {
    const q = new URLSearchParams({ limit: api === 'openai' ? '100' : '1000' });
    if (after) q.set(api === 'openai' ? 'after' : 'after_id', after);
    const a = await callWhole(d, t, { method: 'GET', path: api === 'openai' ? '/batches' : '/messages/batches', query: q.toString() });
    const o = jsonOf(a);
    if (!o || !Array.isArray(o.data)) throw new Error(`the provider answered ${a.status} listing batches`);
    for (const b of o.data) {
      if (createdMs(api, b) < since) return;
      yield b;
    }
    if (!o.has_more || o.data.length === 0) return;
    after = o.last_id ?? o.data.at(-1)?.id ?? null;
    if (!after) return;
  }
}

function createdMs(api: BatchApi, b: Record<string, any>): number {
  if (api === 'openai') return typeof b.created_at === 'number' ? b.created_at * 1000 : 0;
  const at = typeof b.created_at === 'string' ? Date.parse(b.created_at) : NaN;
  return Number.isFinite(at) ? at : 0;
}

const requestTotal = (b: Record<string, any>) => Object.values(b.request_counts ?? {}).reduce<number>((n, v) => n + (typeof v === 'number' ? v : 0), 0);

/** The provider's batch that is this row's; null when there is none (or, Anthropic, no single one). */
async function findBatch(d: BatchDeps, row: BatchRow, t: BatchTarget): Promise<{ id: string; status: string } | null> {
  const from = row.createdAt.getTime() - SKEW_MS;
  if (row.api === 'openai') {
    for await (const b of providerBatches(d, t, 'openai', from)) {
      if (b.metadata?.[MARKER] === row.id && typeof b.id === 'string' && typeof b.status === 'string') return { id: b.id, status: b.status };
    }
    return null;
  }
  const to = row.createdAt.getTime() + d.settings.upstreamTimeoutMs + SKEW_MS;
  const found: { id: string; status: string }[] = [];
  for await (const b of providerBatches(d, t, 'anthropic', from)) {
    if (typeof b.id !== 'string' || createdMs('anthropic', b) > to || requestTotal(b) !== row.lines) continue;
    const [known] = await d.db.select({ id: gatewayBatches.id }).from(gatewayBatches).where(eq(gatewayBatches.id, b.id));
    if (!known) found.push({ id: b.id, status: String(b.processing_status) });
  }
  if (found.length > 1) d.log.warn('batch_pending_ambiguous', { batch: row.id, candidates: found.length });
  return found.length === 1 ? found[0] : null;
}

/**
 * A row its creator left `creating` (the poller, after the grace): adopted when the provider has
 * its batch, released (billed 0, operation log) when it has none. `t` null: the key is gone, and
 * nothing can be asked.
 */
export async function recoverPending(d: BatchDeps, row: BatchRow, t: BatchTarget | null, now: number): Promise<void> {
  if (now - row.createdAt.getTime() < pendingGrace(d)) return;
  let b: { id: string; status: string } | null = null;
  try {
    b = t ? await findBatch(d, row, t) : null;
  } catch (err) {
    // The provider cannot be asked now: tried again next round, until the batch's window is past.
    if (row.expiresAt.getTime() > now) throw err;
    d.log.warn('batch_pending_not_found', { batch: row.id, ...errorFields(err) });
  }
  if (b) {
    await adopt(d.db, row.id, b.id, b.status);
    d.log.warn('batch_pending_adopted', { batch: b.id, pending: row.id, account: row.accountId });
    return;
  }
  const why = t ? 'the provider has no batch for this create (it never reached the provider, or no single one matches)' : "the provider key for this create is gone";
  if (await releaseUnfinished(d, row, CREATING, why)) d.admission.invalidate(row.accountId);
}
