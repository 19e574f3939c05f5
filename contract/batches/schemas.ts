import { z } from 'zod';
import { isoTime } from '../common';

export const MAX_BATCH_PAGE = 200;

export const BatchQuery = z.strictObject({
  user: z.string().trim().min(1).max(320).optional()
    .meta({ description: 'An account in the caller\'s tree (ID, name, email or DNA path): its batches and those of every account below it; default the caller' }),
  status: z.enum(['open', 'settled']).optional().meta({ description: '`open`: still holding their reservation; `settled`: billed (or given back)' }),
  limit: z.coerce.number().int().min(1).max(MAX_BATCH_PAGE).optional().meta({ description: `Batches per page (default 50, at most ${MAX_BATCH_PAGE})` }),
  offset: z.coerce.number().int().min(0).max(1_000_000).optional().meta({ description: 'Batches to skip (newest first)' }),
});

export const BatchIdPath = z.object({
  id: z.string().min(1).max(200).regex(/^[A-Za-z0-9_-]+$/).meta({ description: 'The provider\'s batch ID (`batch_…`, `msgbatch_…`)' }),
});

export const GatewayBatch = z.object({
  id: z.string().meta({ description: 'The provider\'s batch ID' }),
  account_id: z.int().meta({ description: 'The account that created it (the only one that may read it through the proxy)' }),
  api: z.enum(['openai', 'anthropic']).meta({ description: 'OpenAI\'s Batch API or Anthropic\'s Message Batches' }),
  endpoint: z.string().meta({ description: 'The route its lines call (`/v1/chat/completions`, `/v1/messages`, …)' }),
  model: z.string().meta({ description: 'The model its lines name: what it is billed at, at the batch price' }),
  key_id: z.int().meta({ description: 'The provider key it runs on' }),
  level: z.int().nullable(),
  input_file_id: z.string().nullable(),
  status: z.string().meta({ description: 'The provider\'s status as last seen' }),
  lines: z.int().meta({ description: 'Requests in the batch' }),
  completed_lines: z.int(),
  failed_lines: z.int(),
  reserved: z.number().meta({ description: 'Credit held from create until settled: the worst case of every line at the batch price' }),
  billed: z.number().nullable().meta({ description: 'What its usage record billed (completed lines only); null while open' }),
  created_at: isoTime,
  expires_at: isoTime.meta({ description: 'After this the provider will never finish it: the reservation is given back unbilled' }),
  settled_at: isoTime.nullable(),
}).meta({ id: 'GatewayBatch' });

export const BatchPage = z.object({
  object: z.literal('list'),
  data: z.array(GatewayBatch).meta({ description: 'Newest first' }),
  has_more: z.boolean(),
}).meta({ id: 'BatchPage' });

export type BatchQuery = z.infer<typeof BatchQuery>;
export type GatewayBatch = z.infer<typeof GatewayBatch>;
export type BatchPage = z.infer<typeof BatchPage>;
