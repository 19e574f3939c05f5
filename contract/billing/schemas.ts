import { z } from 'zod';

/**
 * The days a bill may name: from the first day of Unix time (a day's `timestamp` is never
 * negative) to the last day with a four-digit year (the day after it has no YYYY-MM-DD form).
 */
export const FIRST_BILL_DAY = '1970-01-01';
export const LAST_BILL_DAY = '9999-12-31';

/** Checks the calendar too: `2025-02-30` is not a day. One message per bad value: the first failed check. */
const day = z.string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, { error: 'must be a date in YYYY-MM-DD form', abort: true })
  .refine((s) => {
    const d = new Date(`${s}T00:00:00Z`);
    return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
  }, { error: 'is not a calendar date', abort: true })
  .refine((s) => s >= FIRST_BILL_DAY && s <= LAST_BILL_DAY, `must be between ${FIRST_BILL_DAY} and ${LAST_BILL_DAY}`);

export const MAX_BILL_DAYS = 366;

const period = {
  date: day.optional().meta({ description: 'One UTC day (YYYY-MM-DD)' }),
  d: day.optional().meta({ description: 'Alias of `date`' }),
  start: day.optional().meta({ description: 'First day of a range, included; without `end` the range runs to today' }),
  s: day.optional().meta({ description: 'Alias of `start`' }),
  start_date: day.optional().meta({ description: 'Alias of `start`' }),
  end: day.optional().meta({ description: 'Last day of a range, included; needs `start`' }),
  e: day.optional().meta({ description: 'Alias of `end`' }),
  end_date: day.optional().meta({ description: 'Alias of `end`' }),
  days: z.coerce.number().int().min(1).max(MAX_BILL_DAYS).optional().meta({ description: `The last n UTC days, today included (1-${MAX_BILL_DAYS})` }),
};

export const BillQuery = z.strictObject(period);

export const DescendantBillQuery = z.strictObject({
  ...period,
  user: z.string().trim().min(1).max(320).optional().meta({ description: 'One account (ID, name, email), a subtree (DNA path `.1.42.`) or a filter (`L{n}` Level, `G{n}` Gear, `R{n}` Role, `T{n}` Tier, `F{n}` Factor); all descendants when absent' }),
  u: z.string().trim().min(1).max(320).optional().meta({ description: 'Alias of `user`' }),
});

const ModelStats = z.object({
  Requests: z.int(),
  Prompt: z.number(),
  Completion: z.number(),
  Reasoning: z.number(),
  Cached: z.number(),
  CreditUsed: z.number(),
}).meta({ id: 'ModelStats' });

/** What unit-billed routes used, by kind; the kinds are the gateway's (images, audio_seconds, characters, calls, search_units, audio_tokens, web_searches). */
export const Units = z.record(z.string(), z.number()).meta({
  id: 'UsageUnits',
  description: 'Units used by the routes billed by their own unit, by kind: images, audio_seconds, characters, calls (moderations, audio and speech calls), search_units (rerank), audio_tokens (realtime), web_searches (searches a provider ran for a chat call, billed per search). Absent when the model was billed by tokens alone',
  example: { images: 2 },
});

const Share = z.object({
  request_percentage: z.number().meta({ description: 'Percent of the period\'s requests (0-100)' }),
  cost_percentage: z.number().meta({ description: 'Percent of the period\'s credit used (0-100)' }),
}).meta({ id: 'UsageShare' });

/** Set on the figures of provider batches (`/v1/batches`, `/v1/messages/batches`), which a bill shows apart from calls. */
const batchFields = {
  batch: z.boolean().optional().meta({ description: 'Present (true) on provider batches\' usage (`/v1/batches`, `/v1/messages/batches`, billed at the batch price), kept apart from the same model\'s calls and named `<model> (batch)`; absent for calls' }),
  model: z.string().optional().meta({ description: 'With `batch`: the model the batches ran' }),
};

export const LineItem = z.object({
  name: z.string().meta({ description: 'Model; `<model> (batch)` for its provider batches' }),
  cost: z.number().meta({ description: 'Credit used (USD)' }),
  usage: z.object({ requests: z.int(), prompt: z.number(), completion: z.number(), reasoning: z.number(), cached: z.number(), units: Units.optional() }),
  ...batchFields,
}).meta({ id: 'BillLineItem' });

export const DailyCost = z.object({
  date: z.string().meta({ description: 'UTC day, YYYY-MM-DD' }),
  timestamp: z.int().meta({ description: 'Start of the day, Unix seconds' }),
  total_requests: z.int(),
  total_prompt: z.number(),
  total_completion: z.number(),
  total_reasoning: z.number(),
  total_credit_used: z.number(),
  line_items: z.array(LineItem),
}).meta({ id: 'DailyCost' });

export const BillInfo = z.object({
  object: z.literal('bill_info'),
  start_date: z.string().meta({ description: 'First UTC day of the period' }),
  end_date: z.string().meta({ description: 'Last UTC day of the period, included' }),
  daily_costs: z.array(DailyCost).meta({ description: 'Every day of the period, oldest first (days without usage carry zeros)' }),
  usage_summary: z.record(z.string(), z.object({ model_stats: ModelStats, usage_analysis: Share, units: Units.optional(), ...batchFields })).meta({ description: 'Per model over the whole period; a model\'s provider batches under `<model> (batch)`' }),
  total_requests: z.int(),
  total_prompt: z.number(),
  total_completion: z.number(),
  total_reasoning: z.number(),
  total_credit_used: z.number(),
  token_summary: z.object({
    input_total: z.number().meta({ description: 'Input tokens, cached ones included' }),
    cached_input: z.number().meta({ description: 'Input tokens served from the provider cache' }),
    uncached_input: z.number().meta({ description: 'input_total less cached_input' }),
    output_total: z.number().meta({ description: 'Output tokens, reasoning ones included' }),
    reasoning_output: z.number(),
    processed_total: z.number().meta({ description: 'input_total plus output_total' }),
  }).meta({ id: 'TokenSummary' }),
}).meta({ id: 'BillInfo' });

export const UsageUser = z.object({
  id: z.int(),
  name: z.string(),
  alias: z.string(),
  email: z.string(),
  dna: z.string(),
  top_cost_model: z.string(),
  top_request_model: z.string(),
  total_requests: z.int(),
  total_prompt: z.number(),
  total_completion: z.number(),
  total_reasoning: z.number(),
  total_credit_used: z.number(),
  usage_analysis: Share,
}).meta({ id: 'UsageUser' });

export const DescendantBillInfo = BillInfo.extend({
  usage_users: z.array(UsageUser).meta({ description: 'Accounts with requests in the period, most credit used first' }),
}).meta({ id: 'DescendantBillInfo' });

export type BillQuery = z.infer<typeof BillQuery>;
export type DescendantBillQuery = z.infer<typeof DescendantBillQuery>;
export type BillInfo = z.infer<typeof BillInfo>;
export type DescendantBillInfo = z.infer<typeof DescendantBillInfo>;
export type UsageUser = z.infer<typeof UsageUser>;
export type DailyCost = z.infer<typeof DailyCost>;
