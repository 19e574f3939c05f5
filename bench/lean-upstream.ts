/**
 * The benchmark's upstream: an OpenAI-format chat completions endpoint and an Anthropic-format
 * messages endpoint (for the translated path) doing as little as possible (answers prebuilt
 * per model), so that the upstream is never what a proxy benchmark measures. Runs as its own
 * process; prints `listening <url>` once ready. Chat streams carry 3 content chunks, a finish
 * chunk, a usage chunk when asked, and [DONE]; message streams Anthropic's events around the
 * same 3 pieces of text. For the Gemini and Bedrock kinds (bench:formats) it also answers
 * Gemini's `:generateContent` / `:streamGenerateContent?alt=sse` and Bedrock's InvokeModel
 * (`/model/{id}/invoke`, and `/invoke-with-response-stream` in AWS event-stream framing). It
 * checks no signature or key: the strict mock (server/testing/mock-upstream) proves the wire.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';

const TEXT = ['Hello', ' from the', ' bench upstream.'];
const USAGE = { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 };

interface Prebuilt {
  whole: string;
  chunks: string[];
  usageChunk: string;
}

const prebuilt = new Map<string, Prebuilt>();
const prebuiltMessages = new Map<string, { whole: string; events: string }>();

function messagesFor(model: string): { whole: string; events: string } {
  let p = prebuiltMessages.get(model);
  if (!p) {
    const usage = { input_tokens: USAGE.prompt_tokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: USAGE.completion_tokens };
    const message = (content: unknown[], stop: string | null, u: object) => ({ id: 'msg_bench', type: 'message', role: 'assistant', model, content, stop_reason: stop, stop_sequence: null, usage: u });
    const ev = (type: string, fields: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;
    p = {
      whole: JSON.stringify(message([{ type: 'text', text: TEXT.join('') }], 'end_turn', usage)),
      events: [
        ev('message_start', { message: message([], null, { ...usage, output_tokens: 1 }) }),
        ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
        ...TEXT.map((text) => ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text } })),
        ev('content_block_stop', { index: 0 }),
        ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: USAGE.completion_tokens } }),
        ev('message_stop', {}),
      ].join(''),
    };
    if (prebuiltMessages.size < 100) prebuiltMessages.set(model, p);
  }
  return p;
}

/** Gemini's generateContent answer and its SSE stream (usageMetadata a running total, the last one final). */
const prebuiltGemini = new Map<string, { whole: string; events: string }>();

function geminiFor(model: string): { whole: string; events: string } {
  let p = prebuiltGemini.get(model);
  if (!p) {
    const usage = (candidates: number) => ({ promptTokenCount: USAGE.prompt_tokens, candidatesTokenCount: candidates, totalTokenCount: USAGE.prompt_tokens + candidates });
    const answer = (text: string, finish: string | null, candidates: number) => ({
      candidates: [{ content: { role: 'model', parts: [{ text }] }, ...(finish ? { finishReason: finish } : {}), index: 0 }],
      usageMetadata: usage(candidates), modelVersion: model, responseId: 'bench-response',
    });
    p = {
      whole: JSON.stringify(answer(TEXT.join(''), 'STOP', USAGE.completion_tokens)),
      events: TEXT.map((t, i) => `data: ${JSON.stringify(answer(t, i === TEXT.length - 1 ? 'STOP' : null, i === TEXT.length - 1 ? USAGE.completion_tokens : 2 * (i + 1)))}\r\n\r\n`).join(''),
    };
    if (prebuiltGemini.size < 100) prebuiltGemini.set(model, p);
  }
  return p;
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const bedrockStreams = new Map<string, Buffer>();

/** InvokeModel's stream: each Anthropic event's JSON, base64, in one `chunk` event frame. */
function bedrockStreamFor(model: string): Buffer {
  let b = bedrockStreams.get(model);
  if (!b) {
    const datas = messagesFor(model).events.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));
    b = Buffer.concat(datas.map((json) => codec.encode({
      headers: {
        ':event-type': { type: 'string', value: 'chunk' },
        ':message-type': { type: 'string', value: 'event' },
        ':content-type': { type: 'string', value: 'application/json' },
      },
      body: fromUtf8(JSON.stringify({ bytes: Buffer.from(json).toString('base64'), p: 'abcdefghij' })),
    })));
    if (bedrockStreams.size < 100) bedrockStreams.set(model, b);
  }
  return b;
}

function answersFor(model: string): Prebuilt {
  let p = prebuilt.get(model);
  if (!p) {
    const created = Math.floor(Date.now() / 1000);
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created, model, choices, ...extra })}\n\n`;
    p = {
      whole: JSON.stringify({
        id: 'chatcmpl-bench', object: 'chat.completion', created, model,
        choices: [{ index: 0, message: { role: 'assistant', content: TEXT.join('') }, logprobs: null, finish_reason: 'stop' }],
        usage: USAGE,
      }),
      chunks: [
        ...TEXT.map((t, i) => chunk([{ index: 0, delta: i === 0 ? { role: 'assistant', content: t } : { content: t }, finish_reason: null }])),
        chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
      ],
      usageChunk: chunk([], { usage: USAGE }),
    };
    if (prebuilt.size < 100) prebuilt.set(model, p);
  }
  return p;
}

const GEMINI = /\/models\/([^/:?]+):(generateContent|streamGenerateContent)(\?|$)/;
const BEDROCK = /\/model\/([^/]+)\/(invoke|invoke-with-response-stream)$/;

/** Gemini and Bedrock answers; false when the path is neither's. */
function answerOtherKinds(req: IncomingMessage, res: ServerResponse): boolean {
  const url = req.url ?? '';
  const g = GEMINI.exec(url);
  if (g) {
    const p = geminiFor(decodeURIComponent(g[1]));
    if (g[2] === 'streamGenerateContent') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(p.events);
    } else {
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(p.whole) });
      res.end(p.whole);
    }
    return true;
  }
  const b = BEDROCK.exec(url);
  if (!b) return false;
  const model = decodeURIComponent(b[1]);
  if (b[2] === 'invoke') {
    const whole = messagesFor(model).whole;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(whole), 'x-amzn-requestid': 'bench-request' });
    res.end(whole);
  } else {
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'bench-request' });
    res.end(bedrockStreamFor(model));
  }
  return true;
}

function answer(req: IncomingMessage, res: ServerResponse, raw: string): void {
  if (req.method === 'POST' && answerOtherKinds(req, res)) return;
  const messages = req.url?.endsWith('/v1/messages') === true;
  if (req.method !== 'POST' || (!messages && !req.url?.endsWith('/chat/completions'))) {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":{"message":"not found","type":"invalid_request_error","code":"not_found"}}');
    return;
  }
  let body: { model?: unknown; stream?: unknown; stream_options?: { include_usage?: unknown } };
  try {
    body = JSON.parse(raw);
  } catch {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end('{"error":{"message":"malformed JSON","type":"invalid_request_error","code":"invalid_json"}}');
    return;
  }
  const model = typeof body.model === 'string' ? body.model : 'unknown';
  if (messages) {
    if (!req.headers['x-api-key'] || !req.headers['anthropic-version']) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"type":"error","error":{"type":"authentication_error","message":"x-api-key and anthropic-version are required"}}');
      return;
    }
    const m = messagesFor(model);
    if (body.stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end(m.events);
    } else {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(m.whole) });
      res.end(m.whole);
    }
    return;
  }
  const p = answersFor(model);
  if (body.stream !== true) {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(p.whole) });
    res.end(p.whole);
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const c of p.chunks) res.write(c);
  if (body.stream_options?.include_usage === true) res.write(p.usageChunk);
  res.end('data: [DONE]\n\n');
}

const server = createServer((req, res) => {
  let raw = '';
  req.setEncoding('utf8');
  req.on('data', (d: string) => (raw += d));
  req.on('end', () => answer(req, res, raw));
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.on('disconnect', () => process.exit(0));
