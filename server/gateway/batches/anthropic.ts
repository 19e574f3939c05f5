/**
 * Anthropic's Message Batches through the gateway
 * (https://docs.anthropic.com/en/api/creating-message-batches): the requests come inline, all
 * for one model; the batch is routed by that model as a call is (its Level, then SWITCH_OVER
 * backups) to a key that runs Message Batches natively (an `anthropic` key). Answers are the
 * provider's Message Batch objects with `results_url` pointing at this gateway, as the client
 * called it: the SDK fetches the results there with the account's key, never at the provider.
 * Only the account that created a batch sees it.
 */
import { BODY_REQUIRED } from '../stages/read-body';
import { mapModel } from '../stages/map-model';
import { checkAccess } from '../stages/access';
import { checkPrice, type UnpricedModels } from '../stages/price-policy';
import { modelNameProblem } from '../stages/model-name';
import type { ProxyCall } from '../call';
import { CLIENT_LEFT, refuse, type Refusal } from '../errors';
import type { SwitchOver } from '../key-health/switch-over';
import { levelPlan } from '../dispatch/levels';
import { dropped } from '../dispatch/relay';
import { errorFields } from '../../core/log';
import type { PooledKey } from '../../state/provider-keys/key-pool';
import { CREATING, ownBatch, pageOfBatches, type BatchRow } from './records';
import { adopt, dropPending, holdPending, pauseBeforeAdopt, pendingId } from './pending';
import { BATCH_ID } from './routes';
import { batchTarget, callStreamed, callWhole, servesBatches, type BatchTarget } from './upstream';
import { releaseBatch, requestsWorstCase, reserveBatch, worstCost } from './reserve';
import { callFor, failed, isRefusal, jsonOf, keepOrCancel, onSeen, relay, targetOf, JSON_HEAD, type BatchDeps } from './service';
import { readBatch } from './provider-batch';
import { BATCH_MARGIN_MS, BATCH_WINDOW_MS } from './openai';

export type AnthropicBatchDeps = BatchDeps & { unpriced: Pick<UnpricedModels, 'note'>; switchOver: Pick<SwitchOver, 'isSwitched'> };

const notFound = (id: string): Refusal => ({ status: 404, code: 'not_found', message: `No message batch found with id '${id.slice(0, 200)}'.` });
const invalid = (message: string, code = 'invalid_request'): Refusal => ({ status: 400, code, message });

/** Anthropic's limit on one batch's requests. */
const MAX_REQUESTS = 100_000;

/** This gateway as the client called it: where `results_url` points. */
export function publicBase(headers: Readonly<Record<string, string>>): string {
  const host = headers['x-forwarded-host']?.split(',')[0].trim() || headers.host || 'localhost';
  const proto = headers['x-forwarded-proto']?.split(',')[0].trim() === 'https' ? 'https' : 'http';
  return `${proto}://${host}`;
}

/** A Message Batch object as the client sees it: `results_url` at this gateway (null until the batch has ended, as Anthropic's). */
function pointedHere(c: ProxyCall, o: Record<string, unknown>): Record<string, unknown> {
  if (typeof o.id !== 'string') return o;
  return { ...o, results_url: o.results_url ? `${publicBase(c.ex.headers)}/v1/messages/batches/${o.id}/results` : null };
}

function relayPointed(c: ProxyCall, t: BatchTarget, a: Parameters<typeof relay>[2]): void {
  const o = jsonOf(a);
  relay(c, t, a, o && typeof o === 'object' ? JSON.stringify(pointedHere(c, o)) : undefined);
}

/** The first key of the model's Levels that runs Message Batches. */
function batchKey(d: AnthropicBatchDeps, c: ProxyCall): PooledKey | null {
  const ownerId = c.row.ownerId;
  for (const level of levelPlan(c.level, c.owner.switchOver, ownerId, d.switchOver, c.profile.levels, Date.now())) {
    const passed = new Set<number>();
    for (let key = d.pool.pick(ownerId, level); key; key = d.pool.pick(ownerId, level, passed)) {
      passed.add(key.id);
      if (servesBatches(d.kinds, key, 'anthropic')) return key;
    }
  }
  return null;
}

export async function createAnthropicBatch(d: AnthropicBatchDeps, c: ProxyCall): Promise<void> {
  const body = await c.ex.readJsonObject(BODY_REQUIRED);
  if (!body.ok) return refuse(c, 'gone' in body ? CLIENT_LEFT : body.refusal);
  const doc = body.value!;
  const requests = doc.requests;
  if (!Array.isArray(requests) || requests.length === 0) return refuse(c, invalid('requests: Field required (a non-empty array of {custom_id, params})'));
  if (requests.length > MAX_REQUESTS) return refuse(c, invalid(`requests: at most ${MAX_REQUESTS} requests in one batch`));
  const params: Record<string, unknown>[] = [];
  let model: string | undefined;
  for (let i = 0; i < requests.length; i++) {
    const r = requests[i] as { custom_id?: unknown; params?: unknown } | null;
    if (!r || typeof r !== 'object' || typeof r.custom_id !== 'string' || !r.params || typeof r.params !== 'object' || Array.isArray(r.params)) {
      return refuse(c, invalid(`requests.${i}: must be an object with custom_id (a string) and params (a Messages request)`));
    }
    const p = r.params as Record<string, unknown>;
    if (typeof p.model !== 'string' || p.model === '') return refuse(c, invalid(`requests.${i}.params.model: Field required`));
    if (model === undefined) model = p.model;
    else if (p.model !== model) return refuse(c, invalid(`requests.${i}.params.model: a batch runs one model (${model}), this request names ${p.model}`, 'mixed_models'));
    params.push(p);
  }
  const problem = modelNameProblem(model!);
  if (problem) return refuse(c, invalid(problem, 'invalid_model'));
  c.requestedModel = model!;
  mapModel(c);
  let v = checkAccess(c) ?? checkPrice(d, c);
  if (v) return refuse(c, v);
  const key = batchKey(d, c);
  if (!key) return refuse(c, invalid(`No provider key on this account's Levels for ${c.model} runs Anthropic message batches (an anthropic key is needed)`, 'no_batch_key'));
  const t = await batchTarget(d.kinds, key, 'anthropic', c.ex.headers);
  if (!t) return refuse(c, invalid(`No provider key for ${c.model} runs Anthropic message batches`, 'no_batch_key'));
  const worst = requestsWorstCase(c, params, c.model);
  const amount = worstCost(c, c.model, worst);
  if ((v = await reserveBatch(d, c, amount, worst))) return refuse(c, v);
  try {
    if (c.ex.aborted) return;
    // A mapped model is what the provider runs: each request names it.
    if (c.model !== model) for (const p of params) p.model = c.model;
    const raw = c.model !== model ? Buffer.from(JSON.stringify(doc)) : body.raw;
    const row = {
      id: pendingId(), ownerId: c.row.ownerId, accountId: c.row.id, dna: c.row.dna, keyId: key.id, level: key.level, api: 'anthropic',
      endpoint: '/v1/messages', model: c.model, inputFileId: null, status: CREATING, lines: params.length,
      reserved: c.reservation?.amount ?? 0, expiresAt: new Date(Date.now() + BATCH_WINDOW_MS + BATCH_MARGIN_MS),
    };
    // The row holds the reservation before the provider is asked (pending.ts): a kill after its accept leaves it findable.
    await holdPending(d, c, row);
    // No answer (timeout, dropped connection): the provider may have the batch; the poller finds it or releases the row.
    const a = await callFor(d, c, t, { method: 'POST', path: '/messages/batches', body: raw });
    if (!a) return;
    const b = readBatch('anthropic', jsonOf(a));
    if (a.status >= 300) {
      await dropPending(d, row);
      return relay(c, t, a);
    }
    if (!b) return relay(c, t, a);
    await pauseBeforeAdopt(d, row.id, b.id);
    await keepOrCancel(d, t, 'anthropic', b.id, () => adopt(d.db, row.id, b.id, b.status));
    relayPointed(c, t, a);
  } finally {
    releaseBatch(d, c);
  }
}

/** Anthropic's list: newest first, `limit` 1–1000 (default 20), `before_id` / `after_id`. */
export async function listAnthropicBatches(d: AnthropicBatchDeps, c: ProxyCall, query: string): Promise<void> {
  const q = new URLSearchParams(query);
  const limit = q.has('limit') ? Number(q.get('limit')) : 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) return refuse(c, invalid('limit: must be a whole number from 1 to 1000'));
  const after = q.get('after_id') ?? undefined;
  const before = q.get('before_id') ?? undefined;
  if (after !== undefined && before !== undefined) return refuse(c, invalid('before_id and after_id cannot be given together'));
  const page = await pageOfBatches(d.db, c.row.id, 'anthropic', limit, { after, before });
  const data = await Promise.all(page.rows.map((row) => currentObject(d, c, row)));
  c.ex.send(200, JSON_HEAD, JSON.stringify({ data, has_more: page.hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null }));
}

async function currentObject(d: AnthropicBatchDeps, c: ProxyCall, row: BatchRow): Promise<Record<string, unknown>> {
  const t = await targetOf(d, c, row, 'anthropic');
  if (!isRefusal(t)) {
    try {
      const a = await callWhole(d, t, { method: 'GET', path: `/messages/batches/${row.id}` });
      const o = jsonOf(a);
      const b = readBatch('anthropic', o);
      if (b) {
        await onSeen(d, row, t, b).catch((err) => d.log.warn('batch_settle_failed', { batch: row.id, ...errorFields(err) }));
        return pointedHere(c, o);
      }
    } catch (err) {
      d.log.warn('batch_list_read_failed', { batch: row.id, ...errorFields(err) });
    }
  }
  return fromRow(c, row);
}

const iso = (at: Date | null) => (at ? at.toISOString() : null);

/** A Message Batch object from what the gateway keeps, for a batch its provider cannot be asked about now. */
function fromRow(c: ProxyCall, row: BatchRow): Record<string, unknown> {
  const ended = row.status === 'ended';
  return {
    id: row.id, type: 'message_batch', processing_status: row.status,
    request_counts: { processing: ended ? 0 : Math.max(0, row.lines - row.completedLines - row.failedLines), succeeded: row.completedLines, errored: row.failedLines, canceled: 0, expired: 0 },
    ended_at: ended ? iso(row.settledAt) : null, created_at: iso(row.createdAt), expires_at: iso(new Date(row.createdAt.getTime() + BATCH_WINDOW_MS)),
    archived_at: null, cancel_initiated_at: null,
    results_url: ended ? `${publicBase(c.ex.headers)}/v1/messages/batches/${row.id}/results` : null,
  };
}

/** The caller's batch, its key and its provider object as `method path` answers it; null when the client was answered. */
async function own(d: AnthropicBatchDeps, c: ProxyCall, id: string): Promise<{ row: BatchRow; t: BatchTarget } | null> {
  const row = BATCH_ID.test(id) ? await ownBatch(d.db, c.row.id, 'anthropic', id) : null;
  if (!row) {
    refuse(c, notFound(id));
    return null;
  }
  const t = await targetOf(d, c, row, 'anthropic');
  if (isRefusal(t)) {
    refuse(c, t);
    return null;
  }
  return { row, t };
}

export async function retrieveAnthropicBatch(d: AnthropicBatchDeps, c: ProxyCall, id: string): Promise<void> {
  const o = await own(d, c, id);
  if (!o) return;
  const a = await callFor(d, c, o.t, { method: 'GET', path: `/messages/batches/${id}` });
  if (!a) return;
  const b = readBatch('anthropic', jsonOf(a));
  if (b) await onSeen(d, o.row, o.t, b).catch((err) => d.log.warn('batch_settle_failed', { batch: id, ...errorFields(err) }));
  relayPointed(c, o.t, a);
}

export async function cancelAnthropicBatch(d: AnthropicBatchDeps, c: ProxyCall, id: string): Promise<void> {
  const o = await own(d, c, id);
  if (!o) return;
  const a = await callFor(d, c, o.t, { method: 'POST', path: `/messages/batches/${id}/cancel` });
  if (!a) return;
  const b = readBatch('anthropic', jsonOf(a));
  if (b) await onSeen(d, o.row, o.t, b).catch((err) => d.log.warn('batch_settle_failed', { batch: id, ...errorFields(err) }));
  relayPointed(c, o.t, a);
}

const UNSETTLED: Refusal = { status: 503, code: 'batch_not_settled', message: 'This batch is being billed; retry shortly', headers: { 'retry-after': '5' } };

/** Deleting a batch deletes its results at the provider: it is billed first, so its bill is never lost. */
export async function deleteAnthropicBatch(d: AnthropicBatchDeps, c: ProxyCall, id: string): Promise<void> {
  const o = await own(d, c, id);
  if (!o) return;
  if (!o.row.settledAt) {
    const g = await callFor(d, c, o.t, { method: 'GET', path: `/messages/batches/${id}` });
    if (!g) return;
    const b = readBatch('anthropic', jsonOf(g));
    if (b?.ended) {
      const settled = await onSeen(d, o.row, o.t, b).catch((err) => {
        d.log.warn('batch_settle_failed', { batch: id, ...errorFields(err) });
        return false;
      });
      if (!settled) return refuse(c, UNSETTLED);
    }
  }
  const a = await callFor(d, c, o.t, { method: 'DELETE', path: `/messages/batches/${id}` });
  if (a) relay(c, o.t, a);
}

/** The results, streamed from the provider to the client as they come (never held whole). */
export async function streamAnthropicResults(d: AnthropicBatchDeps, c: ProxyCall, id: string): Promise<void> {
  const o = await own(d, c, id);
  if (!o) return;
  const { t } = o;
  c.servedBy = t.key;
  c.servedLevel = t.key.level;
  c.attempts++;
  const startedAt = (c.attemptAt = performance.now());
  let answer;
  try {
    answer = await callStreamed(d, t, `/messages/batches/${id}/results`);
  } catch (err) {
    c.upstreamMs += performance.now() - startedAt;
    c.attemptAt = 0;
    return failed(d, c, t.key, err, t.headers);
  }
  c.upstreamMs += performance.now() - startedAt;
  c.attemptAt = 0;
  if (answer.status >= 300) {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of answer.body) {
      size += chunk.length;
      if (size > 1024 * 1024) break;
      chunks.push(chunk);
    }
    answer.abort();
    return relay(c, t, { status: answer.status, headers: answer.headers, body: Buffer.concat(chunks) });
  }
  const out = c.ex.openStream(answer.status, answer.headers, dropped);
  try {
    for await (const chunk of answer.body) {
      if (c.ex.aborted) {
        answer.abort();
        return;
      }
      const drained = out.write(chunk);
      if (drained) await drained;
    }
    out.end(null);
  } catch (err) {
    d.log.warn('batch_results_cut', { request: c.id, batch: id, ...errorFields(err) });
    out.abort();
  }
}
