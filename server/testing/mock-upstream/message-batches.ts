import type { IncomingMessage, ServerResponse } from 'node:http';
import { mockId, sendJson } from './common';
import { anthropicError, anthropicPreconditions, messages } from './anthropic';
import { answerOf, FAIL_LINE_MARKER, type BatchClock, type BatchJob } from './batch-clock';
import type { BatchContext } from './batches';

/**
 * Anthropic's Message Batches API (API reference, "Message Batches"; guide "Batch
 * processing"): a batch of Messages requests per organization (here: credential), answered
 * by the mock's own Messages endpoint (the same message and usage a direct call gets), its
 * results as JSONL at `results_url` once it has ended. processing_status: in_progress →
 * ended, or canceling → ended; each move is one step of the batch clock.
 */

/** `/v1/messages/batches`, `/v1/messages/batches/{id}`, `…/{id}/results`, `…/{id}/cancel`, behind any path prefix. */
export const MESSAGE_BATCHES_PATH = /\/v1\/messages\/batches(?:\/([^/]+)(?:\/(results|cancel))?)?$/;

/** "A Message Batch is limited to either 100,000 Message requests or 256 MB in size, whichever is reached first." (Batch processing guide, "Batch limitations"). */
export const MESSAGE_BATCH_MAX_REQUESTS = 100_000;
export const MESSAGE_BATCH_MAX_BYTES = 256 * 1024 * 1024;
/** custom_id: string, 1 to 64 characters of `^[a-zA-Z0-9_-]{1,64}$` (Create a Message Batch). */
const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;
const DAY_MS = 24 * 60 * 60 * 1000;

type Result = { type: 'succeeded'; message: unknown } | { type: 'errored'; error: unknown } | { type: 'canceled' } | { type: 'expired' };
type Counts = { processing: number; succeeded: number; errored: number; canceled: number; expired: number };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const iso = (ms: number) => new Date(ms).toISOString();

class MessageBatch implements BatchJob {
  readonly id = mockId('msgbatch_');
  status: 'in_progress' | 'canceling' | 'ended' = 'in_progress';
  private readonly created = Date.now();
  private ended: number | null = null;
  private cancelAt: number | null = null;
  private next = 0;
  private readonly results: ({ custom_id: string; result: Result } | undefined)[];
  private readonly counts: Counts;

  constructor(
    private readonly ctx: BatchContext,
    readonly owner: string,
    private readonly requests: { custom_id: string; params: Record<string, unknown> }[],
    /** The mock's origin: results_url points there, as Anthropic's points at api.anthropic.com. */
    private readonly origin: string,
    private readonly version: string,
  ) {
    this.results = new Array(requests.length);
    this.counts = { processing: requests.length, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
  }

  get open(): boolean {
    return this.status !== 'ended';
  }

  /** The MessageBatch object as Anthropic returns it (times in RFC 3339). */
  object() {
    return {
      id: this.id, type: 'message_batch', processing_status: this.status, request_counts: { ...this.counts },
      ended_at: this.ended === null ? null : iso(this.ended), created_at: iso(this.created), expires_at: iso(this.created + DAY_MS),
      cancel_initiated_at: this.cancelAt === null ? null : iso(this.cancelAt), archived_at: null,
      results_url: this.status === 'ended' ? `${this.origin}/v1/messages/batches/${this.id}/results` : null,
    };
  }

  /** The results, one JSON line each, in request order. */
  resultsJsonl(): string {
    return this.results.map((r) => `${JSON.stringify(r)}\n`).join('');
  }

  async step(lines: number): Promise<void> {
    if (this.status === 'canceling') return this.finish('canceled');
    for (let done = 0; done < lines && this.next < this.requests.length && this.status === 'in_progress'; done++, this.next++) {
      const r = this.requests[this.next];
      const result = await this.answer(r.params);
      this.results[this.next] = { custom_id: r.custom_id, result };
      this.counts.processing -= 1;
      this.counts[result.type === 'succeeded' ? 'succeeded' : 'errored'] += 1;
    }
    if (this.status === 'in_progress' && this.next >= this.requests.length) this.end();
  }

  /** Past its 24 hours: "requests that were not processed … will be expired" (Batch processing guide). */
  async expire(): Promise<void> {
    this.finish('expired');
  }

  /**
   * Cancel a Message Batch: "the batch enters a canceling state … may finish processing
   * requests in progress before ending"; requests not yet run end `canceled`. False when it
   * has already ended.
   */
  cancel(): boolean {
    if (this.status === 'ended') return false;
    if (this.status === 'in_progress') {
      this.status = 'canceling';
      this.cancelAt = Date.now();
    }
    return true;
  }

  private finish(type: 'canceled' | 'expired'): void {
    for (; this.next < this.requests.length; this.next++) {
      this.results[this.next] = { custom_id: this.requests[this.next].custom_id, result: { type } };
      this.counts.processing -= 1;
      this.counts[type] += 1;
    }
    this.end();
  }

  private end(): void {
    this.status = 'ended';
    this.ended = Date.now();
  }

  /**
   * The Messages endpoint's answer for these params. Anthropic validates each request's params
   * only when it runs it ("validation of the params object for each message request is
   * performed asynchronously, and validation errors are returned when processing of the entire
   * batch has ended"): a body /v1/messages would refuse ends `errored` with its error.
   */
  private async answer(params: Record<string, unknown>): Promise<Result> {
    const errored = (type: string, message: string): Result => ({ type: 'errored', error: { type: 'error', error: { type, message }, request_id: mockId('req_') } });
    if (JSON.stringify(params).includes(FAIL_LINE_MARKER)) return errored('api_error', 'Internal server error');
    if (typeof params.model !== 'string') return errored('invalid_request_error', 'model: Field required');
    if (params.stream === true) return errored('invalid_request_error', 'stream: Message Batches do not support streaming.');
    const headers = { 'x-api-key': this.owner, 'anthropic-version': this.version };
    const a = await answerOf(messages, headers, '/v1/messages', params, this.ctx.behaviourFor(this.owner, params.model), params.model, (c) => anthropicPreconditions(c));
    return a.status === 200 ? { type: 'succeeded', message: a.body } : { type: 'errored', error: a.body };
  }
}

/** What `POST /v1/messages/batches` refuses at once, in Anthropic's validation wording; null when it passes. */
function createProblem(body: Record<string, unknown>): string | null {
  const requests = body.requests;
  if (requests === undefined) return 'requests: Field required';
  if (!Array.isArray(requests)) return 'requests: Input should be a valid list';
  if (requests.length === 0) return 'requests: List should have at least 1 item after validation, not 0';
  if (requests.length > MESSAGE_BATCH_MAX_REQUESTS) return `requests: List should have at most ${MESSAGE_BATCH_MAX_REQUESTS} items after validation, not ${requests.length}`;
  const seen = new Set<string>();
  for (const [i, r] of requests.entries()) {
    if (!isObject(r)) return `requests.${i}: Input should be a valid dictionary or object to extract fields from`;
    if (r.custom_id === undefined) return `requests.${i}.custom_id: Field required`;
    if (typeof r.custom_id !== 'string' || !CUSTOM_ID.test(r.custom_id)) return `requests.${i}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`;
    if (r.params === undefined) return `requests.${i}.params: Field required`;
    if (!isObject(r.params)) return `requests.${i}.params: Input should be a valid dictionary or object to extract fields from`;
    // "Must be unique for each request within the Message Batch." (custom_id)
    if (seen.has(r.custom_id)) return `requests.${i}.custom_id: Duplicate custom_id '${r.custom_id}'. Each request in a Message Batch must have a unique custom_id.`;
    seen.add(r.custom_id);
  }
  return null;
}

/** Every credential's message batches, moved by the clock. */
export class MessageBatches {
  private readonly byOwner = new Map<string, Map<string, MessageBatch>>();

  constructor(private readonly ctx: BatchContext, private readonly clock: BatchClock, private readonly origin: string) {}

  /** The Message Batches API for one request. */
  call(req: IncomingMessage, res: ServerResponse, owner: string, method: string, path: string, body: unknown, query: URLSearchParams): void {
    // Checked before anything else, as for /v1/messages (mock-upstream/anthropic.ts).
    if (!req.headers['x-api-key']) return anthropicError(res, 401, 'x-api-key header is required');
    const version = req.headers['anthropic-version'];
    if (typeof version !== 'string') return anthropicError(res, 400, 'anthropic-version: header is required');
    const m = MESSAGE_BATCHES_PATH.exec(path)!;
    const id = m[1] === undefined ? undefined : decodeURIComponent(m[1]);
    const mine = this.byOwner.get(owner) ?? new Map<string, MessageBatch>();
    if (id === undefined && method === 'POST') {
      if (Number(req.headers['content-length'] ?? 0) > MESSAGE_BATCH_MAX_BYTES) return anthropicError(res, 413, 'Request exceeds the maximum allowed number of bytes.');
      if (!isObject(body)) return anthropicError(res, 400, 'The request body is not a JSON object.');
      const problem = createProblem(body);
      if (problem) return anthropicError(res, 400, problem);
      const requests = (body.requests as { custom_id: string; params: Record<string, unknown> }[]).map((r) => ({ custom_id: r.custom_id, params: r.params }));
      const batch = new MessageBatch(this.ctx, owner, requests, this.origin, version);
      this.byOwner.set(owner, mine.set(batch.id, batch));
      this.clock.add(batch);
      return sendJson(res, 200, batch.object());
    }
    if (id === undefined && method === 'GET') return this.list(res, [...mine.values()].reverse(), query);
    const action = m[2];
    const allowed = (method === 'GET' && action !== 'cancel') || (method === 'POST' && action === 'cancel') || (method === 'DELETE' && action === undefined);
    if (id === undefined || !allowed) return anthropicError(res, 404, `Not found: ${method} ${path}`);
    const batch = mine.get(id);
    if (!batch) return anthropicError(res, 404, `Message batch ${id} not found.`);
    if (method === 'GET' && action === undefined) return sendJson(res, 200, batch.object());
    if (action === 'results') {
      // results_url is null until the batch has ended; its results are not there before.
      if (batch.status !== 'ended') return anthropicError(res, 400, `Message batch ${id} has not ended yet; its results are available once processing_status is 'ended'.`);
      const text = batch.resultsJsonl();
      res.writeHead(200, { 'content-type': 'application/binary', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    if (action === 'cancel') {
      if (!batch.cancel()) return anthropicError(res, 400, `Message batch ${id} has already ended and cannot be canceled.`);
      return sendJson(res, 200, batch.object());
    }
    // Delete a Message Batch: "Message Batches can only be deleted once they've finished processing.
    // If you'd like to delete an in-progress batch, you must first cancel it."
    if (batch.status !== 'ended') return anthropicError(res, 400, `Message batch ${id} cannot be deleted while it is still processing; cancel it first and delete it once it has ended.`);
    mine.delete(id);
    return sendJson(res, 200, { id, type: 'message_batch_deleted' });
  }

  /**
   * List Message Batches: newest first, `limit` 1 to 1000 (default 20), `after_id` for the
   * page after an ID, `before_id` for the page before one, as the SDK's Page reads them.
   */
  private list(res: ServerResponse, all: MessageBatch[], query: URLSearchParams): void {
    const raw = query.get('limit');
    const limit = raw === null ? 20 : Number(raw);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) return anthropicError(res, 400, `limit: Input should be less than or equal to 1000 and greater than or equal to 1`);
    const after = query.get('after_id');
    const before = query.get('before_id');
    let start = 0;
    let end = all.length;
    if (after !== null) start = all.findIndex((b) => b.id === after) + 1 || all.length;
    if (before !== null) {
      end = Math.max(0, all.findIndex((b) => b.id === before));
      start = Math.max(start, end - limit);
    }
    const page = all.slice(start, Math.min(end, start + limit));
    const hasMore = before !== null ? start > 0 : start + page.length < end;
    sendJson(res, 200, { data: page.map((b) => b.object()), has_more: page.length > 0 && hasMore, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null });
  }
}
