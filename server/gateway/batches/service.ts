/**
 * The batch routes' shared parts: their dependencies, the provider key a batch runs on, the
 * relay of a provider's answer (errors scrubbed, as every relayed error is), and a batch's end
 * handled once wherever it is seen first (the poller, or a client reading its batch): billed
 * (settlement.ts), then its output and error files handed to their owner.
 */
import type { Logger } from '../../core/log';
import { errorFields } from '../../core/log';
import type { Db } from '../../adapters/storage/database';
import type { WholeResponse } from '../../adapters/upstream-http/whole';
import { TIMEOUT_CODES } from '../../adapters/upstream-http/types';
import type { KeyPool, PooledKey } from '../../state/provider-keys/key-pool';
import type { OwnerConfigStore } from '../../state/owner-config/store';
import type { Changes } from '../../state/changes/state-changes';
import type { RecordWriter } from '../../state/usage/record-writers';
import type { ProviderKinds } from '../providers/registry';
import type { AdmissionRequest, AdmissionStore } from '../admission/store';
import { rateClaims, type AccountProfiles } from '../admission/profile';
import { ownerRules } from '../admission/owner-rules';
import { eq } from 'drizzle-orm';
import { accounts } from '../../adapters/storage/schema';
import type { ProxyCall } from '../call';
import { refuse, type Refusal } from '../errors';
import { dropped } from '../dispatch/relay';
import { scrub, scrubHeaders, scrubText } from '../dispatch/scrub';
import { enabledKey } from '../stages/dispatch';
import type { FileBook } from '../files/file-book';
import type { BatchRow } from './records';
import { noteStatus } from './records';
import type { BatchApi } from './routes';
import { batchTarget, callStreamed, callWhole, type BatchCall, type BatchTarget, type UpstreamDeps } from './upstream';
import type { ReserveDeps } from './reserve';
import { settleBatch, type SettlementDeps } from './settlement';
import type { ProviderBatch } from './provider-batch';

export interface BatchDeps extends UpstreamDeps, SettlementDeps {
  db: Db;
  settings: UpstreamDeps['settings'] & ReserveDeps['settings'];
  admission: ReserveDeps['admission'] & Pick<AdmissionStore, 'invalidate'>;
  /** Account profiles: a settled batch's tokens count on its token limits. */
  profiles?: Pick<AccountProfiles, 'load'>;
  pool: Pick<KeyPool, 'levelsOf' | 'keys' | 'pick'>;
  kinds: Pick<ProviderKinds, 'of'>;
  config: Pick<OwnerConfigStore, 'routing'>;
  log: Pick<Logger, 'warn' | 'info' | 'error'>;
  /** The files the gateway hands out (files/file-book.ts): a batch's input is read there, its output and error files noted there. */
  files?: Pick<FileBook, 'rememberFile' | 'fileOf' | 'whyUnusable'>;
  writeRecords: RecordWriter;
  changes?: Pick<Changes, 'announce'>;
  /** How long a row stays `creating` before the poller looks for its batch (pending.ts); tests shorten it. */
  pendingGraceMs?: number;
  /** Test hook: a pause between the provider accepting a batch and its row taking the provider's ID (a kill lands there). */
  pauseBeforeAdoptMs?: number;
}

export const JSON_HEAD = { 'content-type': 'application/json' };

/** The batch's key when it is still enabled, with its batch API; a refusal naming why not. */
export async function targetOf(d: BatchDeps, c: ProxyCall, row: Pick<BatchRow, 'keyId' | 'ownerId'>, api: BatchApi): Promise<BatchTarget | Refusal> {
  const key = enabledKey(d.pool, row.ownerId, row.keyId);
  if (!key) {
    const why = d.files ? await d.files.whyUnusable(row.ownerId, row.keyId) : 'is disabled or has been deleted';
    return { status: 400, code: 'provider_key_unavailable', message: `The provider key that runs this batch ${why}` };
  }
  const t = await batchTarget(d.kinds, key, api, c.ex.headers);
  return t ?? { status: 400, code: 'provider_key_unavailable', message: 'The provider key that runs this batch no longer serves batches' };
}

export const isRefusal = (x: unknown): x is Refusal => typeof x === 'object' && x !== null && 'status' in x && 'code' in x && !('origin' in x);

/** One call to the key's batch API for the client; null when it failed and the client was answered 502/504. */
export async function callFor(d: BatchDeps, c: ProxyCall, t: BatchTarget, call: BatchCall): Promise<WholeResponse | null> {
  c.servedBy = t.key;
  c.servedLevel = t.key.level;
  c.attempts++;
  const startedAt = (c.attemptAt = performance.now());
  try {
    return await callWhole(d, t, call);
  } catch (err) {
    failed(d, c, t.key, err, t.headers);
    return null;
  } finally {
    c.upstreamMs += performance.now() - startedAt;
    c.attemptAt = 0;
  }
}

export function failed(d: Pick<BatchDeps, 'log'>, c: ProxyCall, key: PooledKey, err: unknown, sent: Record<string, string>): void {
  const timeout = TIMEOUT_CODES.has((err as { code?: string }).code ?? '');
  d.log.warn('batch_upstream_failed', { request: c.id, owner: c.row.ownerId, key: key.id, cause: scrub((err as Error).message, key, 300, sent) });
  refuse(c, timeout
    ? { status: 504, code: 'upstream_timeout', message: `The upstream provider did not answer in time (request ${c.id})` }
    : { status: 502, code: 'upstream_error', message: `The upstream provider could not be reached (request ${c.id})` });
}

/**
 * The provider has a batch the gateway could not note (its database failed): it is cancelled,
 * as best it can be, rather than left to run unbilled; the client is answered 503 and may create it again.
 */
export async function keepOrCancel(d: BatchDeps, t: BatchTarget, api: BatchApi, id: string, insert: () => Promise<void>): Promise<void> {
  try {
    await insert();
  } catch (err) {
    const path = api === 'anthropic' ? `/messages/batches/${id}/cancel` : `/batches/${id}/cancel`;
    await callWhole(d, t, { method: 'POST', path }).catch(() => undefined);
    d.log.error('batch_not_noted', { batch: id, cancelled: true, ...errorFields(err) });
    throw err;
  }
}

/** A provider's answer relayed: a success as it is (or `body` in its place), an error scrubbed of the key and its host. */
export function relay(c: ProxyCall, t: BatchTarget, a: WholeResponse, body?: string): void {
  if (a.status < 400) return c.ex.relay(a.status, a.headers, dropped, body === undefined ? a.body : Buffer.from(body));
  const text = a.body.toString('utf8');
  const clean = scrubText(text, t.key, t.headers);
  c.ex.relay(a.status, scrubHeaders(a.headers, t.key, t.headers), dropped, clean === text ? a.body : Buffer.from(clean));
}

/** The JSON of a 2xx answer, or undefined. */
export function jsonOf(a: WholeResponse): any {
  if (a.status >= 300) return undefined;
  try {
    return JSON.parse(a.body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Batches this instance (its database handle) is settling now: a client's read and the poller meeting one end wait for one settlement. */
const settlingBy = new WeakMap<Db, Map<string, Promise<boolean>>>();

/**
 * A batch seen (by the poller or a client's read) as `b`: its status noted, and once it has
 * ended, billed once and its files handed to its owner. True when the batch is settled now.
 */
export function onSeen(d: BatchDeps, row: BatchRow, t: BatchTarget, b: ProviderBatch): Promise<boolean> {
  if (!b.ended) {
    if (b.status === row.status && b.completed === row.completedLines && b.failed === row.failedLines) return Promise.resolve(false);
    return noteStatus(d.db, row.id, { status: b.status, completed: b.completed, failed: b.failed }).then(() => false);
  }
  if (row.settledAt) return noteFiles(d, row, b).then(() => true);
  let settling = settlingBy.get(d.db);
  if (!settling) settlingBy.set(d.db, (settling = new Map()));
  let p = settling.get(row.id);
  if (!p) {
    p = settle(d, row, t, b).finally(() => settling!.delete(row.id));
    settling.set(row.id, p);
  }
  return p;
}

async function settle(d: BatchDeps, row: BatchRow, t: BatchTarget, b: ProviderBatch): Promise<boolean> {
  const path = row.api === 'anthropic' ? `/messages/batches/${b.id}/results` : b.outputFileId ? `/files/${b.outputFileId}/content` : null;
  const output = path ? () => openOutput(d, t, path) : null;
  const bill = await settleBatch(d, row, { status: b.status, billable: b.billable, completed: b.completed, failed: b.failed, output });
  // Settled here or elsewhere: the account's credit is read again (the other instances hear it through the change feed).
  d.admission.invalidate(row.accountId);
  if (bill) await countTokens(d, row, bill.prompt + bill.completion).catch((err) => d.log.warn('batch_tokens_not_counted', { batch: row.id, ...errorFields(err) }));
  await noteFiles(d, row, b);
  return true;
}

async function openOutput(d: BatchDeps, t: BatchTarget, path: string): Promise<AsyncIterable<Buffer>> {
  const a = await callStreamed(d, t, path);
  if (a.status >= 300) {
    a.abort();
    // Not billed from nothing: the settlement is tried again at the next poll.
    throw new Error(`the provider answered ${a.status} for the batch's output`);
  }
  return a.body;
}

/**
 * A settled batch's tokens on the account's token limits (TPM…TPD, the model's tpm), as a call's
 * are counted at settle; RPM and the like never count a batch. Counted by the instance that billed it.
 */
async function countTokens(d: BatchDeps, row: BatchRow, tokens: number): Promise<void> {
  if (!d.profiles || tokens <= 0) return;
  const [account] = await d.db.select().from(accounts).where(eq(accounts.id, row.accountId));
  if (!account) return;
  const profile = await d.profiles.load(account);
  const owner = await d.config.routing(row.ownerId);
  const rates = rateClaims(profile, row.model, ownerRules(owner).modelLimits).filter((r) => r.kind === 'tokens');
  if (rates.length === 0) return;
  const now = Date.now();
  const r: AdmissionRequest = { id: `batch-tokens:${row.id}`, ownerId: row.ownerId, credit: null, spend: [], rates, amount: 0, tokens: 0, now, expiresAt: now + 60_000 };
  if ((await d.admission.admit(r)) === null) d.admission.settle(r, { cost: 0, tokens }, now);
}

/** The output and error files of a settled batch, downloadable by its owner through /v1/files (noting one again changes nothing). */
async function noteFiles(d: BatchDeps, row: BatchRow, b: ProviderBatch): Promise<void> {
  if (!d.files) return;
  for (const [id, purpose] of [[b.outputFileId, 'batch_output'], [b.errorFileId, 'batch_output']] as const) {
    if (!id) continue;
    try {
      await d.files.rememberFile({ id, ownerId: row.ownerId, accountId: row.accountId, keyId: row.keyId, purpose });
    } catch (err) {
      d.log.warn('batch_file_not_noted', { batch: row.id, file: id, ...errorFields(err) });
    }
  }
}
