import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { EventStreamDeframer } from './event-stream';
import { SseReader } from '../../formats/sse';
import { translation } from '../../formats/index';

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const message = (headers: Record<string, string>, payload: unknown) => Buffer.from(codec.encode({
  headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, { type: 'string' as const, value: v }])),
  body: fromUtf8(JSON.stringify(payload)),
}));
const chunk = (event: unknown) => message({ ':message-type': 'event', ':event-type': 'chunk', ':content-type': 'application/json' }, { bytes: Buffer.from(JSON.stringify(event)).toString('base64') });
const exception = (name: string, msg: string) => message({ ':message-type': 'exception', ':exception-type': name, ':content-type': 'application/json' }, { message: msg });

/** A whole Anthropic stream, as Bedrock frames it. */
const STREAM = Buffer.concat([
  chunk({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', content: [], stop_reason: null, usage: { input_tokens: 12, output_tokens: 1 } } }),
  chunk({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  chunk({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello\nthere' } }),
  chunk({ type: 'content_block_stop', index: 0 }),
  chunk({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } }),
  chunk({ type: 'message_stop' }),
]);

function run(parts: Buffer[]): string {
  const d = new EventStreamDeframer();
  return parts.map((p) => d.push(p).toString()).join('') + d.end().toString();
}
const events = (sse: string) => {
  const r = new SseReader();
  return [...r.push(Buffer.from(sse)), ...r.end()];
};

describe('EventStreamDeframer', () => {
  it('turns chunk events into Anthropic SSE events, however the bytes are split', () => {
    const whole = run([STREAM]);
    expect(events(whole).map((e) => e.event)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(JSON.parse(events(whole)[2].data).delta.text).toBe('Hello\nthere');
    fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: STREAM.length }), { maxLength: 8 }), (cuts) => {
      const at = [...new Set(cuts)].sort((a, b) => a - b);
      const parts = [0, ...at].map((s, i) => STREAM.subarray(s, at[i] ?? STREAM.length));
      expect(run(parts)).toBe(whole);
    }));
  });

  it('ends with one Anthropic error event on an exception', () => {
    const out = events(run([chunk({ type: 'message_start', message: {} }), exception('throttlingException', 'Too many requests'), chunk({ type: 'message_stop' })]));
    expect(out.map((e) => e.event)).toEqual(['message_start', 'error']);
    expect(JSON.parse(out[1].data)).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', message: expect.stringContaining('throttlingException') } });
  });

  it('answers a bad CRC, an impossible length and a truncated frame with an error event, at once', () => {
    const bad = Buffer.from(STREAM);
    bad[30] ^= 0xff;
    expect(events(run([bad])).at(-1)!.event).toBe('error');
    const huge = Buffer.alloc(12);
    huge.writeUInt32BE(0x7fffffff, 0);
    const d = new EventStreamDeframer();
    expect(d.push(huge).toString()).toMatch(/^event: error\n/);
    expect(events(run([STREAM.subarray(0, STREAM.length - 3)])).at(-1)!.event).toBe('error');
  });

  it('never throws on damaged streams; whatever comes out is whole events, an error last if any, and translates cleanly', () => {
    const toChat = translation('chat', 'messages')!;
    fc.assert(fc.property(
      fc.oneof(
        fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
        fc.tuple(fc.integer({ min: 0, max: STREAM.length - 1 }), fc.integer({ min: 0, max: 255 })).map(([i, v]) => { const b = Buffer.from(STREAM); b[i] = v; return b; }),
        fc.integer({ min: 0, max: STREAM.length }).map((n) => STREAM.subarray(0, n)),
      ),
      fc.integer({ min: 1, max: 64 }),
      (bytes, size) => {
        const parts: Buffer[] = [];
        for (let i = 0; i < bytes.length; i += size) parts.push(bytes.subarray(i, i + size));
        const sse = run(parts);
        const evs = events(sse);
        const errors = evs.filter((e) => e.event === 'error');
        expect(errors.length).toBeLessThanOrEqual(1);
        if (errors.length) expect(evs.at(-1)!.event).toBe('error');
        for (const e of evs) expect(() => JSON.parse(e.data)).not.toThrow();
        const tr = toChat.stream({ includeUsage: true, request: { model: 'm', messages: [] } });
        expect(() => Buffer.concat([tr.push(Buffer.from(sse)), tr.end()])).not.toThrow();
      },
    ), { numRuns: 300 });
  });
});
