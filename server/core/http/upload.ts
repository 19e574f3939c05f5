import { Readable } from 'node:stream';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { HttpResponse } from './uws';
import type { BodyRefusal } from './body-intake';

/** Why an upload stream failed: the client left, or sent more than the limit. */
export class UploadError extends Error {
  constructor(readonly reason: 'gone' | 'too-large', message: string) {
    super(message);
  }
}

/**
 * Every upload byte is copied off uWS's buffer, and read back from the spool when the model
 * came after the file: garbage that V8 frees only once tens of MB of it pile up, as it counts
 * Buffers' memory against a large external-memory allowance. A young-generation collection
 * for every GC_EVERY bytes copied frees those copies while they are still young and cheap to
 * collect (about a millisecond), so a large upload's footprint stays a few MB instead of
 * growing with V8's allowance.
 */
const GC_EVERY = 4 * 1024 * 1024;
let minorGc: (() => void) | null | undefined;
let copied = 0;

/** Counts bytes copied for an upload; collects the young generation each GC_EVERY of them. */
export function noteUploadCopy(bytes: number): void {
  copied += bytes;
  if (copied < GC_EVERY) return;
  copied = 0;
  if (minorGc === undefined) {
    try {
      v8.setFlagsFromString('--expose-gc');
      const gc = vm.runInNewContext('gc') as (o: { type: string; execution: string }) => void;
      minorGc = () => gc({ type: 'minor', execution: 'sync' });
    } catch {
      minorGc = null;
    }
  }
  minorGc?.();
}

/** How much of an upload may wait in memory between uWS and its reader before uWS stops reading the socket. */
const HIGH_WATER = 64 * 1024;

/**
 * A request body taken as it arrives, for uploads that must not be held whole (multipart
 * audio and images): a Readable fed by uWS's `onData` that pauses the socket while its reader
 * lags (`res.pause()`, resumed on `_read`), so memory holds at most HIGH_WATER of it. More
 * than `limit` bytes, or a declared Content-Length above it, is a 413 refusal found without
 * reading the rest; the client leaving destroys the stream at once.
 */
export class UploadBody {
  readonly stream: Readable;
  /** The declared Content-Length; undefined for a chunked body. */
  readonly declaredLength: number | undefined;
  /** Set when the upload is refused before it is read (its declared length is over the limit). */
  readonly refusal: BodyRefusal | null = null;
  /** Bytes received so far. */
  received = 0;
  /** The last byte arrived. */
  ended = false;
  private paused = false;

  constructor(private readonly res: HttpResponse, headers: Readonly<Record<string, string>>, readonly limit: number, onAbort: (l: () => void) => void) {
    const len = headers['content-length'];
    this.declaredLength = len !== undefined && /^\d+$/.test(len) ? Number(len) : undefined;
    this.stream = new Readable({
      highWaterMark: HIGH_WATER,
      read: () => {
        if (this.paused && !this.ended) {
          this.paused = false;
          this.res.resume();
        }
      },
    });
    // The stream may fail before anyone reads it (a client gone while its key is checked): never an unhandled error.
    this.stream.on('error', () => {});
    onAbort(() => {
      if (!this.ended) this.stream.destroy(new UploadError('gone', 'the client went away during the upload'));
    });
    if (this.declaredLength !== undefined && this.declaredLength > limit) {
      this.refusal = tooLarge(limit);
      // uWS still wants a sink for the bytes that may follow; they are dropped unread.
      res.onData(() => {});
      return;
    }
    if (this.declaredLength === 0 && headers['transfer-encoding'] === undefined) {
      this.ended = true;
      this.stream.push(null);
      return;
    }
    res.onData((chunk, isLast) => {
      // `ended` means the body's last byte came off the socket, even after a refusal: an answer
      // that closes the connection waits for it (answerAfterBody), or the close resets the connection.
      if (isLast) this.ended = true;
      if (this.stream.destroyed) return;
      this.received += chunk.byteLength;
      noteUploadCopy(chunk.byteLength);
      if (this.received > limit) {
        this.stream.destroy(new UploadError('too-large', tooLarge(limit).message));
        return;
      }
      // Copied: uWS detaches the ArrayBuffer when this callback returns.
      const more = this.stream.push(Buffer.from(new Uint8Array(chunk)));
      if (isLast) {
        this.stream.push(null);
      } else if (!more && !this.paused) {
        this.paused = true;
        this.res.pause();
      }
    });
  }
}

export const tooLarge = (limit: number): BodyRefusal => ({ status: 413, code: 'body_too_large', message: `Upload exceeds ${limit} bytes (MAX_UPLOAD_BYTES)` });
