import type { TokenUsage } from '../../domain/pricing/cost';
import type { WireFormat } from '../providers/types';
import { findUsageObject, normalizeUsage } from './response-usage';

const LF2 = Buffer.from('\n\n');
const CRLF2 = Buffer.from('\r\n\r\n');
const ERROR_EVENT = Buffer.from('event: error');
const EMPTY = Buffer.alloc(0);

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

/**
 * Watches a server-sent-event stream on its way to the client: reads usage from the events
 * that carry a usage object (only those are parsed), counts delivered events, notices an
 * `error` event, and — when the proxy added `stream_options.include_usage` itself — removes
 * the usage-only chunk the client did not ask for. Without removal, chunks pass unchanged
 * the moment they arrive; with it, only whole events are forwarded.
 */
export class SseTap {
  usage: TokenUsage | null = null;
  /** A final usage was seen (OpenAI's usage chunk or response, Anthropic's message_delta). */
  complete = false;
  events = 0;
  sawError = false;
  private tail: Buffer | null = null;

  constructor(private readonly format: WireFormat, private readonly dropUsageOnly: boolean) {}

  /** The bytes to forward for this upstream chunk. */
  push(chunk: Buffer): Buffer {
    const buf = this.tail ? Buffer.concat([this.tail, chunk]) : chunk;
    const end = lastBoundary(buf);
    if (end === -1) {
      this.tail = buf;
      return this.dropUsageOnly ? EMPTY : chunk;
    }
    this.tail = end < buf.length ? buf.subarray(end) : null;
    const whole = end < buf.length ? buf.subarray(0, end) : buf;
    this.events += countBoundaries(whole);
    if (!this.sawError && whole.indexOf(ERROR_EVENT) !== -1) this.sawError = true;
    const kept = findUsageObject(whole) === -1 ? whole : this.scan(whole);
    return this.dropUsageOnly ? kept : chunk;
  }

  /** What is left at the end of the stream (an unterminated last event), to forward. */
  end(): Buffer | null {
    const rest = this.tail;
    this.tail = null;
    return this.dropUsageOnly && rest && rest.length ? rest : null;
  }

  /** Parses the events that carry usage; returns `whole` without the dropped usage-only chunk. */
  private scan(whole: Buffer): Buffer {
    const text = whole.toString('utf8');
    const events = text.split(/\r?\n\r?\n/);
    let dropped = false;
    const keep: string[] = [];
    for (const ev of events) {
      if (!ev) continue;
      if (ev.indexOf('"usage"') === -1) {
        keep.push(ev);
        continue;
      }
      const data = eventData(ev);
      const raw = data?.usage ?? data?.response?.usage ?? data?.message?.usage;
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
      this.usage = p
        ? { prompt: Math.max(p.prompt, u.prompt), completion: Math.max(p.completion, u.completion), reasoning: 0, cached: Math.max(p.cached, u.cached), cacheWrite: Math.max(p.cacheWrite, u.cacheWrite) }
        : u;
      if (data?.type === 'message_delta') this.complete = true;
      return;
    }
    this.usage = u;
    // Responses streams repeat a null usage until response.completed carries it.
    this.complete = true;
  }
}
