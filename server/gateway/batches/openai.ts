/**
 * OpenAI's Batch API through the gateway (https://platform.openai.com/docs/api-reference/batch):
 * `POST /v1/batches` names an input file the caller uploaded through the gateway; the batch goes
 * to the provider key that holds that file and is billed at the file's model. The answers are the
 * provider's Batch objects under the provider's IDs. Only the account that created a batch sees
 * it: for any other the answer is the 404 of an ID never seen, and lists show its own only.
 */
import { BODY_REQUIRED } from '../stages/read-body';
import { checkAccess } from '../stages/access';
import { checkPrice, type UnpricedModels } from '../stages/price-policy';
import type { ProxyCall } from '../call';
import { CLIENT_LEFT, refuse, type Refusal } from '../errors';
import { enabledKey } from '../stages/dispatch';
import { CREATING, ownBatch, pageOfBatches, type BatchRow } from './records';
import { adopt, dropPending, holdPending, pauseBeforeAdopt, pendingId, withMarker, withoutMarker } from './pending';
import { BATCH_ID, OPENAI_BATCH_ENDPOINTS } from './routes';
import { batchTarget, callWhole } from './upstream';
import { fileWorstCase, releaseBatch, reserveBatch, worstCost } from './reserve';
import { callFor, isRefusal, jsonOf, keepOrCancel, onSeen, relay, targetOf, JSON_HEAD, type BatchDeps } from './service';
import { readBatch } from './provider-batch';
import { errorFields } from '../../core/log';

export type OpenAiBatchDeps = BatchDeps & { unpriced: Pick<UnpricedModels, 'note'> };

/** As OpenAI answers an ID it does not know in the caller's organization. */
const notFound = (id: string): Refusal => ({ status: 404, code: 'not_found', message: `No batch found with id '${id.slice(0, 200)}'.` });
const invalid = (message: string, code = 'invalid_request'): Refusal => ({ status: 400, code, message });

/** OpenAI's batch window: 24 hours, the only one it takes. */
export const BATCH_WINDOW_MS = 24 * 3600_000;
/** After the window, how long the gateway still waits for the provider's end before giving the reservation back. */
export const BATCH_MARGIN_MS = 3600_000;

export async function createOpenAiBatch(d: OpenAiBatchDeps, c: ProxyCall): Promise<void> {
  const body = await c.ex.readJsonObject(BODY_REQUIRED);
  if (!body.ok) return refuse(c, 'gone' in body ? CLIENT_LEFT : body.refusal);
  const doc = body.value!;
  const fileId = doc.input_file_id;
  if (typeof fileId !== 'string' || fileId === '') return refuse(c, invalid('input_file_id: Field required (the ID of a file uploaded with purpose "batch")'));
  if (typeof doc.endpoint !== 'string' || !OPENAI_BATCH_ENDPOINTS.has(doc.endpoint)) {
    return refuse(c, invalid(`endpoint: must be one of ${[...OPENAI_BATCH_ENDPOINTS].join(', ')}`));
  }
  if (doc.completion_window !== '24h') return refuse(c, invalid('completion_window: must be "24h"'));
  const file = BATCH_ID.test(fileId) && d.files ? await d.files.fileOf({ ownerId: c.row.ownerId, accountId: c.row.id }, fileId) : null;
  // Another account's file is no file, exactly as one never uploaded.
  if (!file) return refuse(c, { status: 404, code: 'not_found', message: `No such File object: ${fileId.slice(0, 200)}` });
  if (file.purpose !== 'batch' || !file.model || !file.url) return refuse(c, invalid(`File ${fileId} is not a batch input: upload it with purpose "batch"`));
  if (file.url !== doc.endpoint) return refuse(c, invalid(`The lines of file ${fileId} call ${file.url}, not ${doc.endpoint}`));
  // The lines go to the provider as they were uploaded: the batch runs and is billed at their model.
  c.requestedModel = file.model;
  c.model = file.model;
  const key = enabledKey(d.pool, c.row.ownerId, file.keyId);
  if (!key) {
    const why = d.files ? await d.files.whyUnusable(c.row.ownerId, file.keyId) : 'is disabled or has been deleted';
    return refuse(c, invalid(`The provider key holding file ${fileId} ${why}`, 'provider_key_unavailable'));
  }
  c.level = key.level;
  let v = checkAccess(c) ?? checkPrice(d, c);
  if (v) return refuse(c, v);
  const t = await batchTarget(d.kinds, key, 'openai', c.ex.headers);
  if (!t) return refuse(c, invalid(`The provider key holding file ${fileId} does not run batches`, 'provider_key_unavailable'));
  // The provider's batch carries the gateway's pending ID, so a batch whose row never got its ID is found again (pending.ts).
  const pending = pendingId();
  const marked = withMarker(doc.metadata, pending);
  if ('refusal' in marked) return refuse(c, marked.refusal);
  const worst = fileWorstCase(c, file, file.model);
  const amount = worstCost(c, file.model, worst);
  if ((v = await reserveBatch(d, c, amount, worst))) return refuse(c, v);
  try {
    if (c.ex.aborted) return;
    const row = {
      id: pending, ownerId: c.row.ownerId, accountId: c.row.id, dna: c.row.dna, keyId: key.id, level: key.level, api: 'openai',
      endpoint: file.url!, model: file.model!, inputFileId: fileId, status: CREATING, lines: file.lines,
      reserved: c.reservation?.amount ?? 0, expiresAt: new Date(Date.now() + BATCH_WINDOW_MS + BATCH_MARGIN_MS),
    };
    await holdPending(d, c, row);
    // No answer (timeout, dropped connection): the provider may have the batch; the poller finds it or releases the row.
    const a = await callFor(d, c, t, { method: 'POST', path: '/batches', body: Buffer.from(JSON.stringify({ ...doc, metadata: marked.metadata })) });
    if (!a) return;
    const b = readBatch('openai', jsonOf(a));
    if (a.status >= 300) {
      await dropPending(d, row);
      return relay(c, t, a);
    }
    if (!b) return relay(c, t, a);
    await pauseBeforeAdopt(d, pending, b.id);
    await keepOrCancel(d, t, 'openai', b.id, () => adopt(d.db, pending, b.id, b.status));
    relay(c, t, a, clientBody(a));
  } catch (err) {
    d.log.error('batch_create_failed', { request: c.id, ...errorFields(err) });
    throw err;
  } finally {
    releaseBatch(d, c);
  }
}

/** A provider's answer without the gateway's marker in its metadata (undefined: relayed as it is). */
function clientBody(a: Parameters<typeof relay>[2]): string | undefined {
  const o = jsonOf(a);
  if (!o || typeof o !== 'object') return undefined;
  const clean = o.object === 'list' && Array.isArray(o.data) ? { ...o, data: o.data.map(withoutMarker) } : withoutMarker(o);
  return clean === o ? undefined : JSON.stringify(clean);
}

/** OpenAI's list: newest first, `limit` 1–100 (default 20) after the batch `after`. */
export async function listOpenAiBatches(d: OpenAiBatchDeps, c: ProxyCall, query: string): Promise<void> {
  const q = new URLSearchParams(query);
  const limit = q.has('limit') ? Number(q.get('limit')) : 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) return refuse(c, invalid('limit: must be a whole number from 1 to 100', 'invalid_value'));
  const after = q.get('after') ?? undefined;
  const page = await pageOfBatches(d.db, c.row.id, 'openai', limit, { after });
  const data = await Promise.all(page.rows.map((row) => currentObject(d, c, row)));
  c.ex.send(200, JSON_HEAD, JSON.stringify({ object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.hasMore }));
}

/** A listed batch as its provider has it now; as the gateway last saw it when the provider cannot say. */
async function currentObject(d: OpenAiBatchDeps, c: ProxyCall, row: BatchRow): Promise<Record<string, unknown>> {
  const t = await targetOf(d, c, row, 'openai');
  if (!isRefusal(t)) {
    try {
      const a = await callWhole(d, t, { method: 'GET', path: `/batches/${row.id}` });
      const o = jsonOf(a);
      const b = readBatch('openai', o);
      if (b) {
        await onSeen(d, row, t, b).catch((err) => d.log.warn('batch_settle_failed', { batch: row.id, ...errorFields(err) }));
        return withoutMarker(o);
      }
    } catch (err) {
      d.log.warn('batch_list_read_failed', { batch: row.id, ...errorFields(err) });
    }
  }
  return fromRow(row);
}

const seconds = (at: Date | null) => (at ? Math.floor(at.getTime() / 1000) : null);

/** An OpenAI Batch object from what the gateway keeps, for a batch its provider cannot be asked about now. */
function fromRow(row: BatchRow): Record<string, unknown> {
  return {
    id: row.id, object: 'batch', endpoint: row.endpoint, errors: null, input_file_id: row.inputFileId, completion_window: '24h',
    status: row.status, output_file_id: null, error_file_id: null, created_at: seconds(row.createdAt),
    expires_at: seconds(new Date(row.createdAt.getTime() + BATCH_WINDOW_MS)),
    request_counts: { total: row.lines, completed: row.completedLines, failed: row.failedLines }, metadata: null,
  };
}

/** `GET /v1/batches/{id}`: the provider's object; a batch that has ended is billed before it is answered, so its output is then downloadable. */
export async function retrieveOpenAiBatch(d: OpenAiBatchDeps, c: ProxyCall, id: string): Promise<void> {
  const row = BATCH_ID.test(id) ? await ownBatch(d.db, c.row.id, 'openai', id) : null;
  if (!row) return refuse(c, notFound(id));
  const t = await targetOf(d, c, row, 'openai');
  if (isRefusal(t)) return refuse(c, t);
  const a = await callFor(d, c, t, { method: 'GET', path: `/batches/${id}` });
  if (!a) return;
  const b = readBatch('openai', jsonOf(a));
  if (b) await onSeen(d, row, t, b).catch((err) => d.log.warn('batch_settle_failed', { batch: id, ...errorFields(err) }));
  relay(c, t, a, clientBody(a));
}

/** `POST /v1/batches/{id}/cancel`: relayed; the batch is billed for its completed lines when the provider ends it. */
export async function cancelOpenAiBatch(d: OpenAiBatchDeps, c: ProxyCall, id: string): Promise<void> {
  const row = BATCH_ID.test(id) ? await ownBatch(d.db, c.row.id, 'openai', id) : null;
  if (!row) return refuse(c, notFound(id));
  const t = await targetOf(d, c, row, 'openai');
  if (isRefusal(t)) return refuse(c, t);
  const a = await callFor(d, c, t, { method: 'POST', path: `/batches/${id}/cancel` });
  if (!a) return;
  const b = readBatch('openai', jsonOf(a));
  if (b) await onSeen(d, row, t, b).catch((err) => d.log.warn('batch_settle_failed', { batch: id, ...errorFields(err) }));
  relay(c, t, a, clientBody(a));
}
