import fc from 'fast-check';
import { chunked, requestHead, type RawPiece } from '../support/raw-http';
import type { SentRequest } from '../support/findings';

/**
 * What a framing case may end in. `ok`: 200 for each request; `answer`: an answer below 500
 * (which one is the server's choice); `refuse`: a 4xx answer before the connection closes
 * (RFC 9112 asks for 400 on broken framing); `may-wait`: HTTP lets the server wait for bytes
 * that never come (a Content-Length longer than the body, a half-sent chunk), so the case
 * ends after a bounded wait; an answer, if one comes, must still be a 4xx.
 *
 * What uWS's parser does with a request before any code of ours runs is pinned apart, in
 * uws-parser-limits.test.ts (silent waits, closes, resets); the cases here all get an answer.
 */
export type FramingExpect = 'ok' | 'answer' | 'refuse' | 'may-wait';

export interface FramingCase extends SentRequest {
  pieces: RawPiece[];
  expect: FramingExpect;
  /** Responses to wait for (pipelined requests). */
  responses: number;
  methods: string[];
  /** The connection is dropped by the client mid-request (no answer wanted). */
  abandon?: boolean;
  /** Sizes and counts of this case (the note names its kind). */
  detail?: string;
  /**
   * Statuses uWS answers this case with by itself (its HTML page), where it refuses valid or
   * odd HTTP that our code never sees (docs/decisions.md): such an answer counts as the answer,
   * 505 included. uWS's 4xx pages need no listing; any other uWS status is a finding.
   */
  uws?: number[];
  tag: string;
}

export interface FramingContext {
  key: string;
  /** The gateway's MAX_BODY_BYTES. */
  maxBody: number;
}

/** A valid chat body, with the case's tag. */
function chatBody(tag: string, extra = ''): string {
  return JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `framing ${extra}` }], fuzz_case: tag });
}

const TARGET = '/v1/chat/completions';

function baseHeaders(ctx: FramingContext, extra: [string, string][] = []): [string, string][] {
  return [['Host', '127.0.0.1'], ['Authorization', `Bearer ${ctx.key}`], ['Content-Type', 'application/json'], ...extra];
}

/** Splits a byte string into n pieces with short pauses between them (TCP may join or split them anyway). */
function dribble(data: string | Buffer, n: number, pauseMs: number): RawPiece[] {
  const b = typeof data === 'string' ? Buffer.from(data) : data;
  const out: RawPiece[] = [];
  const step = Math.max(1, Math.ceil(b.length / n));
  for (let i = 0; i < b.length; i += step) {
    if (i > 0 && pauseMs) out.push({ pauseMs });
    out.push(b.subarray(i, i + step));
  }
  return out;
}

type Draft = Omit<FramingCase, 'index' | 'tag' | 'method' | 'path' | 'headers' | 'body'> & { name: string };

/** The framing fuzzer: each case is built from the tag once numbered. */
export function framingCases(ctx: FramingContext): fc.Arbitrary<(tag: string) => Omit<FramingCase, 'index'>> {
  const k = (f: (tag: string) => Draft) => (tag: string): Omit<FramingCase, 'index'> => {
    const d = f(tag);
    const bytes = Buffer.concat(d.pieces.filter((p): p is string | Buffer => typeof p === 'string' || Buffer.isBuffer(p)).map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
    const { name, detail, ...rest } = d;
    return { ...rest, tag, method: 'RAW', path: TARGET, headers: [], body: bytes, note: name, detail };
  };
  const valid = fc.tuple(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 0, max: 15 })).map(([n, pause]) => k((tag) => {
    const body = chatBody(tag);
    const head = requestHead('POST', TARGET, baseHeaders(ctx, [['Content-Length', String(Buffer.byteLength(body))]]));
    return { name: 'exact Content-Length, in several writes', detail: `${n} writes, ${pause} ms apart`, pieces: dribble(head + body, n, pause), expect: 'ok', responses: 1, methods: ['POST'] };
  }));
  const shorter = fc.integer({ min: 1, max: 40 }).map((cut) => k((tag) => {
    const body = chatBody(tag);
    const len = Math.max(1, Buffer.byteLength(body) - cut);
    // The body as framed is cut JSON (our 400); uWS reads the rest as the next request and may answer that with its 505.
    return { name: 'Content-Length shorter than the body', detail: `${cut} bytes shorter`, pieces: [requestHead('POST', TARGET, baseHeaders(ctx, [['Content-Length', String(len)]])), body], expect: 'refuse', uws: [505], responses: 1, methods: ['POST', 'POST'] };
  }));
  const longer = fc.integer({ min: 1, max: 5000 }).map((extra) => k((tag) => {
    const body = chatBody(tag);
    return { name: 'Content-Length longer than the body', detail: `${extra} bytes longer`, pieces: [requestHead('POST', TARGET, baseHeaders(ctx, [['Content-Length', String(Buffer.byteLength(body) + extra)]])), body], expect: 'may-wait', responses: 1, methods: ['POST'] };
  }));
  // uWS refuses chunk extensions (its 400) and trailers (its 505), both valid HTTP.
  const chunkedUws: Record<string, { expect: FramingExpect; uws?: number[] }> = { plain: { expect: 'ok' }, 'upper-hex': { expect: 'ok' }, extension: { expect: 'answer', uws: [400] }, trailer: { expect: 'answer', uws: [505] } };
  const chunkedOk = fc.tuple(fc.integer({ min: 1, max: 5 }), fc.constantFrom('plain', 'extension', 'trailer', 'upper-hex')).map(([n, variant]) => k((tag) => {
    const body = chatBody(tag);
    const parts: string[] = [];
    const step = Math.ceil(body.length / n);
    for (let i = 0; i < body.length; i += step) parts.push(body.slice(i, i + step));
    const encoded = chunked(parts, { extension: variant === 'extension' ? ';name=value' : undefined, trailers: variant === 'trailer' ? ['X-Checksum: 1'] : undefined, upperHex: variant === 'upper-hex' });
    return { name: `chunked, ${variant}`, detail: `${n} chunks`, pieces: [requestHead('POST', TARGET, baseHeaders(ctx, [['Transfer-Encoding', 'chunked']])), encoded], ...chunkedUws[variant], responses: 1, methods: ['POST'] };
  }));
  const chunkedBad = fc.constantFrom(...([
    ['chunk size not hex', (b: string) => `zz\r\n${b}\r\n0\r\n\r\n`, 'refuse'],
    ['negative chunk size', (b: string) => `-5\r\n${b}\r\n0\r\n\r\n`, 'refuse'],
    ['chunk size overflowing 64 bits', (b: string) => `ffffffffffffffffff\r\n${b}\r\n0\r\n\r\n`, 'refuse'],
    ['chunk data longer than its size', (b: string) => `5\r\n${b}\r\n0\r\n\r\n`, 'refuse'],
    ['chunk without CRLF after data', (b: string) => `${b.length.toString(16)}\r\n${b}0\r\n\r\n`, 'answer'],
    ['chunk size larger than the data sent', (b: string) => `${(b.length + 100).toString(16)}\r\n${b}`, 'may-wait'],
    ['no last chunk', (b: string) => `${b.length.toString(16)}\r\n${b}\r\n`, 'may-wait'],
  ] as const)).map(([name, encode, expect]) => k((tag) => ({
    name: `chunked: ${name}`, pieces: [requestHead('POST', TARGET, baseHeaders(ctx, [['Transfer-Encoding', 'chunked']])), encode(chatBody(tag))], expect: expect as FramingExpect, responses: 1, methods: ['POST'],
  })));
  const transferEncodings = fc.constantFrom(...([
    ['Transfer-Encoding: identity', [['Transfer-Encoding', 'identity']], 'plain', 'refuse'],
    ['Transfer-Encoding: identity with Content-Length', [['Transfer-Encoding', 'identity'], ['Content-Length', 'LEN']], 'plain', 'refuse'],
    ['Transfer-Encoding: gzip (not chunked last)', [['Transfer-Encoding', 'gzip']], 'plain', 'refuse'],
    ['Transfer-Encoding: chunked, identity', [['Transfer-Encoding', 'chunked, identity']], 'chunked', 'refuse'],
    ['Transfer-Encoding: gzip, chunked', [['Transfer-Encoding', 'gzip, chunked']], 'chunked', 'answer'],
    ['Transfer-Encoding: CHUNKED', [['Transfer-Encoding', 'CHUNKED']], 'chunked', 'ok'],
    ['Transfer-Encoding twice (chunked, chunked)', [['Transfer-Encoding', 'chunked'], ['Transfer-Encoding', 'chunked']], 'chunked', 'answer'],
    ['Content-Length and chunked', [['Content-Length', '5'], ['Transfer-Encoding', 'chunked']], 'chunked', 'answer'],
    ['two different Content-Lengths', [['Content-Length', 'LEN'], ['Content-Length', '5']], 'plain', 'refuse'],
    ['two different Content-Lengths, the shorter first', [['Content-Length', '5'], ['Content-Length', 'LEN']], 'plain', 'refuse'],
    ['two equal Content-Lengths', [['Content-Length', 'LEN'], ['Content-Length', 'LEN']], 'plain', 'answer'],
    ['Content-Length: -1', [['Content-Length', '-1']], 'plain', 'refuse'],
    ['Content-Length: abc', [['Content-Length', 'abc']], 'plain', 'refuse'],
    ['Content-Length: +LEN', [['Content-Length', '+LEN']], 'plain', 'refuse'],
    ['Content-Length: LEN, LEN', [['Content-Length', 'LEN, LEN']], 'plain', 'answer'],
    ['Content-Length of 25 digits', [['Content-Length', '9999999999999999999999999']], 'plain', 'refuse'],
  ] as const)).map(([name, headers, encoding, expect]) => k((tag) => {
    const body = chatBody(tag);
    const len = String(Buffer.byteLength(body));
    const h = (headers as readonly (readonly [string, string])[]).map(([a, b]) => [a, b.replace(/LEN/g, len)] as [string, string]);
    // Our 400 goes first; uWS may then answer the bytes it took for the next request with its 505.
    return { name: name, pieces: [requestHead('POST', TARGET, baseHeaders(ctx, h)), encoding === 'chunked' ? chunked([body]) : body], expect: expect as FramingExpect, uws: [505], responses: 1, methods: ['POST'] };
  }));
  const oversize = fc.constantFrom('declared, nothing sent', 'declared, nothing sent, no key', 'declared, nothing sent, bad key', 'declared and sent', 'chunked past the limit').map((variant) => k((tag) => {
    const declared = ctx.maxBody + 1 + (tag.length % 1000);
    const auth: [string, string][] = variant.endsWith('no key') ? [] : variant.endsWith('bad key') ? [['Authorization', `Bearer sk-Xvs${'3'.repeat(45)}`]] : [['Authorization', `Bearer ${ctx.key}`]];
    const h: [string, string][] = [['Host', '127.0.0.1'], ...auth, ['Content-Type', 'application/json']];
    const filler = `{"model":"gpt-4o-mini","fuzz_case":${JSON.stringify(tag)},"pad":"${'p'.repeat(declared)}"}`;
    if (variant === 'chunked past the limit') {
      const pieces = [];
      for (let i = 0; i < filler.length; i += 64 * 1024) pieces.push(filler.slice(i, i + 64 * 1024));
      return { name: `body over MAX_BODY_BYTES: ${variant}`, pieces: [requestHead('POST', TARGET, [...h, ['Transfer-Encoding', 'chunked']]), chunked(pieces)], expect: 'refuse', responses: 1, methods: ['POST'] };
    }
    const head = requestHead('POST', TARGET, [...h, ['Content-Length', String(variant === 'declared and sent' ? Buffer.byteLength(filler) : declared)]]);
    return { name: `body over MAX_BODY_BYTES: ${variant}`, pieces: variant === 'declared and sent' ? [head, filler] : [head], expect: 'refuse', responses: 1, methods: ['POST'] };
  }));
  // Heads past uWS's limits (a reset may overtake the 431 of a much larger one; 99 header
  // lines are never answered) are pinned in uws-parser-limits.test.ts.
  const heads = fc.constantFrom(
    ['a 20 KB header', () => [['X-Big', 'a'.repeat(20_000)]] as [string, string][]],
    ['90 headers', () => Array.from({ length: 90 }, (_, i) => [`X-H${i}`, 'v'] as [string, string])],
    ['a 9 KB header', () => [['X-Big', 'a'.repeat(9_000)]] as [string, string][]],
  ).map(([name, make]) => k((tag) => {
    const body = chatBody(tag);
    // Past UWS_HTTP_MAX_HEADERS_SIZE (16 KiB) a head arriving in pieces gets uWS's 431; the Node 20 binary serves one that arrives whole.
    const expect: FramingExpect = name === 'a 20 KB header' ? 'answer' : 'ok';
    return { name: `request head with ${name}`, pieces: [requestHead('POST', TARGET, baseHeaders(ctx, [...make(), ['Content-Length', String(Buffer.byteLength(body))]])), body], expect, responses: 1, methods: ['POST'] };
  }));
  // Pipelining, NUL, obs-fold and a space before a colon are pinned in uws-parser-limits.test.ts.
  const protocol = fc.constantFrom(
    'HTTP/1.0', 'HTTP/1.1 without Host', 'pipelined: GET /healthz then a call', 'Expect: 100-continue', 'bare LF line ends', 'absolute-form target', 'lower-case method',
  ).map((name) => k((tag) => {
    const body = chatBody(tag);
    const len = String(Buffer.byteLength(body));
    const std = baseHeaders(ctx, [['Content-Length', len]]);
    switch (name) {
      // uWS's HTML 505 (it serves HTTP/1.1 only).
      case 'HTTP/1.0':
        return { name: name, pieces: [requestHead('POST', TARGET, std, 'HTTP/1.0'), body], expect: 'answer', uws: [505], responses: 1, methods: ['POST'] };
      case 'HTTP/1.1 without Host':
        return { name: name, pieces: [requestHead('POST', TARGET, std.filter(([h]) => h !== 'Host')), body], expect: 'refuse', responses: 1, methods: ['POST'] };
      // /healthz answers at once, so the call behind it is parsed with nothing under way.
      case 'pipelined: GET /healthz then a call':
        return { name: name, pieces: [requestHead('GET', '/healthz', [['Host', '127.0.0.1']]) + requestHead('POST', TARGET, std) + body], expect: 'ok', responses: 2, methods: ['GET', 'POST'] };
      case 'Expect: 100-continue':
        return { name: name, pieces: [requestHead('POST', TARGET, [...std, ['Expect', '100-continue']]), { pauseMs: 200 }, body], expect: 'ok', responses: 1, methods: ['POST'] };
      case 'bare LF line ends':
        return { name: name, pieces: [requestHead('POST', TARGET, std).replace(/\r\n/g, '\n'), body], expect: 'answer', uws: [505], responses: 1, methods: ['POST'] };
      case 'absolute-form target':
        return { name: name, pieces: [requestHead('POST', `http://127.0.0.1${TARGET}`, std), body], expect: 'answer', uws: [505], responses: 1, methods: ['POST'] };
      default:
        return { name: name, pieces: [requestHead('post', TARGET, std), body], expect: 'answer', responses: 1, methods: ['POST'] };
    }
  }));
  const abandoned = fc.tuple(fc.constantFrom('half the body', 'the head only', 'half the head', 'half a chunk'), fc.integer({ min: 0, max: 50 })).map(([what, pause]) => k((tag) => {
    const body = chatBody(tag);
    const head = requestHead('POST', TARGET, baseHeaders(ctx, [what === 'half a chunk' ? ['Transfer-Encoding', 'chunked'] : ['Content-Length', String(Buffer.byteLength(body))]]));
    const pieces: RawPiece[] = what === 'half the body' ? [head, body.slice(0, body.length >> 1)]
      : what === 'the head only' ? [head]
        : what === 'half the head' ? [head.slice(0, head.length >> 1)]
          : [head, `${body.length.toString(16)}\r\n${body.slice(0, body.length >> 1)}`];
    return { name: `client sends ${what}, then disconnects`, pieces: [...pieces, { pauseMs: pause }], expect: 'may-wait', responses: 1, methods: ['POST'], abandon: true };
  }));
  return fc.oneof(
    { weight: 4, arbitrary: valid }, { weight: 3, arbitrary: shorter }, { weight: 2, arbitrary: longer }, { weight: 4, arbitrary: chunkedOk }, { weight: 3, arbitrary: chunkedBad },
    { weight: 5, arbitrary: transferEncodings }, { weight: 2, arbitrary: oversize }, { weight: 2, arbitrary: heads }, { weight: 4, arbitrary: protocol }, { weight: 3, arbitrary: abandoned },
  );
}
