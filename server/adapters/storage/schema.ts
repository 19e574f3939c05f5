import { sql } from 'drizzle-orm';
import {
  bigint, boolean, check, date, doublePrecision, index, integer, jsonb, numeric, pgTable, primaryKey, text, timestamp, uniqueIndex,
} from 'drizzle-orm/pg-core';
import type { UsageUnits } from '../../domain/usage/units';

const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow();
const updatedAt = () => timestamp('updated_at', { withTimezone: true }).notNull().defaultNow();
/** Credits in USD. numeric keeps sums exact; drizzle hands them to us as numbers. */
const credit = (name: string) => numeric(name, { precision: 24, scale: 12, mode: 'number' });

/** The account hierarchy. `dna` is `.1.42.`: ancestor IDs down to and including the account itself. */
export const accounts = pgTable('accounts', {
  id: integer('id').primaryKey().generatedByDefaultAsIdentity(),
  parentId: integer('parent_id'),
  ownerId: integer('owner_id').notNull(),
  dna: text('dna').notNull(),
  depth: integer('depth').notNull().default(0),
  name: text('name').notNull(),
  email: text('email').notNull(),
  alias: text('alias').notNull().default(''),
  billingEmail: text('billing_email').notNull().default(''),
  qrCode: text('qr_code').notNull().default(''),
  role: text('role', { enum: ['root', 'owner', 'user'] }).notNull().default('user'),
  level: integer('level').notNull().default(1),
  gear: integer('gear').notNull().default(0),
  tier: integer('tier').notNull().default(0),
  factor: doublePrecision('factor').notNull().default(1),
  rates: doublePrecision('rates').notNull().default(1),
  status: boolean('status').notNull().default(true),
  suspended: boolean('suspended').notNull().default(false),
  dailyLimit: doublePrecision('daily_limit'),
  hardLimit: doublePrecision('hard_limit'),
  softLimit: doublePrecision('soft_limit'),
  userLimit: integer('user_limit'),
  autoQuota: boolean('auto_quota').notNull().default(false),
  /**
   * Served cost the account's cards could not cover (a request costs more than its
   * reservation and the balance): billed in full, carried here, and paid first by the next grant.
   */
  overdraft: credit('overdraft').notNull().default(0),
  rpm: integer('rpm'),
  rph: integer('rph'),
  rpd: integer('rpd'),
  tpm: integer('tpm'),
  tph: integer('tph'),
  tpd: integer('tpd'),
  resources: text('resources').notNull().default(''),
  allowIps: text('allow_ips').notNull().default(''),
  allowModels: text('allow_models').notNull().default(''),
  allowLevels: text('allow_levels').notNull().default(''),
  modelMapper: text('model_mapper').notNull().default(''),
  levelMapper: text('level_mapper').notNull().default(''),
  modelLimits: jsonb('model_limits').$type<Record<string, { rpm?: number; tpm?: number }>>().notNull().default({}),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
}, (t) => [
  // Names and emails are unique per tenant, so one tenant's accounts never reveal another's.
  // Name (email) first: Root's lookup across tenants by name alone uses the same index.
  uniqueIndex('accounts_name_owner_key').on(t.name, t.ownerId),
  uniqueIndex('accounts_email_owner_key').on(t.email, t.ownerId),
  uniqueIndex('accounts_dna_key').on(t.dna.op('text_pattern_ops')),
  index('accounts_parent_idx').on(t.parentId),
  index('accounts_owner_idx').on(t.ownerId),
]);

/** Account API keys, stored only as SHA-256 hashes. */
export const accountKeys = pgTable('account_keys', {
  id: integer('id').primaryKey().generatedByDefaultAsIdentity(),
  accountId: integer('account_id').notNull().references(() => accounts.id, { onDelete: 'cascade' }),
  keyHash: text('key_hash').notNull(),
  hint: text('hint').notNull(),
  createdAt: createdAt(),
}, (t) => [uniqueIndex('account_keys_hash_key').on(t.keyHash), index('account_keys_account_idx').on(t.accountId)]);

/** Upstream provider keys of an Owner. The SecretKey (and a private key) are AES-256-GCM ciphertexts. */
export const providerKeys = pgTable('provider_keys', {
  id: integer('id').primaryKey().generatedByDefaultAsIdentity(),
  ownerId: integer('owner_id').notNull().references(() => accounts.id, { onDelete: 'cascade' }),
  name: text('name').notNull().default(''),
  level: integer('level').notNull(),
  provider: text('provider').notNull(),
  providerHost: text('provider_host').notNull(),
  secretCipher: text('secret_cipher').notNull(),
  secretHint: text('secret_hint').notNull(),
  status: boolean('status').notNull().default(false),
  config: jsonb('config').$type<Record<string, unknown>>().notNull().default({ provider_type: 'standard' }),
  configSecretCipher: text('config_secret_cipher'),
  disabledReason: text('disabled_reason'),
  disabledAt: timestamp('disabled_at', { withTimezone: true }),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
}, (t) => [index('provider_keys_owner_level_idx').on(t.ownerId, t.level), index('provider_keys_owner_host_idx').on(t.ownerId, t.providerHost)]);

/** `/x-config` keys per Owner; EMAIL_PASS is stored encrypted. */
export const ownerConfigs = pgTable('owner_configs', {
  ownerId: integer('owner_id').notNull().references(() => accounts.id, { onDelete: 'cascade' }),
  key: text('key').notNull(),
  value: text('value').notNull(),
  updatedAt: updatedAt(),
}, (t) => [primaryKey({ columns: [t.ownerId, t.key] })]);

/** Every change made through the API, written in the transaction of the change. */
export const operationLogs = pgTable('operation_logs', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
  ownerId: integer('owner_id').notNull(),
  operatorId: integer('operator_id'),
  operatorDna: text('operator_dna').notNull().default(''),
  action: text('action').notNull(),
  targetId: integer('target_id'),
  details: text('details').notNull().default(''),
  ip: text('ip').notNull().default(''),
  status: text('status').notNull().default('success'),
  createdAt: createdAt(),
}, (t) => [
  index('operation_logs_owner_idx').on(t.ownerId, t.id),
  index('operation_logs_operator_dna_idx').on(t.operatorDna.op('text_pattern_ops'), t.id),
]);

export const news = pgTable('news', {
  id: integer('id').primaryKey().generatedByDefaultAsIdentity(),
  scope: text('scope', { enum: ['system', 'user', 'dna'] }).notNull(),
  authorId: integer('author_id').notNull(),
  ownerId: integer('owner_id'),
  targetId: integer('target_id'),
  targetDna: text('target_dna'),
  title: text('title').notNull(),
  content: text('content').notNull(),
  createdAt: createdAt(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
}, (t) => [index('news_target_idx').on(t.targetId), index('news_target_dna_idx').on(t.targetDna.op('text_pattern_ops'))]);

/**
 * One row per proxied request that produced usage: an append-only log for audits and the
 * per-request usage query. Partitioned by UTC day (migration 0005, state/usage/partitions.ts),
 * so retention drops whole partitions. No bill reads it (bills read the rollups), so it has no
 * primary key; a BRIN index on the time serves time-range audits.
 */
export const usageRecords = pgTable('usage_records', {
  accountId: integer('account_id').notNull(),
  ownerId: integer('owner_id').notNull(),
  model: text('model').notNull(),
  level: integer('level'),
  keyId: integer('key_id'),
  /** The serving provider key's kind (its provider_type) when the call was made; null: unknown or recorded before it was kept. */
  keyKind: text('key_kind'),
  endpoint: text('endpoint').notNull().default(''),
  prompt: integer('prompt').notNull().default(0),
  completion: integer('completion').notNull().default(0),
  reasoning: integer('reasoning').notNull().default(0),
  cached: integer('cached').notNull().default(0),
  creditUsed: credit('credit_used').notNull().default(0),
  status: text('status').notNull().default('ok'),
  /** The proxied request this record bills (the x-request-id the client was answered with). */
  requestId: text('request_id'),
  /** Milliseconds from the call's arrival to its end, and until the answer's head went out (null: recorded before they were kept). */
  durationMs: integer('duration_ms'),
  firstByteMs: integer('first_byte_ms'),
  /** What a unit-billed route used, by kind (`{"images": 2}`); null for calls billed by tokens alone. */
  units: jsonb('units').$type<UsageUnits>(),
  /** The tools a translated call left out because its provider lacks them, comma-separated (`web_search`); null when none. */
  droppedTools: text('dropped_tools'),
  /** The provider batch this record bills (one record per batch, at the batch price), and how many of its lines it covers; null for a call. */
  batchId: text('batch_id'),
  batchLines: integer('batch_lines'),
  createdAt: createdAt(),
}, (t) => [
  index('usage_records_time_brin').using('brin', t.createdAt),
  // The per-request usage query (an account's recent requests): small per day partition.
  index('usage_records_account_time_idx').on(t.accountId, t.createdAt),
]);

/**
 * Usage batches already written: the recorder writes a batch in one transaction together with
 * its row here, so a batch retried after a commit whose answer was lost is recognised and
 * skipped (exactly once without a unique index on usage_records; see docs/decisions.md).
 */
export const usageBatches = pgTable('usage_batches', {
  id: text('id').primaryKey(),
  writtenAt: timestamp('written_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * Daily per-account per-model aggregates, maintained as usage is recorded.
 * `dna` is copied from the account so a subtree's bill is one index range scan.
 */
export const usageDaily = pgTable('usage_daily', {
  accountId: integer('account_id').notNull(),
  day: date('day', { mode: 'string' }).notNull(),
  model: text('model').notNull(),
  ownerId: integer('owner_id').notNull(),
  dna: text('dna').notNull(),
  requests: integer('requests').notNull().default(0),
  prompt: bigint('prompt', { mode: 'number' }).notNull().default(0),
  completion: bigint('completion', { mode: 'number' }).notNull().default(0),
  reasoning: bigint('reasoning', { mode: 'number' }).notNull().default(0),
  cached: bigint('cached', { mode: 'number' }).notNull().default(0),
  creditUsed: credit('credit_used').notNull().default(0),
  /** Units of unit-billed routes summed by kind (see usageRecords.units); null when none. */
  units: jsonb('units').$type<UsageUnits>(),
}, (t) => [
  primaryKey({ columns: [t.accountId, t.day, t.model] }),
  index('usage_daily_dna_day_idx').on(t.dna.op('text_pattern_ops'), t.day),
]);

/**
 * Per-subtree daily rollups, maintained with usage_daily: for every account, its strict
 * descendants' usage per UTC day and model (the account's own usage is in usage_daily). A
 * subtree's bill reads days × models rows here, however many accounts the subtree holds.
 * Usage counts for the ancestors the account had when it was recorded.
 */
export const usageSubtreeDaily = pgTable('usage_subtree_daily', {
  ancestorId: integer('ancestor_id').notNull(),
  day: date('day', { mode: 'string' }).notNull(),
  model: text('model').notNull(),
  requests: bigint('requests', { mode: 'number' }).notNull().default(0),
  prompt: bigint('prompt', { mode: 'number' }).notNull().default(0),
  completion: bigint('completion', { mode: 'number' }).notNull().default(0),
  reasoning: bigint('reasoning', { mode: 'number' }).notNull().default(0),
  cached: bigint('cached', { mode: 'number' }).notNull().default(0),
  creditUsed: credit('credit_used').notNull().default(0),
  units: jsonb('units').$type<UsageUnits>(),
}, (t) => [primaryKey({ columns: [t.ancestorId, t.day, t.model] })]);

/**
 * Latency per UTC day, model and provider key kind (the serving key's provider_type), as
 * histograms of calls' duration and first byte in the buckets of contract/dashboard/latency-buckets.ts,
 * maintained with usage_daily. `whose` = `own`: the account's own calls; `below`: its strict
 * descendants' (as usage_subtree_daily), so a subtree's latency, like its bill, reads days ×
 * models × kinds rows under one account ID however many accounts the subtree holds.
 * `requests` counts calls with a duration; calls without a first byte (not streamed) add to
 * the duration histogram only.
 */
export const usageLatencyDaily = pgTable('usage_latency_daily', {
  accountId: integer('account_id').notNull(),
  whose: text('whose', { enum: ['own', 'below'] }).notNull(),
  day: date('day', { mode: 'string' }).notNull(),
  model: text('model').notNull(),
  keyKind: text('key_kind').notNull(),
  requests: bigint('requests', { mode: 'number' }).notNull().default(0),
  durationBuckets: bigint('duration_buckets', { mode: 'number' }).array().notNull(),
  firstByteBuckets: bigint('first_byte_buckets', { mode: 'number' }).array().notNull(),
}, (t) => [primaryKey({ columns: [t.accountId, t.whose, t.day, t.model, t.keyKind] })]);

/**
 * This database's identity, made once: usage journals (state/usage/journal.ts) are kept per
 * database, so an instance never replays into a database what was recorded for another.
 */
export const databaseIdentity = pgTable('database_identity', {
  one: boolean('one').primaryKey().default(true),
  id: text('id').notNull(),
}, (t) => [check('database_identity_one_row', sql`${t.one}`)]);

/**
 * Alerts raised once per period (SoftLimit reached this month, low balance until the next
 * top-up): the primary key makes "once" hold across instances and restarts.
 */
export const accountAlerts = pgTable('account_alerts', {
  accountId: integer('account_id').notNull().references(() => accounts.id, { onDelete: 'cascade' }),
  kind: text('kind').notNull(),
  period: text('period').notNull(),
  raisedAt: timestamp('raised_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [primaryKey({ columns: [t.accountId, t.kind, t.period] })]);

/** Credit cards: each grant expires; spending takes from the earliest-expiring first. */
export const creditGrants = pgTable('credit_grants', {
  id: integer('id').primaryKey().generatedByDefaultAsIdentity(),
  accountId: integer('account_id').notNull().references(() => accounts.id, { onDelete: 'cascade' }),
  amount: credit('amount').notNull(),
  balance: credit('balance').notNull(),
  reference: text('reference').notNull().default(''),
  grantedAt: timestamp('granted_at', { withTimezone: true }).notNull().defaultNow(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
}, (t) => [
  index('credit_grants_account_expiry_idx').on(t.accountId, t.expiresAt),
  check('credit_grants_balance_non_negative', sql`${t.balance} >= 0`),
]);

/**
 * Which provider key created a stored Responses API response, so a call continuing it
 * (`previous_response_id`) goes to that key on any instance; without REDIS_URL this table is
 * where the instances share it. `account_id` is the account whose call created it, the only one
 * that may read or delete it through the gateway (null on rows written before it was kept).
 * Rows expire (`expires_at`) and are purged as new ones come.
 */
export const responseKeys = pgTable('response_keys', {
  ownerId: integer('owner_id').notNull(),
  responseId: text('response_id').notNull(),
  keyId: integer('key_id').notNull(),
  accountId: integer('account_id'),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
}, (t) => [primaryKey({ columns: [t.ownerId, t.responseId] }), index('response_keys_expiry_idx').on(t.expiresAt)]);

/**
 * A conversation the gateway keeps for `previous_response_id` when a Responses call was
 * answered through translation (a key without the Responses API keeps nothing): the input and
 * output items as JSON text, and the Response object as the client got it (`response`, for
 * GET /v1/responses/{id}; null on rows written before it was kept), read back only by the
 * account that created it. Rows expire (`expires_at`) and are purged as new ones come.
 */
export const storedResponses = pgTable('stored_responses', {
  ownerId: integer('owner_id').notNull(),
  responseId: text('response_id').notNull(),
  accountId: integer('account_id').notNull(),
  items: text('items').notNull(),
  response: text('response'),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
}, (t) => [primaryKey({ columns: [t.ownerId, t.responseId] }), index('stored_responses_expiry_idx').on(t.expiresAt)]);

/**
 * A file uploaded through the gateway (OpenAI `/v1/files`), kept under the provider's own file
 * ID: the account that uploaded it (the only one that may see it), the provider key that holds
 * it (a batch naming it goes there), and, for a batch input, what its JSONL lines ask for: the
 * one model they name, how many there are and their worst case in tokens (the batch's
 * reservation is computed from these, without reading the file again). `deleted_at` is set by
 * DELETE; the row stays for bills.
 */
export const batchFiles = pgTable('batch_files', {
  id: text('id').primaryKey(),
  ownerId: integer('owner_id').notNull(),
  accountId: integer('account_id').notNull(),
  keyId: integer('key_id').notNull(),
  purpose: text('purpose').notNull(),
  filename: text('filename').notNull().default(''),
  bytes: bigint('bytes', { mode: 'number' }).notNull().default(0),
  /** The model and route (`/v1/chat/completions`, …) every line names; null for a file that is not a batch input. */
  model: text('model'),
  url: text('url'),
  lines: integer('lines').notNull().default(0),
  /** Sum over lines of the input bound (tokens), of explicit output caps, and lines without a cap (held at the model's output limit). */
  inputBound: bigint('input_bound', { mode: 'number' }).notNull().default(0),
  outputCapped: bigint('output_capped', { mode: 'number' }).notNull().default(0),
  uncappedLines: integer('uncapped_lines').notNull().default(0),
  createdAt: createdAt(),
  deletedAt: timestamp('deleted_at', { withTimezone: true }),
}, (t) => [index('batch_files_account_time_idx').on(t.accountId, t.createdAt)]);

/**
 * A batch created through the gateway (OpenAI `/v1/batches` or Anthropic `/v1/messages/batches`),
 * under the provider's batch ID: whose it is, where it runs, what it holds and what it was
 * billed. `reserved` is held against the account's credit from create until the batch is
 * settled; `settled_at` is the batch's idempotency key: the poller bills a batch in the same
 * transaction that sets it, so several instances, client polls and restarts bill it once.
 */
export const gatewayBatches = pgTable('gateway_batches', {
  id: text('id').primaryKey(),
  ownerId: integer('owner_id').notNull(),
  accountId: integer('account_id').notNull(),
  dna: text('dna').notNull(),
  keyId: integer('key_id').notNull(),
  level: integer('level'),
  /** `openai` or `anthropic`: which API the client called and the provider runs. */
  api: text('api').notNull(),
  /** The route the lines call (`/v1/chat/completions`, `/v1/messages`, …) and their model. */
  endpoint: text('endpoint').notNull(),
  model: text('model').notNull(),
  inputFileId: text('input_file_id'),
  /** The provider's status as last seen (OpenAI's `validating` … `cancelled`, Anthropic's `in_progress`/`canceling`/`ended`). */
  status: text('status').notNull(),
  lines: integer('lines').notNull().default(0),
  completedLines: integer('completed_lines').notNull().default(0),
  failedLines: integer('failed_lines').notNull().default(0),
  reserved: credit('reserved').notNull().default(0),
  billed: credit('billed'),
  /** After this the provider will never finish it (its 24 h window and a margin): the reservation is released. */
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  createdAt: createdAt(),
  settledAt: timestamp('settled_at', { withTimezone: true }),
}, (t) => [
  index('gateway_batches_account_time_idx').on(t.accountId, t.createdAt),
  index('gateway_batches_dna_idx').on(t.dna.op('text_pattern_ops')),
  // The poller's work list: open batches only.
  index('gateway_batches_open_idx').on(t.createdAt).where(sql`settled_at IS NULL`),
]);
