/**
 * A provider's Batch object read for what the gateway needs: whether the batch has ended, how,
 * its line counts, and where its succeeded lines are. OpenAI's Batch
 * (https://platform.openai.com/docs/api-reference/batch/object): `status` validating →
 * in_progress → finalizing → completed, or failed / expired / cancelling → cancelled;
 * `request_counts` {total, completed, failed}; `output_file_id`, `error_file_id`. Anthropic's
 * Message Batch (https://docs.anthropic.com/en/api/messages-batch-retrieve): `processing_status`
 * in_progress / canceling / ended; `request_counts` {processing, succeeded, errored, canceled,
 * expired}; results at `/v1/messages/batches/{id}/results` once ended.
 */
import type { BatchApi } from './routes';

export interface ProviderBatch {
  id: string;
  status: string;
  ended: boolean;
  /** Lines that succeeded may be billed (OpenAI's `failed` batch ran none). */
  billable: boolean;
  completed: number;
  failed: number;
  outputFileId: string | null;
  errorFileId: string | null;
}

const OPENAI_ENDED = new Set(['completed', 'failed', 'expired', 'cancelled']);

const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);
const idOf = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);

/** The object's fields, or null when it is not a batch of `api` (no ID, no status). */
export function readBatch(api: BatchApi, o: unknown): ProviderBatch | null {
  if (typeof o !== 'object' || o === null) return null;
  const b = o as Record<string, any>;
  const id = idOf(b.id);
  if (!id) return null;
  const counts = (typeof b.request_counts === 'object' && b.request_counts) || {};
  if (api === 'openai') {
    if (typeof b.status !== 'string') return null;
    return {
      id, status: b.status, ended: OPENAI_ENDED.has(b.status), billable: b.status !== 'failed',
      completed: count(counts.completed), failed: count(counts.failed),
      outputFileId: idOf(b.output_file_id), errorFileId: idOf(b.error_file_id),
    };
  }
  if (typeof b.processing_status !== 'string') return null;
  return {
    id, status: b.processing_status, ended: b.processing_status === 'ended', billable: true,
    completed: count(counts.succeeded), failed: count(counts.errored) + count(counts.canceled) + count(counts.expired),
    outputFileId: null, errorFileId: null,
  };
}
