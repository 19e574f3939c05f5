import type { TokenUsage } from '../../domain/pricing/cost';
import type { WireFormat } from '../providers/types';
import { findUsageObject, largerOfEach, normalizeUsage, usageKeyOf } from './response-usage';

const LF2 = Buffer.from('\n\n');
const CRLF2 = Buffer.from('\r\n\r\n');
const ERROR_EVENT = Buffer.from('event: error');
const ERROR_WORD = Buffer.from('error');
const EMPTY = Buffer.alloc(0);
/**
 * An event by which the upstream reports a failure: Anthropic's and the Responses API's
 * `error` events, an OpenAI-style `{"error":{…}}` chunk (also inside `response.failed`), an
 * `"object":"error"` one. `"error":null` (every Responses event) is not one.
 */
const ERROR_EVENT_TEXT = /^event:[ \t]*error\b|"error"\s*:\s*\{|"(?:type|object)"\s*:\s*"error"/m;
/** An unterminated event longer than this is forwarded as it is: a stream without event boundaries is not held whole. */
const MAX_HELD = 65_536;

/** Index just past the last event boundary (a blank line), or -1. */
function lastBoundary(buf: Buffer): number {
  const a = buf.lastIndexOf(LF2);
  const b = buf.lastIndexOf(CRLF2);
  return Math.max(a === -1 ? -1 : a + 2, b === -1 ? -1 : b + 4);
}

function countBoundaries(buf: Buffer): number {
  let n = 0;
  for (let i = buf.indexOf(LF2); i !== -1; i = buf.indexOf(LF2, i + 2)) n++;
  if (n === 0) for (let i = buf.indexOf(CRLF2); i !== -1; i = buf.indexOf(CRLF2, i + 4)) n++;
  return n;
}

/** The JSON of an event's `data:` lines, or undefined. */
function eventData(event: string): any {
  let data = '';
  for (const line of event.split(/\r?\n/)) {
    if (line.startsWith('data:')) data += (data ? '\n' : '') + line.slice(line[5] === ' ' ? 6 : 5);
  }
  if (!data || data === '[DONE]') return undefined;
  try { return JSON.parse(data); } catch { return undefined; }
}

/** A Gemini chunk that names its candidate's finish reason: the last, whose usageMetadata is final. */
const hasFinish = (data: any): boolean => Array.isArray(data?.candidates) && data.candidates.some((c: any) => typeof c?.finishReason === 'string');

/**
 * Watches a server-sent-event stream on its way to the client: reads usage from the events
 * that carry a usage object (only those are parsed), counts delivered events, notices an
 * `error` event and passes the upstream's error events through `scrubError` (the key's
 * secret and host out), and — when the proxy added `stream_options.include_usage` itself —
 * removes the usage-only chunk the client did not ask for. Whole events are forwarded as
 * they complete: an event cut between two chunks waits for its end, which costs the client
 * nothing (it acts on an event only at its blank line) and lets an error event be scrubbed
 * whole. Chunks without an error or a usage object pass as they are.
 */
export class SseTap {
  usage: TokenUsage | null = null;
  /** The last usage object as the upstream sent it: unit-billed routes read fields beyond tokens. */
  rawUsage: unknown = undefined;
  /** A final usage was seen (OpenAI's usage chunk or response, Anthropic's message_delta). */
  complete = false;
  events = 0;
  sawError = false;
  private tail: Buffer | null = null;

  constructor(
    private readonly format: WireFormat,
    private readonly dropUsageOnly: boolean,
    private readonly scrubError?: (text: string) => string,
  ) {}

  /** The bytes to forward for this upstream chunk. */
  push(chunk: Buffer): Buffer {
    const buf = this.tail ? Buffer.concat([this.tail, chunk]) : chunk;
    const end = lastBoundary(buf);
    if (end === -1) {
      if (buf.length <= MAX_HELD || this.dropUsageOnly) {
        this.tail = buf;
        return EMPTY;
      }
      this.tail = null;
      return buf.indexOf(ERROR_WORD) === -1 ? buf : this.scrubErrors(buf);
    }
    this.tail = end < buf.length ? buf.subarray(end) : null;
    const whole = end < buf.length ? buf.subarray(0, end) : buf;
    this.events += countBoundaries(whole);
    // One scan of every chunk for "error"; the closer looks only where it is found.
    const error = whole.indexOf(ERROR_WORD) !== -1;
    if (error && !this.sawError && whole.indexOf(ERROR_EVENT) !== -1) this.sawError = true;
    const kept = findUsageObject(whole, 0, false, usageKeyOf(this.format)) === -1 ? whole : this.scan(whole);
    return error ? this.scrubErrors(kept) : kept;
  }

  /** What is left at the end of the stream (an unterminated last event), to forward. */
  end(): Buffer | null {
    const rest = this.tail;
    this.tail = null;
    if (!rest || rest.length === 0) return null;
    return rest.indexOf(ERROR_WORD) === -1 ? rest : this.scrubErrors(rest);
  }

  /** `events` (which hold the word "error") with each upstream error event scrubbed; the same buffer when there is none. */
  private scrubErrors(events: Buffer): Buffer {
    if (!this.scrubError) return events;
    // Split on the blank lines, keeping them, so every other byte goes out as it came.
    const parts = events.toString('utf8').split(/(\r?\n\r?\n)/);
    let changed = false;
    for (let i = 0; i < parts.length; i += 2) {
      if (!ERROR_EVENT_TEXT.test(parts[i])) continue;
      const clean = this.scrubError(parts[i]);
      if (clean !== parts[i]) {
        parts[i] = clean;
        changed = true;
      }
    }
    return changed ? Buffer.from(parts.join('')) : events;
  }

  /** Parses the events that carry usage; returns `whole` without the dropped usage-only chunk. */
  private scan(whole: Buffer): Buffer {
    const text = whole.toString('utf8');
    const events = text.split(/\r?\n\r?\n/);
    let dropped = false;
    const keep: string[] = [];
    for (const ev of events) {
      if (!ev) continue;
      if (ev.indexOf(this.format === 'gemini' ? '"usageMetadata"' : '"usage"') === -1) {
        keep.push(ev);
        continue;
      }
      const data = eventData(ev);
      const raw = data?.usage ?? data?.response?.usage ?? data?.message?.usage ?? data?.usageMetadata;
      if (raw !== undefined && raw !== null) this.rawUsage = raw;
      const u = normalizeUsage(raw, this.format);
      if (u) this.merge(u, data);
      if (this.dropUsageOnly && u && Array.isArray(data?.choices) && data.choices.length === 0) {
        dropped = true;
        continue;
      }
      keep.push(ev);
    }
    if (!dropped) return whole;
    return keep.length ? Buffer.from(keep.join('\n\n') + '\n\n') : EMPTY;
  }

  private merge(u: TokenUsage, data: any): void {
    if (this.format === 'anthropic') {
      // message_start carries the input side, message_delta the (cumulative) output side.
      const p = this.usage;
      this.usage = p ? largerOfEach(p, u) : u;
      if (data?.type === 'message_delta') this.complete = true;
      return;
    }
    // Each later usage replaces the earlier: Gemini's usageMetadata are running totals (bill the last, never their sum).
    this.usage = u;
    // Responses streams repeat a null usage until response.completed carries it.
    this.complete = this.format !== 'gemini' || hasFinish(data);
  }
}
