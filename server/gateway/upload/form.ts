/**
 * A multipart upload (audio transcriptions and translations, image edits and variations) read
 * as it arrives with @fastify/busboy, and sent upstream as it arrives: never held whole.
 *
 * The proxy needs the `model` field before it can route, admit or bill, and clients often send
 * it after the file (the openai SDK writes the file first). Parts that come before the model
 * is known, and every field up to the first file after it, are kept: fields in memory, files in
 * a spool file in the OS temp folder, unlinked as soon as it is opened so that nothing is left
 * behind whatever happens to the process. From there on parts go upstream as busboy reads them
 * (`body`), the upload's own backpressure pacing the client. The upstream body is re-encoded
 * under a boundary of our own, so the routed model replaces the client's.
 *
 * Failover: the kept parts can be sent again, the live ones only once. A failed attempt may be
 * followed by another while no live part has been read (`replayable`); after that the failure
 * is the answer. A client that leaves, or an upload over the limit, destroys the parser, the
 * live streams and the spool at once.
 */
import { randomBytes } from 'node:crypto';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { Busboy, type BusboyInstance } from '@fastify/busboy';
import type { Refusal } from '../errors';
import { noteUploadCopy, UploadError, type UploadBody } from '../transport';

interface FieldPart { kind: 'field'; name: string; value: string }
interface FilePart { kind: 'file'; name: string; filename: string; mimeType: string; start: number; length: number; live: Readable | null }
type Part = FieldPart | FilePart;

/** Form fields and files of one request; a field is at most 1 MiB (an image prompt is far shorter). */
const LIMITS = { fieldNameSize: 200, fieldSize: 1024 * 1024, fields: 100, files: 20, parts: 200, headerPairs: 20 };
/** A spooled file is read back in pieces of this size. */
const READ_PIECE = 64 * 1024;
const CRLF = Buffer.from('\r\n');

/** What a file part is, as its head says: the name of its field, its filename and type. */
export interface FilePartHead { name: string; filename: string; mimeType: string }

/**
 * A change to a file part's bytes on their way upstream (the files route checks and rewrites a
 * batch input's lines as they pass): it may throw to stop the upload, which then never ends.
 */
export type FileFilter = (part: FilePartHead, bytes: AsyncIterable<Buffer>) => AsyncIterable<Buffer>;

/** A multipart/form-data content-type with its boundary: what an upload route reads. */
export const MULTIPART = /^\s*multipart\/form-data\s*;.*boundary=/i;
export const NOT_MULTIPART: Refusal = { status: 415, code: 'unsupported_media_type', message: 'This route takes multipart/form-data (a file and its fields)' };

/** A header value that cannot break the part's head: quotes and line breaks escaped as browsers do. */
const quoted = (s: string) => s.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');

export class UploadForm {
  /** Each field's first value: those before the first file that follows the model at admission, the rest as they go upstream. */
  readonly fields: Record<string, string> = {};
  private readonly kept: Part[] = [];
  private readonly live: Part[] = [];
  private liveWaiter: (() => void) | null = null;
  private headDone = false;
  private finished = false;
  private failure: Refusal | null = null;
  private readyResolve!: (r: Refusal | null) => void;
  /** Settles when the model and the fields before the next file are known, or the form ended, or it failed. */
  readonly ready: Promise<Refusal | null> = new Promise((r) => (this.readyResolve = r));
  private spool: FileHandle | null = null;
  private spoolOpening: Promise<FileHandle> | null = null;
  private spoolSize = 0;
  /** One per spooled file, settled once its last byte is written. */
  private readonly spoolWrites: Promise<void>[] = [];
  private liveTouched = false;
  private disposed = false;
  private readonly busboy: BusboyInstance;
  readonly boundary = `switchyard-${randomBytes(12).toString('hex')}`;

  /** `routeBy`: the field the call is routed by (`model`; the files route's `purpose`), whose parts before it are kept. */
  constructor(private readonly upload: UploadBody, contentType: string, private readonly routeBy = 'model') {
    this.busboy = Busboy({ headers: { 'content-type': contentType }, limits: LIMITS, fileHwm: READ_PIECE });
    const b = this.busboy;
    b.on('field', (name, value, nameCut, valueCut) => {
      if (nameCut || valueCut) return this.fail({ status: 413, code: 'field_too_large', message: `Form field ${name.slice(0, 50)} exceeds ${LIMITS.fieldSize} bytes` });
      this.add({ kind: 'field', name, value });
      // Fields after the first live file are unknown at admission but known by settle, which bills by them.
      if (!Object.hasOwn(this.fields, name)) this.fields[name] = value;
    });
    b.on('file', (name, stream, filename, _enc, mimeType) => {
      const part: FilePart = { kind: 'file', name, filename: filename ?? 'file', mimeType: mimeType || 'application/octet-stream', start: 0, length: 0, live: stream };
      if (!this.headDone && Object.hasOwn(this.fields, this.routeBy)) this.endHead();
      if (this.headDone) return this.add(part);
      // Before the model is known: into the spool, in order.
      part.live = null;
      this.kept.push(part);
      this.spoolWrites.push(this.toSpool(part, stream));
    });
    b.on('partsLimit', () => this.fail({ status: 400, code: 'invalid_request', message: `A form may have at most ${LIMITS.parts} parts` }));
    b.on('filesLimit', () => this.fail({ status: 400, code: 'invalid_request', message: `A form may have at most ${LIMITS.files} files` }));
    b.on('fieldsLimit', () => this.fail({ status: 400, code: 'invalid_request', message: `A form may have at most ${LIMITS.fields} fields` }));
    b.on('error', (err: Error) => this.fail({ status: 400, code: 'invalid_multipart', message: `Malformed multipart body: ${err.message}` }));
    b.on('finish', () => {
      this.finished = true;
      this.endHead();
      this.wake();
    });
    const failed = (err: Error) => {
      const gone = err instanceof UploadError && err.reason === 'gone';
      this.fail(gone ? { status: 499, code: 'client_gone', message: 'The client went away' } : { status: 413, code: 'body_too_large', message: err.message });
    };
    // The upload may have failed while the call was authenticated (a small body over the limit, a client gone): its error event has passed.
    if (upload.stream.destroyed) {
      failed(upload.stream.errored ?? new UploadError('gone', 'the client went away during the upload'));
      return;
    }
    upload.stream.on('error', failed);
    upload.stream.pipe(b);
  }

  /** Whether a failed attempt may be followed by another: no live part has been read yet. */
  get replayable(): boolean {
    return !this.liveTouched;
  }

  /** Why the form failed (too large, malformed, client gone), once it has. */
  get failed(): Refusal | null {
    return this.failure;
  }

  /** The bytes the client has sent so far. */
  get received(): number {
    return this.upload.received;
  }

  private add(p: Part): void {
    (this.headDone ? this.live : this.kept).push(p);
    this.wake();
  }

  private endHead(): void {
    if (this.headDone) return;
    this.headDone = true;
    // Without a model field the read-upload stage answers 400, as for a JSON body.
    if (!this.failure) this.readyResolve(null);
  }

  private wake(): void {
    const w = this.liveWaiter;
    this.liveWaiter = null;
    w?.();
  }

  private fail(r: Refusal): void {
    if (this.failure) return;
    this.failure = r;
    this.readyResolve(r);
    this.wake();
    this.dispose();
  }

  private async spoolFile(): Promise<FileHandle> {
    if (this.spool) return this.spool;
    this.spoolOpening ??= (async () => {
      const where = path.join(tmpdir(), `switchyard-upload-${randomBytes(8).toString('hex')}`);
      const fh = await open(where, 'wx+', 0o600);
      await unlink(where);
      if (this.disposed) await fh.close();
      else this.spool = fh;
      return fh;
    })();
    return this.spoolOpening;
  }

  private async toSpool(part: FilePart, stream: Readable): Promise<void> {
    try {
      const fh = await this.spoolFile();
      part.start = this.spoolSize;
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        if (this.disposed) return;
        await fh.write(chunk, 0, chunk.length, this.spoolSize);
        this.spoolSize += chunk.length;
        part.length += chunk.length;
      }
    } catch (err) {
      if (!this.disposed) this.fail({ status: 500, code: 'upload_spool_failed', message: 'The upload could not be held for sending' });
    }
  }

  /** The upstream body: the kept parts (the model replaced, unless null), then the live ones as they are read; file bytes through `filter` when given. */
  async *body(model: string | null, filter?: FileFilter): AsyncGenerator<Buffer> {
    const head = (p: Part) => Buffer.from(`--${this.boundary}\r\nContent-Disposition: form-data; name="${quoted(p.name)}"`
      + (p.kind === 'file' ? `; filename="${quoted(p.filename)}"\r\nContent-Type: ${p.mimeType.replace(/[\r\n]/g, '')}` : '') + '\r\n\r\n');
    const one = async function* (this: UploadForm, p: Part): AsyncGenerator<Buffer> {
      yield head(p);
      if (p.kind === 'field') yield Buffer.from(p.name === 'model' && model !== null ? model : p.value);
      else if (filter) yield* filter(p, this.fileBytes(p));
      else yield* this.fileBytes(p);
      yield CRLF;
    }.bind(this);
    // Spooled files may still be being written when the model arrived after them.
    await Promise.all(this.spoolWrites);
    this.throwIfFailed();
    for (const p of this.kept) yield* one(p);
    for (let i = 0; ; i++) {
      while (i >= this.live.length && !this.finished && !this.failure) await new Promise<void>((r) => (this.liveWaiter = r));
      this.throwIfFailed();
      if (i >= this.live.length) break;
      yield* one(this.live[i]);
    }
    yield Buffer.from(`--${this.boundary}--\r\n`);
  }

  /** A file part's bytes: as they arrive (live), or read back from the spool. */
  private async *fileBytes(p: FilePart): AsyncGenerator<Buffer> {
    if (p.live) {
      this.liveTouched = true;
      for await (const chunk of p.live as AsyncIterable<Buffer>) yield chunk;
      return;
    }
    const fh = this.spool!;
    for (let at = 0; at < p.length; at += READ_PIECE) {
      const piece = Buffer.allocUnsafe(Math.min(READ_PIECE, p.length - at));
      const { bytesRead } = await fh.read(piece, 0, piece.length, p.start + at);
      noteUploadCopy(bytesRead);
      yield bytesRead === piece.length ? piece : piece.subarray(0, bytesRead);
    }
  }

  private throwIfFailed(): void {
    if (this.failure) throw new Error(this.failure.message);
  }

  get contentType(): string {
    return `multipart/form-data; boundary=${this.boundary}`;
  }

  /** Frees everything at once: the parser, the live files, the spool. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.upload.stream.unpipe(this.busboy);
    if (!this.upload.ended) this.upload.stream.destroy();
    for (const p of this.live) if (p.kind === 'file') p.live?.destroy();
    this.busboy.destroy();
    const fh = this.spool;
    this.spool = null;
    void fh?.close().catch(() => {});
  }
}
