import { z } from 'zod';
import { isoTime } from '../common';
import { Units } from '../billing/schemas';

const money = (description: string) => z.number().meta({ description });
const limit = (description: string) => z.number().nullable().meta({ description: `${description}; null means no limit` });
const rate = (description: string) => z.int().nullable().meta({ description: `${description}; null means no limit` });

export const CreditCard = z.object({
  amount: money('Credit granted on this card (USD)'),
  balance: money('Credit left on this card (USD)'),
  granted_at: isoTime,
  expires_at: isoTime,
  reference: z.string(),
}).meta({ id: 'CreditCard', description: 'One credit grant; spending takes from the card that expires first' });

export const ModelLimitView = z.record(z.string(), z.object({ rpm: z.int().optional(), tpm: z.int().optional() }));

/** The flat user_info of `/dashboard/info`. */
export const UserInfo = z.object({
  object: z.literal('user_info'),
  id: z.int(),
  name: z.string(),
  email: z.string(),
  alias: z.string(),
  billing_email: z.string(),
  dna: z.string().meta({ description: 'DNA path: the IDs from Root down to and including this account, e.g. `.1.42.`' }),
  parent_id: z.int().nullable(),
  owner_id: z.int().meta({ description: 'The tenant: ID of the Owner whose keys and prices apply' }),
  role: z.enum(['root', 'owner', 'user']),
  is_owner: z.boolean(),
  level: z.int(),
  gear: z.int(),
  tier: z.int(),
  rates: z.number().meta({ description: 'Price multiplier of this account' }),
  factor: z.number(),
  status: z.boolean(),
  suspended: z.boolean(),
  balance: money('Spendable credit: unexpired cards, less the overdraft and usage recorded but not yet deducted; negative while the account owes'),
  credit_balance: z.array(CreditCard).meta({ description: 'Unexpired credit cards, earliest expiry first' }),
  daily_limit: limit('Credit that may be used per UTC day'),
  hard_limit: limit('Monthly hard cap'),
  soft_limit: limit('Monthly soft cap (alert)'),
  user_limit: rate('Most subaccounts this account may create'),
  auto_quota: z.boolean(),
  rpm: rate('Requests per minute'),
  rph: rate('Requests per hour'),
  rpd: rate('Requests per UTC day'),
  tpm: rate('Tokens per minute'),
  tph: rate('Tokens per hour'),
  tpd: rate('Tokens per UTC day'),
  resources: z.string().meta({ description: 'Allowed path prefixes; empty means all' }),
  allow_ips: z.string().meta({ description: 'Allowed IPs/CIDRs; empty means all' }),
  allow_models: z.string().meta({ description: 'Allowed model patterns; empty means all' }),
  allow_levels: z.string().meta({ description: 'Allowed Levels; empty means all' }),
  model_mapper: z.string().meta({ description: 'The account\'s own model mapping, `pattern=model, …`' }),
  level_mapper: z.string().meta({ description: 'The account\'s own Level mapping, `pattern=level, …`' }),
  model_limits: ModelLimitView,
  created_at: isoTime,
  updated_at: isoTime,
}).meta({ id: 'UserInfo' });

export const ModelUsage = z.object({
  Requests: z.int(),
  Prompt: z.number().meta({ description: 'Input tokens (cached ones included)' }),
  Completion: z.number().meta({ description: 'Output tokens (reasoning ones included)' }),
  Reasoning: z.number(),
  Cached: z.number().meta({ description: 'Input tokens served from the provider cache' }),
  CreditUsed: z.number(),
}).meta({ id: 'ModelUsage' });

export const PeriodUsage = ModelUsage.extend({
  ModelUsage: z.record(z.string(), ModelUsage).meta({ description: 'The same figures per model; a model\'s provider batches (`/v1/batches`, `/v1/messages/batches`) apart, under `<model> (batch)`' }),
  Batch: ModelUsage.optional().meta({ description: 'The part of these figures that provider batches used (billed at the batch price; each line a request); absent when none' }),
}).meta({ id: 'PeriodUsage' });

export const UserLive = UserInfo.extend({
  daily_usage: PeriodUsage.meta({ description: 'The current UTC day' }),
  monthly_usage: PeriodUsage.meta({ description: 'The current UTC calendar month' }),
}).meta({ id: 'UserLive' });

export const NoQuery = z.strictObject({});

export const UserInfoQuery = z.strictObject({
  user: z.string({ error: 'required: an account ID or name' }).trim().min(1).max(320)
    .meta({ description: 'Account ID or name (an email or a DNA path also work)' }),
});

export const LogQuery = z.strictObject({
  page: z.coerce.number().int().min(1).max(1_000_000).optional().meta({ description: 'Page number, 1-based (default 1)' }),
  size: z.coerce.number().int().min(1).max(100).optional().meta({ description: 'Entries per page (default 24, at most 100)' }),
  action: z.string().min(1).max(100).optional().meta({ description: 'Only entries of this action, e.g. `add_key`' }),
  target_id: z.coerce.number().int().min(0).max(2_147_483_647).optional(),
  status: z.enum(['success', 'failure']).optional(),
});

export const LogEntry = z.object({
  id: z.int(),
  action: z.string(),
  operator_id: z.int().nullable(),
  target_id: z.int().nullable(),
  details: z.string(),
  ip: z.string(),
  status: z.string(),
  created_at: isoTime,
}).meta({ id: 'LogEntry' });

export const LogPage = z.object({
  logs: z.array(LogEntry),
  total: z.int(),
  page: z.int(),
  size: z.int(),
  has_more: z.boolean(),
}).meta({ id: 'LogPage' });

export const MAX_REQUEST_PAGE = 200;

/** Times a query may name: the span a timestamp column and an RFC 3339 string share (years 1970 to 9999, in UTC). */
export const FIRST_INSTANT = Date.UTC(1970, 0, 1);
export const LAST_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
export const inInstantRange = (t: number) => t >= FIRST_INSTANT && t <= LAST_INSTANT;
const instant = z.iso.datetime({ offset: true })
  .refine((s) => inInstantRange(Date.parse(s)), 'must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z');

export const RequestQuery = z.strictObject({
  user: z.string().trim().min(1).max(320).optional()
    .meta({ description: 'An account in the caller\'s tree (ID, name, email or DNA path); default the caller' }),
  limit: z.coerce.number().int().min(1).max(MAX_REQUEST_PAGE).optional().meta({ description: `Requests per page (default 50, at most ${MAX_REQUEST_PAGE})` }),
  before: z.string().min(1).max(400).optional().meta({ description: 'Cursor: `next` of the previous page; the page starts after it (older)' }),
  since: instant.optional().meta({ description: 'Only requests at or after this time (RFC 3339)' }),
  until: instant.optional().meta({ description: 'Only requests before this time (RFC 3339)' }),
  model: z.string().min(1).max(200).optional().meta({ description: 'Only requests billed to this model' }),
  status: z.enum(['ok', 'abnormal']).optional().meta({ description: '`abnormal`: the stream was cut or stalled after the first byte' }),
  request_id: z.string().min(1).max(200).optional().meta({ description: 'Only the request with this ID (the x-request-id it was answered with)' }),
  scope: z.enum(['account', 'tree']).optional().meta({ description: '`tree`: the requests of the account (`user`, default the caller) and of every account below it; `account` (default): its own' }),
});

export const RequestUsage = z.object({
  account_id: z.int().meta({ description: 'The account billed' }),
  request_id: z.string().nullable().meta({ description: 'The x-request-id the call was answered with' }),
  created_at: isoTime,
  model: z.string().meta({ description: 'The model after mapping: what was routed and billed' }),
  endpoint: z.string(),
  level: z.int().nullable(),
  prompt: z.int(),
  completion: z.int(),
  reasoning: z.int(),
  cached: z.int(),
  credit_used: z.number().meta({ description: 'Cost in USD credits, with the account\'s Rates and Factor' }),
  status: z.enum(['ok', 'abnormal']),
  duration_ms: z.int().nullable().meta({ description: 'Milliseconds from the call\'s arrival to its end (a realtime response: from its start to its `response.done`); null for records older than this field' }),
  first_byte_ms: z.int().nullable().meta({ description: 'Milliseconds until the answer\'s head went out, streamed or whole (a realtime response: until its first event); null when unknown' }),
  key_kind: z.string().nullable().meta({ description: 'The kind of provider key that served the call (standard: OpenAI-compatible, anthropic, azure, vertex, bedrock, gemini); null when unknown or recorded before it was kept' }),
  units: Units.optional().meta({ description: 'What a route billed by its own unit used, by kind (images, audio_seconds, characters, calls, search_units, audio_tokens), and the web searches a provider ran (web_searches, billed per search beside the tokens); absent for calls billed by tokens alone' }),
  dropped_tools: z.array(z.string()).optional().meta({ description: 'The tools a translated call left out because its provider lacks them (UNSUPPORTED_TOOLS=drop), as named in the answer\'s x-switchyard-dropped header; absent when none was' }),
  batch_id: z.string().optional().meta({ description: 'The provider batch this record bills (`/v1/batches`, `/v1/messages/batches`): one record per batch, at the batch price; absent for a call' }),
  batch_lines: z.int().optional().meta({ description: 'How many of the batch\'s requests the record covers (those that succeeded)' }),
}).meta({ id: 'RequestUsage' });

export const RequestPage = z.object({
  object: z.literal('list'),
  data: z.array(RequestUsage).meta({ description: 'Newest first' }),
  has_more: z.boolean(),
  next: z.string().nullable().meta({ description: 'Pass as `before` for the next (older) page; null on the last page' }),
}).meta({ id: 'RequestPage' });

const perMillion = (what: string) => z.number().optional()
  .meta({ description: `USD per 1M ${what} tokens; absent where the model does not price them apart (billed as input or output)` });

/** What the caller pays per token class, its Rates and Factor applied: costOf of one million tokens of the class. */
export const TokenPrices = z.object({
  input: z.number().nullable().meta({ description: 'USD per 1M input tokens; null when the model is priced per call only' }),
  output: z.number().nullable().meta({ description: 'USD per 1M output tokens; null when the model is priced per call only' }),
  cached_input: z.number().nullable().meta({ description: 'USD per 1M input tokens read from the provider\'s cache (the input price where the model has no cache price); null when priced per call only' }),
  cache_write: perMillion('cache-write (five-minute)'),
  cache_write_1h: perMillion('one-hour cache-write'),
  reasoning: perMillion('reasoning'),
  input_audio: perMillion('audio input'),
  cached_audio: perMillion('cached audio input'),
  output_audio: perMillion('audio output'),
  input_image: perMillion('image input'),
  output_image: perMillion('image output'),
  web_search: z.number().optional().meta({ description: 'USD per 1,000 web searches the provider runs for an answer' }),
}).meta({ id: 'TokenPrices' });

export const ModelPricing = TokenPrices.extend({
  billed_as: z.string().meta({ description: 'The model calls by this name are billed as: the name after the account\'s and the Owner\'s model mappers' }),
  long_context: z.array(TokenPrices.extend({ above: z.int().meta({ description: 'Input tokens a call must exceed to pay these prices' }) }))
    .optional().meta({ description: 'Long-context prices, ascending; absent when the model has none' }),
  call: z.number().optional().meta({ description: 'USD per call (CallPricing: moderations and the like); absent when not priced per call' }),
  fallback: z.boolean().optional().meta({ description: 'True when neither the catalogue nor PRICING prices the model and these are UNPRICED_MODEL_POLICY\'s fallback prices' }),
}).meta({ id: 'ModelPricing', description: 'What the current account pays for the model, after the Owner\'s PRICING, the model\'s and the account\'s Rates and the account\'s Factor, exactly as a call is billed. Batches are billed at half these prices.' });

export const ModelList = z.object({
  object: z.literal('list'),
  data: z.array(z.object({
    id: z.string(),
    object: z.literal('model'),
    owned_by: z.string(),
    pricing: ModelPricing.nullable().meta({ description: 'Switchyard\'s addition to the OpenAI shape: what this account pays; null when the model is not priced (a call of it is refused)' }),
  }).meta({ id: 'Model' })),
}).meta({ id: 'ModelList' });

export type UserInfo = z.infer<typeof UserInfo>;
export type UserLive = z.infer<typeof UserLive>;
export type ModelUsage = z.infer<typeof ModelUsage>;
export type PeriodUsage = z.infer<typeof PeriodUsage>;
export type LogQuery = z.infer<typeof LogQuery>;
export type LogEntry = z.infer<typeof LogEntry>;
export type LogPage = z.infer<typeof LogPage>;
export type RequestQuery = z.infer<typeof RequestQuery>;
export type RequestPage = z.infer<typeof RequestPage>;
export type ModelList = z.infer<typeof ModelList>;
export type TokenPrices = z.infer<typeof TokenPrices>;
export type ModelPricing = z.infer<typeof ModelPricing>;
