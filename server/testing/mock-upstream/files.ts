import type { ServerResponse } from 'node:http';
import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mockId, nowSeconds, sendJson } from './common';
import { openaiError } from './openai';
import type { ReceivedFile } from './uploads';

/**
 * OpenAI's Files API (API reference, "Files"): uploads kept on disk per organization (here: per
 * upstream credential, so a file uploaded with one key is unknown to another), listed, read back
 * and deleted as OpenAI answers them. The Batch API reads its input from here and writes its
 * output and error files here (mock-upstream/batches.ts).
 */

/** The purposes an upload may name (API reference, "Upload file": purpose). */
export const UPLOAD_PURPOSES = ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'] as const;

/** "Individual files can be up to 512 MB" (Upload file). */
export const FILE_MAX_BYTES = 512 * 1024 * 1024;
/** "The Batch API only supports .jsonl files up to 200 MB in size" (Upload file; Batch guide, "Rate limits"). */
export const BATCH_FILE_MAX_BYTES = 200 * 1024 * 1024;

const DAY = 24 * 60 * 60;

export interface StoredFile {
  id: string;
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  expires_at: number | null;
  /** Where its bytes are. */
  path: string;
  /** Upload order, to list files made in the same second in order. */
  seq: number;
}

/** The File object as OpenAI returns it. */
export function fileObject(f: StoredFile) {
  return {
    id: f.id, object: 'file', bytes: f.bytes, created_at: f.created_at, filename: f.filename, purpose: f.purpose,
    status: 'processed', expires_at: f.expires_at, status_details: null,
  };
}

/** OpenAI's answer to a file ID the organization does not have (or no longer has). */
export function noSuchFile(res: ServerResponse, id: string): void {
  sendJson(res, 404, { error: { message: `No such File object: ${id}`, type: 'invalid_request_error', param: 'id', code: null } });
}

/** The files of every credential, their bytes in one temporary directory removed by close(). */
export class FileStore {
  readonly dir = mkdtempSync(join(tmpdir(), 'mock-upstream-files-'));
  private readonly byOwner = new Map<string, Map<string, StoredFile>>();
  private seq = 0;

  /** The credential's file, unless it expired (an expired file is gone, as at OpenAI). */
  get(owner: string, id: string): StoredFile | undefined {
    const f = this.byOwner.get(owner)?.get(id);
    if (f && f.expires_at !== null && nowSeconds() >= f.expires_at) {
      this.remove(owner, id);
      return undefined;
    }
    return f;
  }

  add(owner: string, f: Omit<StoredFile, 'id' | 'seq' | 'created_at'>): StoredFile {
    let files = this.byOwner.get(owner);
    if (!files) this.byOwner.set(owner, (files = new Map()));
    const stored: StoredFile = { ...f, id: mockId('file-'), created_at: nowSeconds(), seq: (this.seq += 1) };
    files.set(stored.id, stored);
    return stored;
  }

  /** A file the mock writes itself (a batch's output or errors). */
  async write(owner: string, filename: string, purpose: string, content: string, expiresAt: number | null): Promise<StoredFile> {
    const path = join(this.dir, `made-${mockId('')}`);
    await writeFile(path, content);
    return this.add(owner, { bytes: Buffer.byteLength(content), filename, purpose, expires_at: expiresAt, path });
  }

  remove(owner: string, id: string): boolean {
    const f = this.byOwner.get(owner)?.get(id);
    if (!f) return false;
    this.byOwner.get(owner)!.delete(id);
    void rm(f.path, { force: true });
    return true;
  }

  /** Newest first, as OpenAI lists by default. */
  list(owner: string): StoredFile[] {
    const files = [...(this.byOwner.get(owner)?.keys() ?? [])].map((id) => this.get(owner, id)).filter((f): f is StoredFile => f !== undefined);
    return files.sort((a, b) => b.created_at - a.created_at || b.seq - a.seq);
  }

  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** `/v1/files`, `/v1/files/{id}`, `/v1/files/{id}/content`, behind any path prefix. */
export const FILES_PATH = /\/v1\/files(?:\/([^/]+)(\/content)?)?$/;

/**
 * A page of a list in OpenAI's cursor form (`after`, `limit`, `order`), as the SDK's CursorPage
 * reads it: it asks for the next page `after` the last item's ID while `has_more` is true.
 * `items` come newest first.
 */
export function cursorPage<T extends { id: string }>(res: ServerResponse, items: T[], query: URLSearchParams, maxLimit: number, defaultLimit: number, asc = false): void {
  const raw = query.get('limit');
  const limit = raw === null ? defaultLimit : Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > maxLimit) {
    return sendJson(res, 400, { error: { message: `Invalid 'limit': integer out of range. Expected a value between 1 and ${maxLimit}, but got ${raw} instead.`, type: 'invalid_request_error', param: 'limit', code: 'integer_out_of_range' } });
  }
  const all = asc ? [...items].reverse() : items;
  const after = query.get('after');
  const start = after === null ? 0 : all.findIndex((it) => it.id === after) + 1;
  const data = after !== null && start === 0 ? [] : all.slice(start, start + limit);
  sendJson(res, 200, { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: data.length > 0 && start + data.length < all.length });
}

/**
 * What the upload's `expires_after[anchor]` and `expires_after[seconds]` fields set (Upload
 * file, expires_after: anchor `created_at`, seconds between 3600 and 2592000), else the
 * default: batch files expire after 30 days, others never. A string is the refusal.
 */
function expiryOf(form: Record<string, unknown>, purpose: string): number | null | string {
  const anchor = form['expires_after[anchor]'];
  const seconds = form['expires_after[seconds]'];
  if (anchor === undefined && seconds === undefined) return purpose === 'batch' ? nowSeconds() + 30 * DAY : null;
  if (anchor !== 'created_at') return `Invalid value for 'expires_after.anchor': expected 'created_at'.`;
  const s = Number(seconds);
  if (!Number.isInteger(s) || s < 3600 || s > 2_592_000) return `Invalid 'expires_after.seconds': integer out of range. Expected a value between 3600 and 2592000, but got ${String(seconds)} instead.`;
  return nowSeconds() + s;
}

/**
 * `POST /v1/files`: the multipart body was streamed to disk as it arrived (readMultipart with
 * the store's directory). At upload OpenAI checks the purpose, the file's presence and size,
 * and for `batch` the `.jsonl` name and the Batch API's 200 MB; the lines themselves are
 * checked when a batch starts validating (mock-upstream/batches.ts), as the Batch guide
 * describes ("validating: the input file is being validated before the batch can begin").
 */
function upload(res: ServerResponse, store: FileStore, owner: string, form: Record<string, unknown> & { files: ReceivedFile[] }): void {
  const file = form.files.find((f) => f.field === 'file');
  const drop = () => { for (const f of form.files) if (f.path) void rm(f.path, { force: true }); };
  const refuse = (message: string, param: string | null, code: string | null = null, status = 400) => {
    drop();
    sendJson(res, status, { error: { message, type: 'invalid_request_error', param, code } });
  };
  const purpose = form.purpose;
  if (!file?.path) return refuse("Missing required parameter: 'file'.", 'file', 'missing_required_parameter');
  if (typeof purpose !== 'string') return refuse("Missing required parameter: 'purpose'.", 'purpose', 'missing_required_parameter');
  if (!(UPLOAD_PURPOSES as readonly string[]).includes(purpose)) {
    return refuse(`'${purpose}' is not one of [${UPLOAD_PURPOSES.map((p) => `'${p}'`).join(', ')}] - 'purpose'`, 'purpose', 'invalid_value');
  }
  if (file.bytes > FILE_MAX_BYTES) return refuse(`File is too large: ${file.bytes} bytes. Files can be up to 512 MB.`, 'file', 'file_too_large', 413);
  if (purpose === 'batch') {
    if (!file.filename.toLowerCase().endsWith('.jsonl')) return refuse('Invalid file format for Batch API. Must be .jsonl', 'file', 'invalid_file_format');
    if (file.bytes > BATCH_FILE_MAX_BYTES) return refuse(`File is too large for the Batch API: ${file.bytes} bytes. Batch input files can be up to 200 MB.`, 'file', 'file_too_large');
  }
  const expiresAt = expiryOf(form, purpose);
  if (typeof expiresAt === 'string') return refuse(expiresAt, 'expires_after');
  for (const f of form.files) if (f !== file && f.path) void rm(f.path, { force: true });
  const stored = store.add(owner, { bytes: file.bytes, filename: file.filename, purpose, expires_at: expiresAt, path: file.path });
  sendJson(res, 200, fileObject(stored));
}

/**
 * The Files API for one request. `form` is the parsed multipart body of an upload (null for
 * the other calls).
 */
export function filesCall(res: ServerResponse, store: FileStore, owner: string, method: string, path: string, query: URLSearchParams, form: unknown): void {
  const m = FILES_PATH.exec(path)!;
  const id = m[1] === undefined ? undefined : decodeURIComponent(m[1]);
  const content = m[2] !== undefined;
  if (id === undefined && method === 'POST') {
    if (!form || typeof form !== 'object' || !Array.isArray((form as { files?: unknown }).files)) {
      return openaiError(res, 400, "Invalid request: expected a multipart/form-data body with 'file' and 'purpose'.");
    }
    return upload(res, store, owner, form as Record<string, unknown> & { files: ReceivedFile[] });
  }
  if (id === undefined && method === 'GET') {
    const purpose = query.get('purpose');
    const order = query.get('order') ?? 'desc';
    if (order !== 'asc' && order !== 'desc') return sendJson(res, 400, { error: { message: `Invalid value for 'order': expected one of 'asc' or 'desc', but got '${order}' instead.`, type: 'invalid_request_error', param: 'order', code: 'invalid_value' } });
    const files = store.list(owner).filter((f) => purpose === null || f.purpose === purpose).map(fileObject);
    // List files: limit 1 to 10,000, default 10,000.
    return cursorPage(res, files, query, 10_000, 10_000, order === 'asc');
  }
  if (id === undefined) return openaiError(res, 404, `Invalid URL (${method} ${path})`, {}, 'unknown_url');
  const f = store.get(owner, id);
  if (content && method === 'GET') {
    if (!f) return noSuchFile(res, id);
    // OpenAI keeps assistants files from being read back ("Not allowed to download files of purpose: assistants").
    if (f.purpose === 'assistants') return openaiError(res, 400, `Not allowed to download files of purpose: ${f.purpose}`);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': f.bytes, 'content-disposition': `attachment; filename="${f.filename.replace(/["\\\r\n]/g, '_')}"` });
    const stream = createReadStream(f.path);
    stream.on('error', () => res.destroy());
    stream.pipe(res);
    return;
  }
  if (content) return openaiError(res, 404, `Invalid URL (${method} ${path})`, {}, 'unknown_url');
  if (method === 'GET') return f ? sendJson(res, 200, fileObject(f)) : noSuchFile(res, id);
  if (method === 'DELETE') {
    if (!f) return noSuchFile(res, id);
    store.remove(owner, id);
    return sendJson(res, 200, { id, object: 'file', deleted: true });
  }
  return openaiError(res, 404, `Invalid URL (${method} ${path})`, {}, 'unknown_url');
}
