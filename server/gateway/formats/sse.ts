import type { SseEvent } from './types';

/**
 * Server-sent events cut out of a byte stream as it arrives: whole events come out, a partial
 * one waits for its next bytes. Only the `event:` and `data:` fields matter to the translators.
 */
export class SseReader {
  private tail = '';
  private readonly decoder = new TextDecoder();

  push(bytes: Uint8Array): SseEvent[] {
    const text = this.tail + this.decoder.decode(bytes, { stream: true });
    const out: SseEvent[] = [];
    let start = 0;
    for (;;) {
      const lf = text.indexOf('\n\n', start);
      const crlf = text.indexOf('\r\n\r\n', start);
      const end = lf === -1 ? crlf : crlf === -1 ? lf : Math.min(lf, crlf);
      if (end === -1) break;
      const ev = parseEvent(text.slice(start, end));
      if (ev) out.push(ev);
      start = end + (end === crlf ? 4 : 2);
    }
    this.tail = text.slice(start);
    return out;
  }

  /** The last event when the stream ended without its blank line. */
  end(): SseEvent[] {
    const rest = this.tail + this.decoder.decode();
    this.tail = '';
    const ev = rest.trim() ? parseEvent(rest) : null;
    return ev ? [ev] : [];
  }
}

function parseEvent(block: string): SseEvent | null {
  let event: string | undefined;
  let data: string | undefined;
  for (const line of block.split(/\r?\n/)) {
    if (line.startsWith('data:')) {
      const v = line.slice(line[5] === ' ' ? 6 : 5);
      data = data === undefined ? v : `${data}\n${v}`;
    } else if (line.startsWith('event:')) event = line.slice(line[6] === ' ' ? 7 : 6).trim();
  }
  return data === undefined ? null : { event, data };
}

export function writeEvents(events: readonly SseEvent[]): string {
  let out = '';
  for (const e of events) out += `${e.event ? `event: ${e.event}\n` : ''}data: ${e.data}\n\n`;
  return out;
}

/** An event whose data is JSON, named or not. */
export const jsonEvent = (data: unknown, event?: string): SseEvent => (event ? { event, data: JSON.stringify(data) } : { data: JSON.stringify(data) });
