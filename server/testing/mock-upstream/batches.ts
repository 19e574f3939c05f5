import type { ServerResponse } from 'node:http';
import { createReadStream } from 'node:fs';
import { link, open } from 'node:fs/promises';
import { join } from 'node:path';
import { mockId, nowSeconds, sendJson, type Behaviour } from './common';
import { chatCompletions, embeddings, openaiError, responses, type Call } from './openai';
import { completions, moderations } from './media';
import { answerOf, FAIL_LINE_MARKER, type Answer, type BatchClock, type BatchJob } from './batch-clock';
import { cursorPage, type FileStore } from './files';

/**
 * OpenAI's Batch API (API reference, "Batch"; Batch guide): a batch reads its requests from a
 * `batch` file of the same organization (here: credential), validates them, answers each with
 * the mock's own endpoint (the same body and usage a direct call gets), and writes an output
 * file (answered requests) and an error file (refused and failed ones) into the Files API.
 * Status: validating → in_progress → finalizing → completed, or failed (validation), cancelling
 * → cancelled, expired; each move is one step of the batch clock (mock-upstream/batch-clock.ts).
 */

/** The endpoints the mock runs batches for (of those the API reference lists for `endpoint`). */
const ENDPOINTS: Record<string, (c: Call) => void | Promise<void>> = {
  '/v1/chat/completions': chatCompletions,
  '/v1/responses': responses,
  '/v1/embeddings': embeddings,
  '/v1/completions': completions,
  '/v1/moderations': moderations,
};

/** "The file can contain up to 50,000 requests" (Create batch, input_file_id). */
export const BATCH_MAX_REQUESTS = 50_000;
const DAY = 24 * 60 * 60;

/** `/v1/batches`, `/v1/batches/{id}`, `/v1/batches/{id}/cancel`, behind any path prefix. */
export const BATCHES_PATH = /\/v1\/batches(?:\/([^/]+)(\/cancel)?)?$/;

export interface BatchError {
  code: string;
  message: string;
  param: string | null;
  line: number | null;
}

interface Line {
  start: number;
  end: number;
  customId: string;
}

type Status = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

/** What a batch needs of the mock: the files, and the behaviour in force for a credential (its answer fields shape the answers). */
export interface BatchContext {
  files: FileStore;
  behaviourFor: (credential: string, model: string) => Behaviour;
}

/** Each line of a JSONL file with its byte range, read as a stream (a 200 MB file is never whole in memory). */
async function* jsonlLines(path: string): AsyncGenerator<{ text: string; start: number; end: number }> {
  let pending: Buffer[] = [];
  let lineStart = 0;
  let pos = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    let from = 0;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) {
      pending.push(chunk.subarray(from, i));
      yield { text: Buffer.concat(pending).toString('utf8'), start: lineStart, end: pos + i };
      pending = [];
      from = i + 1;
      lineStart = pos + i + 1;
    }
    pending.push(chunk.subarray(from));
    pos += chunk.length;
  }
  if (pending.some((b) => b.length > 0)) yield { text: Buffer.concat(pending).toString('utf8'), start: lineStart, end: pos };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

class OpenAIBatch implements BatchJob {
  readonly id = mockId('batch_');
  status: Status = 'validating';
  readonly created_at = nowSeconds();
  private readonly times: Partial<Record<'in_progress_at' | 'finalizing_at' | 'completed_at' | 'failed_at' | 'expired_at' | 'cancelling_at' | 'cancelled_at', number>> = {};
  private errors: BatchError[] | null = null;
  private model: string | undefined;
  private lines: Line[] = [];
  private next = 0;
  private readonly output: string[] = [];
  private readonly failures: string[] = [];
  private readonly counts = { total: 0, completed: 0, failed: 0 };
  private readonly usage = { input_tokens: 0, cached_tokens: 0, output_tokens: 0, reasoning_tokens: 0 };
  private outputFileId: string | null = null;
  private errorFileId: string | null = null;
  /** A link to the input file's bytes, so deleting the input file does not pull them from under the batch. */
  private inputPath = '';

  constructor(
    private readonly ctx: BatchContext,
    readonly owner: string,
    private readonly params: { input_file_id: string; endpoint: string; completion_window: string; metadata: Record<string, string> | null; outputExpiresAfter: number | null },
  ) {}

  get open(): boolean {
    return this.status === 'validating' || this.status === 'in_progress' || this.status === 'finalizing' || this.status === 'cancelling';
  }

  /** The Batch object as OpenAI returns it. */
  object() {
    const t = this.times;
    return {
      id: this.id, object: 'batch', endpoint: this.params.endpoint,
      errors: this.errors === null ? null : { object: 'list', data: this.errors },
      input_file_id: this.params.input_file_id, completion_window: this.params.completion_window, status: this.status,
      output_file_id: this.outputFileId, error_file_id: this.errorFileId,
      created_at: this.created_at, in_progress_at: t.in_progress_at ?? null, expires_at: this.created_at + DAY,
      finalizing_at: t.finalizing_at ?? null, completed_at: t.completed_at ?? null, failed_at: t.failed_at ?? null,
      expired_at: t.expired_at ?? null, cancelling_at: t.cancelling_at ?? null, cancelled_at: t.cancelled_at ?? null,
      request_counts: { ...this.counts }, metadata: this.params.metadata,
      ...(this.model === undefined ? {} : { model: this.model }),
      usage: {
        input_tokens: this.usage.input_tokens, input_tokens_details: { cached_tokens: this.usage.cached_tokens },
        output_tokens: this.usage.output_tokens, output_tokens_details: { reasoning_tokens: this.usage.reasoning_tokens },
        total_tokens: this.usage.input_tokens + this.usage.output_tokens,
      },
    };
  }

  async step(lines: number): Promise<void> {
    switch (this.status) {
      case 'validating': return this.validate();
      case 'in_progress': {
        await this.run(lines);
        // A cancel that came in while the requests ran wins.
        if (this.status === 'in_progress' && this.next >= this.lines.length) this.enter('finalizing');
        return;
      }
      case 'finalizing': {
        await this.writeFiles();
        return this.enter('completed');
      }
      case 'cancelling': {
        await this.writeFiles();
        return this.enter('cancelled');
      }
      default:
    }
  }

  /**
   * The completion window is over: the answered requests stay in the output file, each one
   * not run goes to the error file as `batch_expired` (Batch guide, "Batch expiration"); they
   * are not counted as failed (an expired batch of 10 reports `{total: 10, completed: 1,
   * failed: 0}`, as seen from the API in warmbly/warmbly#333).
   */
  async expire(): Promise<void> {
    if (this.status === 'validating') return this.enter('expired');
    for (; this.next < this.lines.length; this.next++) {
      const l = this.lines[this.next];
      this.failures.push(JSON.stringify({ id: mockId('batch_req_'), custom_id: l.customId, response: null, error: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' } }));
    }
    await this.writeFiles();
    this.enter('expired');
  }

  /** Cancel batch: a batch on its way is cancelled at its next step; a finished one cannot be. */
  cancel(): boolean {
    if (this.status === 'cancelling') return true;
    if (this.status !== 'validating' && this.status !== 'in_progress') return false;
    this.enter('cancelling');
    return true;
  }

  private enter(s: Status): void {
    this.status = s;
    if (s !== 'validating') this.times[`${s}_at` as keyof OpenAIBatch['times']] = nowSeconds();
  }

  /**
   * The checks OpenAI makes while a batch is `validating` (Batch guide, "Preparing your batch
   * file" and the documented `errors.data[].code`s: empty_file, invalid_json_line,
   * too_many_tasks, duplicate_custom_id, url_mismatch, model_mismatch): each line
   * `{custom_id, method: "POST", url, body}`, custom_id unique, url the batch's endpoint, one
   * model for every line, at most 50,000 lines. A failed check fails the batch with the line
   * it was found on; the upload itself only checked the name, purpose and size (files.ts).
   */
  private async validate(): Promise<void> {
    const errors: BatchError[] = [];
    const fail = (code: string, message: string, param: string | null, line: number | null) => { if (errors.length < 1000) errors.push({ code, message, param, line }); };
    const file = this.ctx.files.get(this.owner, this.params.input_file_id);
    if (!file) fail('invalid_request', `No such File object: ${this.params.input_file_id}`, 'input_file_id', null);
    else if (file.purpose !== 'batch') fail('invalid_request', `The input file must have purpose 'batch', not '${file.purpose}'.`, 'input_file_id', null);
    const seen = new Set<string>();
    const lines: Line[] = [];
    if (file && file.purpose === 'batch') {
      this.inputPath = join(this.ctx.files.dir, `batch-input-${this.id}`);
      await link(file.path, this.inputPath);
        let n = 0;
      for await (const l of jsonlLines(this.inputPath)) {
        n += 1;
        if (l.text.trim() === '') continue;
        let v: unknown;
        try { v = JSON.parse(l.text); } catch { v = undefined; }
        if (!isObject(v)) { fail('invalid_json_line', 'This line is not parseable as valid JSON.', null, n); continue; }
        const missing = (['custom_id', 'method', 'url', 'body'] as const).find((k) => v[k] === undefined || v[k] === null);
        if (missing) { fail('missing_required_parameter', `Missing required parameter: '${missing}'.`, missing, n); continue; }
        if (typeof v.custom_id !== 'string') { fail('invalid_type', `Invalid type for 'custom_id': expected a string, but got ${typeof v.custom_id} instead.`, 'custom_id', n); continue; }
        if (v.method !== 'POST') { fail('invalid_value', `Invalid value for 'method': expected 'POST', but got '${String(v.method)}' instead.`, 'method', n); continue; }
        if (v.url !== this.params.endpoint) { fail('url_mismatch', `The URL provided for this request does not match the batch endpoint '${this.params.endpoint}'.`, 'url', n); continue; }
        if (!isObject(v.body)) { fail('invalid_type', "Invalid type for 'body': expected an object.", 'body', n); continue; }
        if (seen.has(v.custom_id)) { fail('duplicate_custom_id', 'The custom_id for this request is a duplicate of another request. The custom_id parameter must be unique for each request in a batch.', 'custom_id', n); continue; }
        seen.add(v.custom_id);
        const model = v.body.model;
        if (typeof model !== 'string') { fail('missing_required_parameter', "Missing required parameter: 'body.model'.", 'body.model', n); continue; }
        this.model ??= model;
        if (model !== this.model) { fail('model_mismatch', `The provided model '${model}' does not match the model '${this.model}' of the other requests in this batch. All requests in a batch must use the same model.`, 'body.model', n); continue; }
        lines.push({ start: l.start, end: l.end, customId: v.custom_id });
      }
      if (lines.length === 0 && errors.length === 0) fail('empty_file', 'The batch input file is empty.', null, null);
      if (lines.length > BATCH_MAX_REQUESTS) fail('too_many_tasks', `The batch input file is larger than the ${BATCH_MAX_REQUESTS} maximum number of requests.`, null, null);
    }
    // Cancelled while it was validating: it ends cancelled at the next step.
    if (this.status !== 'validating') return;
    if (errors.length > 0) {
      this.errors = errors;
      this.model = undefined;
      return this.enter('failed');
    }
    this.lines = lines;
    this.counts.total = lines.length;
    this.enter('in_progress');
  }

  /** Answers up to `n` more requests with the mock's own endpoint. */
  private async run(n: number): Promise<void> {
    const fh = await open(this.inputPath, 'r');
    try {
      for (let done = 0; done < n && this.next < this.lines.length && this.status === 'in_progress'; done++, this.next++) {
        const l = this.lines[this.next];
        const buf = Buffer.alloc(l.end - l.start);
        await fh.read(buf, 0, buf.length, l.start);
        const body = JSON.parse(buf.toString('utf8')).body as Record<string, unknown>;
        const answer = await this.answer(body);
        const line = JSON.stringify({ id: mockId('batch_req_'), custom_id: l.customId, response: { status_code: answer.status, request_id: mockId('req_'), body: answer.body }, error: null });
        if (answer.status === 200) {
          this.output.push(line);
          this.counts.completed += 1;
          this.count(answer.body?.usage);
        } else {
          this.failures.push(line);
          this.counts.failed += 1;
        }
      }
    } finally {
      await fh.close();
    }
  }

  /** The answer a direct call would get (a refusal included); a batch never streams. */
  private answer(body: Record<string, unknown>): Promise<Answer> | Answer {
    if (JSON.stringify(body).includes(FAIL_LINE_MARKER)) {
      return { status: 500, body: { error: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null } } };
    }
    if (body.stream === true) {
      return { status: 400, body: { error: { message: "Invalid value for 'stream': streaming is not supported in the Batch API.", type: 'invalid_request_error', param: 'stream', code: 'invalid_value' } } };
    }
    const model = String(body.model);
    const handle = ENDPOINTS[this.params.endpoint];
    const needsMessages = handle === chatCompletions;
    return answerOf(handle, { authorization: `Bearer ${this.owner}` }, this.params.endpoint, body, this.ctx.behaviourFor(this.owner, model), model, (c) => {
      if (needsMessages && !Array.isArray(body.messages)) {
        openaiError(c.res, 400, "'messages' is a required property");
        return false;
      }
      return true;
    });
  }

  /** Adds an answer's usage (chat and embeddings: prompt/completion tokens; responses: input/output tokens). */
  private count(u: Record<string, any> | undefined): void {
    if (!u) return;
    this.usage.input_tokens += u.prompt_tokens ?? u.input_tokens ?? 0;
    this.usage.output_tokens += u.completion_tokens ?? u.output_tokens ?? 0;
    this.usage.cached_tokens += u.prompt_tokens_details?.cached_tokens ?? u.input_tokens_details?.cached_tokens ?? 0;
    this.usage.reasoning_tokens += u.completion_tokens_details?.reasoning_tokens ?? u.output_tokens_details?.reasoning_tokens ?? 0;
  }

  /** The output and error files, each only when it has lines (as OpenAI leaves `output_file_id` null when nothing succeeded). */
  private async writeFiles(): Promise<void> {
    const expires = this.params.outputExpiresAfter === null ? null : nowSeconds() + this.params.outputExpiresAfter;
    if (this.output.length > 0 && this.outputFileId === null) {
      this.outputFileId = (await this.ctx.files.write(this.owner, `batch_${this.id}_output.jsonl`, 'batch_output', `${this.output.join('\n')}\n`, expires)).id;
    }
    if (this.failures.length > 0 && this.errorFileId === null) {
      this.errorFileId = (await this.ctx.files.write(this.owner, `batch_${this.id}_error.jsonl`, 'batch_output', `${this.failures.join('\n')}\n`, expires)).id;
    }
  }
}

const invalid = (res: ServerResponse, message: string, param: string, code: string | null = 'invalid_value') =>
  sendJson(res, 400, { error: { message, type: 'invalid_request_error', param, code } });

/** What `POST /v1/batches` refuses at once (API reference, "Create batch"), answered; false when the body passes. */
function createProblem(res: ServerResponse, body: Record<string, unknown>): boolean {
  for (const k of ['input_file_id', 'endpoint', 'completion_window'] as const) {
    if (body[k] === undefined) { invalid(res, `Missing required parameter: '${k}'.`, k, 'missing_required_parameter'); return true; }
    if (typeof body[k] !== 'string') { invalid(res, `Invalid type for '${k}': expected a string, but got ${typeof body[k]} instead.`, k, 'invalid_type'); return true; }
  }
  if (!(String(body.endpoint) in ENDPOINTS)) {
    invalid(res, `Invalid value for 'endpoint': expected one of ${Object.keys(ENDPOINTS).map((e) => `'${e}'`).join(', ')}, but got '${String(body.endpoint)}' instead.`, 'endpoint');
    return true;
  }
  // "Currently only `24h` is supported."
  if (body.completion_window !== '24h') {
    invalid(res, `Invalid value for 'completion_window': expected '24h', but got '${String(body.completion_window)}' instead.`, 'completion_window');
    return true;
  }
  // Metadata: "Set of 16 key-value pairs … Keys … maximum length of 64 characters. Values … maximum length of 512 characters."
  const meta = body.metadata;
  if (meta !== undefined && meta !== null) {
    if (!isObject(meta)) { invalid(res, "Invalid type for 'metadata': expected an object.", 'metadata', 'invalid_type'); return true; }
    const entries = Object.entries(meta);
    if (entries.length > 16) { invalid(res, `Invalid 'metadata': too many properties. Expected an object with at most 16 properties, but got an object with ${entries.length} properties instead.`, 'metadata', 'object_above_max_properties'); return true; }
    for (const [k, v] of entries) {
      if (k.length > 64) { invalid(res, `Invalid 'metadata': key '${k.slice(0, 20)}…' is longer than 64 characters.`, 'metadata', 'string_above_max_length'); return true; }
      if (typeof v !== 'string' || v.length > 512) { invalid(res, `Invalid 'metadata.${k}': expected a string of at most 512 characters.`, `metadata.${k}`, 'invalid_value'); return true; }
    }
  }
  // output_expires_after: anchor `created_at`, seconds between 3600 and 2592000.
  const after = body.output_expires_after;
  if (after !== undefined) {
    const a = after as { anchor?: unknown; seconds?: unknown };
    if (!isObject(after) || a.anchor !== 'created_at') { invalid(res, "Invalid value for 'output_expires_after.anchor': expected 'created_at'.", 'output_expires_after.anchor'); return true; }
    if (typeof a.seconds !== 'number' || !Number.isInteger(a.seconds) || a.seconds < 3600 || a.seconds > 2_592_000) {
      invalid(res, `Invalid 'output_expires_after.seconds': integer out of range. Expected a value between 3600 and 2592000, but got ${String(a.seconds)} instead.`, 'output_expires_after.seconds', 'integer_out_of_range');
      return true;
    }
  }
  return false;
}

/** Every credential's batches, moved by the clock. */
export class OpenAIBatches {
  private readonly byOwner = new Map<string, Map<string, OpenAIBatch>>();

  constructor(private readonly ctx: BatchContext, private readonly clock: BatchClock) {}

  /** The Batch API for one request. */
  call(res: ServerResponse, owner: string, method: string, path: string, query: URLSearchParams, body: unknown): void {
    const m = BATCHES_PATH.exec(path)!;
    const id = m[1] === undefined ? undefined : decodeURIComponent(m[1]);
    const mine = this.byOwner.get(owner) ?? new Map<string, OpenAIBatch>();
    if (id === undefined && method === 'POST') {
      if (!isObject(body)) return openaiError(res, 400, 'The request body is not a JSON object.');
      if (createProblem(res, body)) return;
      const after = body.output_expires_after as { seconds: number } | undefined;
      const batch = new OpenAIBatch(this.ctx, owner, {
        input_file_id: String(body.input_file_id), endpoint: String(body.endpoint), completion_window: '24h',
        metadata: (body.metadata as Record<string, string> | null | undefined) ?? null, outputExpiresAfter: after?.seconds ?? null,
      });
      this.byOwner.set(owner, mine.set(batch.id, batch));
      this.clock.add(batch);
      return sendJson(res, 200, batch.object());
    }
    if (id === undefined && method === 'GET') {
      // List batches: newest first, limit 1 to 100 (default 20), `after` a batch ID.
      return cursorPage(res, [...mine.values()].reverse().map((b) => b.object()), query, 100, 20);
    }
    const batch = id === undefined ? undefined : mine.get(id);
    const known = (method === 'GET' && m[2] === undefined) || (method === 'POST' && m[2] !== undefined);
    if (id === undefined || !known) return openaiError(res, 404, `Invalid URL (${method} ${path})`, {}, 'unknown_url');
    if (!batch) return sendJson(res, 404, { error: { message: `No batch found with id '${id}'.`, type: 'invalid_request_error', param: null, code: null } });
    if (method === 'GET') return sendJson(res, 200, batch.object());
    // Cancel batch: only a batch on its way; OpenAI answers 409 for one that has finished.
    if (!batch.cancel()) return sendJson(res, 409, { error: { message: `Cannot cancel a batch with status '${batch.status}'.`, type: 'invalid_request_error', param: null, code: null } });
    return sendJson(res, 200, batch.object());
  }
}
