import { z } from 'zod';
import { BillQuery } from '../billing/schemas';
import { LATENCY_BUCKETS_TEXT } from './latency-buckets';

export const LatencyScope = z.enum(['own', 'subtree']);

export const LatencyQuery = BillQuery.extend({
  scope: LatencyScope.optional().meta({ description: '`own` (default): the caller\'s own calls; `subtree`: the caller\'s and every descendant\'s (needs manage permission, as /x-bill)' }),
});

const ms = (what: string) => z.int().nullable().meta({ description: `${what}, in milliseconds (a bucket estimate); null when no call had one` });

const Percentiles = z.object({
  p50: ms('Median'),
  p90: ms('90th percentile'),
  p99: ms('99th percentile'),
}).meta({ id: 'LatencyPercentiles' });

const groupFields = {
  requests: z.int().meta({ description: 'Calls with a recorded duration' }),
  first_byte_requests: z.int().meta({ description: 'Of these, calls with a first byte (streamed answers); the others count for duration only' }),
  duration_ms: Percentiles.meta({ description: 'From the call\'s arrival to its end' }),
  first_byte_ms: Percentiles.meta({ description: 'From the call\'s arrival until its answer\'s head went out' }),
};

export const ModelLatency = z.object({ model: z.string().meta({ description: 'Model as routed and billed; `<model> (batch)` never appears (provider batches have no call latency)' }), ...groupFields })
  .meta({ id: 'ModelLatency' });

export const KeyKindLatency = z.object({
  key_kind: z.string().meta({ description: 'Kind of the provider key that served the calls: standard (OpenAI-compatible), anthropic, azure, vertex, bedrock, gemini; unknown for calls recorded before kinds were kept' }),
  ...groupFields,
}).meta({ id: 'KeyKindLatency' });

const DayPercentiles = z.object({ p50: ms('Median'), p90: ms('90th percentile') }).meta({ id: 'LatencyDayPercentiles' });

export const DailyLatency = z.object({
  date: z.string().meta({ description: 'UTC day, YYYY-MM-DD' }),
  timestamp: z.int().meta({ description: 'Start of the day, Unix seconds' }),
  requests: z.int(),
  duration_ms: DayPercentiles,
  first_byte_ms: DayPercentiles,
}).meta({ id: 'DailyLatency' });

export const LatencyReport = z.object({
  object: z.literal('latency_report'),
  scope: LatencyScope,
  start_date: z.string().meta({ description: 'First UTC day of the period' }),
  end_date: z.string().meta({ description: 'Last UTC day of the period, included' }),
  requests: z.int().meta({ description: 'Calls with a recorded duration in the period' }),
  by_model: z.array(ModelLatency).meta({ description: 'Per model over the whole period, most calls first' }),
  by_key_kind: z.array(KeyKindLatency).meta({ description: 'Per provider key kind over the whole period, most calls first' }),
  daily: z.array(DailyLatency).meta({ description: 'Every day of the period, oldest first (days without calls carry nulls)' }),
}).meta({ id: 'LatencyReport', description: LATENCY_BUCKETS_TEXT });

export type LatencyQuery = z.infer<typeof LatencyQuery>;
export type LatencyReport = z.infer<typeof LatencyReport>;
export type ModelLatency = z.infer<typeof ModelLatency>;
export type KeyKindLatency = z.infer<typeof KeyKindLatency>;
export type DailyLatency = z.infer<typeof DailyLatency>;
