import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { UpstreamDeframer } from '../types';

/**
 * AWS event-stream framing (`application/vnd.amazon.eventstream`, "Event stream encoding" in
 * the AWS SDK docs) undone into server-sent events, so everything downstream (the usage tap,
 * the translators, pass-through to an Anthropic client) reads SSE as from any other upstream:
 * - a `chunk` event (InvokeModelWithResponseStream) holds `{"bytes":"<base64>"}`, the JSON of
 *   one Anthropic stream event: it becomes `event: <its type>` / `data: <that JSON>`;
 * - any other event (ConverseStream's messageStart, contentBlockDelta, metadata…) becomes
 *   `event: <:event-type>` / `data: <its JSON payload>`;
 * - an exception (`:message-type: exception`, e.g. throttlingException,
 *   modelStreamErrorException) or error message, and a broken frame (bad CRC, a length out of
 *   bounds, the stream ending inside a frame), end the stream with Anthropic's `error` event,
 *   which the tap notes as an abnormal end and a translator turns into the client's own.
 * Frames are decoded by the maintained codec (@smithy/eventstream-codec), which checks both CRCs.
 */

/** A frame's prelude (total length, headers length, prelude CRC) and its message CRC. */
const MIN_FRAME = 16;
/** AWS caps an event-stream message at 16 MiB (its payload at a bit less); a larger length is a broken stream. */
export const MAX_FRAME = 16 * 1024 * 1024;

const codec = new EventStreamCodec(toUtf8, fromUtf8);
type Message = ReturnType<EventStreamCodec['decode']>;

/** Anthropic's error types for AWS's stream exceptions ("InvokeModelWithResponseStream", Errors). */
const ERROR_TYPES: Record<string, string> = {
  throttlingException: 'rate_limit_error',
  serviceUnavailableException: 'overloaded_error',
  validationException: 'invalid_request_error',
};

const header = (m: Message, name: string): string | undefined => {
  const h = m.headers[name];
  return h && h.type === 'string' ? h.value : undefined;
};

/** Anthropic's stream error event: the closing event of a failed stream. */
export function errorEvent(type: string, message: string): string {
  return `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, message } })}\n\n`;
}

export class EventStreamDeframer implements UpstreamDeframer {
  private buf: Buffer = Buffer.alloc(0);
  /** The stream failed: nothing after its error event goes out. */
  private over = false;

  push(chunk: Buffer): Buffer {
    if (this.over) return Buffer.alloc(0);
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    let out = '';
    while (!this.over && this.buf.length >= 4) {
      const total = this.buf.readUInt32BE(0);
      if (total < MIN_FRAME || total > MAX_FRAME) {
        out += this.fail('api_error', 'The upstream stream could not be read (a frame of impossible length)');
        break;
      }
      if (this.buf.length < total) break;
      const frame = this.buf.subarray(0, total);
      this.buf = this.buf.subarray(total);
      let m: Message;
      try {
        m = codec.decode(frame);
      } catch {
        out += this.fail('api_error', 'The upstream stream could not be read (a corrupt frame)');
        break;
      }
      out += this.event(m);
    }
    return out ? Buffer.from(out) : Buffer.alloc(0);
  }

  end(): Buffer {
    if (this.over || this.buf.length === 0) return Buffer.alloc(0);
    return Buffer.from(this.fail('api_error', 'The upstream stream ended inside an event'));
  }

  private fail(type: string, message: string): string {
    this.over = true;
    this.buf = Buffer.alloc(0);
    return errorEvent(type, message);
  }

  private event(m: Message): string {
    const kind = header(m, ':message-type');
    const body = toUtf8(m.body);
    if (kind === 'exception' || kind === 'error') {
      const name = header(m, ':exception-type') ?? header(m, ':error-code') ?? 'internalServerException';
      let said = header(m, ':error-message');
      try { said = String(JSON.parse(body)?.message ?? said ?? ''); } catch { /* no JSON message: the header's */ }
      const type = ERROR_TYPES[name.charAt(0).toLowerCase() + name.slice(1)] ?? 'api_error';
      return this.fail(type, `Bedrock ${name}: ${(said ?? '').slice(0, 300)}`);
    }
    const eventType = header(m, ':event-type') ?? '';
    let data: unknown;
    try {
      data = JSON.parse(body);
    } catch {
      return this.fail('api_error', 'The upstream stream could not be read (an event that is not JSON)');
    }
    if (eventType === 'chunk') {
      const bytes = (data as { bytes?: unknown })?.bytes;
      if (typeof bytes !== 'string') return this.fail('api_error', 'The upstream stream could not be read (a chunk without bytes)');
      const json = Buffer.from(bytes, 'base64').toString('utf8');
      let type: unknown;
      try { type = JSON.parse(json)?.type; } catch { /* checked below */ }
      if (typeof type !== 'string' || /[\r\n]/.test(type)) return this.fail('api_error', 'The upstream stream could not be read (a chunk that is not an event)');
      // One line of JSON: the SSE data field cannot hold a raw line break.
      return `event: ${type}\ndata: ${json.replace(/\r?\n/g, ' ')}\n\n`;
    }
    if (!/^[A-Za-z]+$/.test(eventType)) return '';
    return `event: ${eventType}\ndata: ${JSON.stringify(data)}\n\n`;
  }
}
