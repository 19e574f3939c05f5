import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { EventStreamDeframer } from '../providers/bedrock/event-stream';
import { SseReader } from './sse';
import { translation } from './index';
import type { Endpoint } from '../providers/types';

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const event = (type: string, payload: unknown) => Buffer.from(codec.encode({
  headers: { ':message-type': { type: 'string', value: 'event' }, ':event-type': { type: 'string', value: type }, ':content-type': { type: 'string', value: 'application/json' } },
  body: fromUtf8(JSON.stringify(payload)),
}));

const USAGE = { inputTokens: 10, outputTokens: 7, totalTokens: 47, cacheReadInputTokens: 25, cacheWriteInputTokens: 5 };
/** ConverseStream's events for an answer with reasoning, text and a tool use, in Bedrock's order. */
const EVENTS: Buffer[] = [
  event('messageStart', { role: 'assistant' }),
  event('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'Think' } } }),
  event('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { signature: 'sig-1' } } }),
  event('contentBlockStop', { contentBlockIndex: 0 }),
  event('contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'Let me ' } }),
  event('contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'check.' } }),
  event('contentBlockStop', { contentBlockIndex: 1 }),
  event('contentBlockStart', { contentBlockIndex: 2, start: { toolUse: { toolUseId: 'tooluse_a1', name: 'get_weather' } } }),
  event('contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '{"city":' } } }),
  event('contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '"Paris"}' } } }),
  event('contentBlockStop', { contentBlockIndex: 2 }),
  event('messageStop', { stopReason: 'tool_use' }),
  event('metadata', { usage: USAGE, metrics: { latencyMs: 12 } }),
];
const STREAM = Buffer.concat(EVENTS);

/** The client's bytes for Bedrock's stream bytes, split into `parts`, through the deframer and the translation. */
function translate(client: Endpoint, parts: Buffer[]): string {
  const d = new EventStreamDeframer();
  const t = translation(client, 'converse')!.stream({ includeUsage: true, request: { model: 'nova' } });
  let out = '';
  for (const p of parts) out += t.push(d.push(p)).toString();
  out += t.push(d.end()).toString();
  return out + t.end().toString();
}
const events = (sse: string) => {
  const r = new SseReader();
  return [...r.push(Buffer.from(sse)), ...r.end()];
};
const chatChunks = (sse: string) => events(sse).filter((e) => e.data !== '[DONE]').map((e) => JSON.parse(e.data));

describe('ConverseStream to each client format', () => {
  it('gives an OpenAI client the text, the reasoning, the tool call, its finish reason and the usage with cache reads and writes', () => {
    const chunks = chatChunks(translate('chat', [STREAM]));
    const deltas = chunks.flatMap((c) => c.choices.map((ch: any) => ch.delta));
    expect(deltas.map((d) => d.content ?? '').join('')).toBe('Let me check.');
    expect(deltas.map((d) => d.reasoning_content ?? '').join('')).toBe('Think');
    expect(deltas.find((d) => d.thinking_blocks)?.thinking_blocks).toEqual([{ type: 'thinking', thinking: 'Think', signature: 'sig-1' }]);
    const calls = deltas.flatMap((d) => d.tool_calls ?? []);
    expect(calls[0]).toMatchObject({ index: 0, id: 'tooluse_a1', function: { name: 'get_weather' } });
    expect(calls.map((c) => c.function?.arguments ?? '').join('')).toBe('{"city":"Paris"}');
    expect(chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean)).toEqual(['tool_calls']);
    expect(chunks.at(-1).usage).toMatchObject({ prompt_tokens: 40, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 25, cache_write_tokens: 5 } });
    expect(chunks.every((c) => c.model === 'nova')).toBe(true);
  });

  it('gives an Anthropic client its events, ending in tool_use with the usage', () => {
    const evs = events(translate('messages', [STREAM]));
    expect(evs.at(-1)!.event).toBe('message_stop');
    const delta = JSON.parse(evs.find((e) => e.event === 'message_delta')!.data);
    expect(delta).toMatchObject({ delta: { stop_reason: 'tool_use' }, usage: { input_tokens: 10, cache_read_input_tokens: 25, cache_creation_input_tokens: 5, output_tokens: 7 } });
  });

  it('says a cut answer was cut: max_tokens is length, guardrail_intervened and content_filtered are content_filter', () => {
    for (const [stop, finish] of [['max_tokens', 'length'], ['model_context_window_exceeded', 'length'], ['guardrail_intervened', 'content_filter'], ['content_filtered', 'content_filter'], ['end_turn', 'stop'], ['stop_sequence', 'stop']]) {
      const bytes = Buffer.concat([EVENTS[0], EVENTS[4], EVENTS[6], event('messageStop', { stopReason: stop }), EVENTS[12]]);
      expect(chatChunks(translate('chat', [bytes])).map((c) => c.choices[0]?.finish_reason).filter(Boolean)).toEqual([finish]);
    }
    const cut = Buffer.concat([EVENTS[0], EVENTS[4], event('messageStop', { stopReason: 'max_tokens' }), EVENTS[12]]);
    expect(JSON.parse(events(translate('messages', [cut])).find((e) => e.event === 'message_delta')!.data).delta.stop_reason).toBe('max_tokens');
  });

  it('ends with an error when the stream ends before its messageStop, and after an exception', () => {
    const early = translate('chat', [Buffer.concat(EVENTS.slice(0, 6))]);
    expect(events(early).some((e) => e.event === 'error')).toBe(true);
    const exception = Buffer.from(codec.encode({
      headers: { ':message-type': { type: 'string', value: 'exception' }, ':exception-type': { type: 'string', value: 'throttlingException' }, ':content-type': { type: 'string', value: 'application/json' } },
      body: fromUtf8(JSON.stringify({ message: 'Too many requests' })),
    }));
    const anthropic = events(translate('messages', [Buffer.concat([...EVENTS.slice(0, 5), exception])]));
    const error = anthropic.find((e) => e.event === 'error')!;
    expect(JSON.parse(error.data).error.message).toMatch(/throttlingException/);
    // Nothing of the answer follows the error (the encoder's closing events only).
    expect(anthropic.slice(anthropic.indexOf(error) + 1).every((e) => ['content_block_stop', 'message_delta', 'message_stop'].includes(e.event!))).toBe(true);
  });

  it('ends normally without the metadata event (the usage is then the gateway\'s estimate)', () => {
    const evs = events(translate('messages', [Buffer.concat(EVENTS.slice(0, 12))]));
    expect(evs.at(-1)!.event).toBe('message_stop');
    expect(evs.some((e) => e.event === 'error')).toBe(false);
  });
});

/** What each client format's stream must end with when it is not an error. */
const CLOSES: Record<string, (sse: string) => boolean> = {
  chat: (sse) => sse.trimEnd().endsWith('data: [DONE]'),
  messages: (sse) => events(sse).at(-1)?.event === 'message_stop',
  responses: (sse) => events(sse).some((e) => e.event === 'response.completed' || e.event === 'response.incomplete'),
  gemini: (sse) => (sse.match(/"finishReason"/g)?.length ?? 0) === 1,
};
const isError = (e: { event?: string; data: string }) => e.event === 'error' || e.event === 'response.failed' || /^\{"error":/.test(e.data);

describe('ConverseStream fuzz', () => {
  it('never throws on damaged streams (bytes, CRCs, cuts, events out of order or missing); the client gets a closed answer or one error', () => {
    const damaged = fc.oneof(
      fc.uint8Array({ maxLength: 400 }).map((b) => Buffer.from(b)),
      fc.tuple(fc.integer({ min: 0, max: STREAM.length - 1 }), fc.integer({ min: 0, max: 255 })).map(([i, v]) => { const b = Buffer.from(STREAM); b[i] = v; return b; }),
      fc.integer({ min: 0, max: STREAM.length }).map((n) => STREAM.subarray(0, n)),
      fc.shuffledSubarray(EVENTS).map((evs) => Buffer.concat(evs)),
      fc.array(fc.constantFrom(...EVENTS), { maxLength: 20 }).map((evs) => Buffer.concat(evs)),
    );
    fc.assert(fc.property(damaged, fc.integer({ min: 1, max: 80 }), fc.constantFrom<Endpoint>('chat', 'messages', 'responses', 'gemini'), (bytes, size, client) => {
      const parts: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += size) parts.push(bytes.subarray(i, i + size));
      const sse = translate(client, parts);
      const evs = events(sse);
      const errors = evs.filter(isError);
      expect(errors.length).toBeLessThanOrEqual(1);
      if (errors.length === 0) expect(CLOSES[client](sse)).toBe(true);
      for (const e of evs) if (e.data !== '[DONE]') expect(() => JSON.parse(e.data)).not.toThrow();
    }), { numRuns: 400 });
  });
});
