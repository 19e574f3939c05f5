import { describe, expect, it } from 'vitest';
import { ResponseParseError, ResponseParser, type ResponseHeaders } from './response-parser';

/** The events a parser gave so far (body and ends read live). */
interface Result {
  heads: { status: number; headers: ResponseHeaders }[];
  readonly body: string;
  readonly ends: number;
  parser: ResponseParser;
}

/** Feeds the pieces to a fresh parser and records its events. */
function parse(pieces: (string | Buffer)[], opts: { end?: boolean } = {}): Result {
  const heads: Result['heads'] = [];
  const body: Buffer[] = [];
  let ends = 0;
  const parser = new ResponseParser({
    onHead: (status, headers) => heads.push({ status, headers }),
    onData: (chunk) => body.push(Buffer.from(chunk)),
    onEnd: () => ends++,
  });
  for (const p of pieces) parser.execute(typeof p === 'string' ? Buffer.from(p, 'latin1') : p);
  if (opts.end) parser.end();
  return {
    heads,
    get body() { return Buffer.concat(body).toString('latin1'); },
    get ends() { return ends; },
    parser,
  };
}

/** What a parse gave, without the parser itself, for comparing two parses. */
const outcome = (r: Result) => ({ heads: r.heads, body: r.body, ends: r.ends, keepAlive: r.parser.keepAlive, done: r.parser.done });

/** Every way to cut `raw` in two, and byte by byte: each must give what the whole buffer gives. */
function parseAtEverySplit(raw: string, opts: { end?: boolean } = {}): Result {
  const whole = parse([raw], opts);
  for (let i = 0; i <= raw.length; i++) {
    expect(outcome(parse([raw.slice(0, i), raw.slice(i)], opts)), `split at ${i}`).toEqual(outcome(whole));
  }
  expect(outcome(parse([...raw], opts)), 'byte by byte').toEqual(outcome(whole));
  return whole;
}

const parseError = (pieces: string[], opts: { end?: boolean } = {}) => () => parse(pieces, opts);

describe('ResponseParser: Content-Length bodies', () => {
  const raw = 'HTTP/1.1 200 OK\r\nContent-Length: 11\r\nContent-Type: text/plain\r\n\r\nhello world';

  it('delivers the head, the body and one end from a single buffer', () => {
    const r = parse([raw]);
    expect(r.heads).toEqual([{ status: 200, headers: { 'content-length': '11', 'content-type': 'text/plain' } }]);
    expect(r.body).toBe('hello world');
    expect(r.ends).toBe(1);
    expect(r.parser.done).toBe(true);
    expect(r.parser.keepAlive).toBe(true);
  });

  it('gives the same result at every split point and byte by byte', () => {
    const r = parseAtEverySplit(raw);
    expect(r.body).toBe('hello world');
    expect(r.ends).toBe(1);
  });

  it('ends at once with Content-Length: 0', () => {
    const r = parse(['HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n']);
    expect(r.body).toBe('');
    expect(r.ends).toBe(1);
    expect(r.parser.done).toBe(true);
  });

  it('accepts repeated identical Content-Length values', () => {
    expect(parse(['HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nhello']).body).toBe('hello');
    expect(parse(['HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello']).body).toBe('hello');
  });

  it.each([204, 304])('gives a %i no body even with a Content-Length', (status) => {
    const r = parse([`HTTP/1.1 ${status} X\r\nContent-Length: 5\r\n\r\n`]);
    expect(r.heads[0].status).toBe(status);
    expect(r.body).toBe('');
    expect(r.ends).toBe(1);
    expect(r.parser.keepAlive).toBe(true);
  });
});

describe('ResponseParser: chunked bodies', () => {
  const raw =
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n' +
    '5;foo=bar\r\nhello\r\n' +
    '1\r\n \r\n' +
    'A\r\n0123456789\r\n' +
    'b\r\nabcdefghijk\r\n' +
    '0\r\nx-checksum: 1234\r\nx-other: y\r\n\r\n';

  it('de-chunks several chunks with extensions, upper- and lower-case hex, and drops trailers', () => {
    const r = parse([raw]);
    expect(r.heads[0].headers['transfer-encoding']).toBe('chunked');
    expect(r.body).toBe('hello 0123456789abcdefghijk');
    expect(r.ends).toBe(1);
    expect(r.parser.done).toBe(true);
    expect(r.parser.keepAlive).toBe(true);
  });

  it('gives the same result at every split point and byte by byte', () => {
    expect(parseAtEverySplit(raw).body).toBe('hello 0123456789abcdefghijk');
  });

  it('ends on the last chunk without trailers, at every split point', () => {
    const r = parseAtEverySplit('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n');
    expect(r.body).toBe('abc');
    expect(r.ends).toBe(1);
  });

  it('refuses an invalid chunk size', () => {
    expect(parseError(['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'])).toThrow(ResponseParseError);
  });

  it('refuses a chunk longer than its size', () => {
    const raw = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n';
    expect(parseError([raw])).toThrow(/longer than its size/);
    for (let i = 0; i <= raw.length; i++) expect(parseError([raw.slice(0, i), raw.slice(i)]), `split at ${i}`).toThrow(ResponseParseError);
  });
});

describe('ResponseParser: headers', () => {
  it('lower-cases names and trims values', () => {
    const r = parse(['HTTP/1.1 200 OK\r\nX-Request-ID:   abc  \r\nCONTENT-LENGTH:0\r\n\r\n']);
    expect(r.heads[0].headers).toEqual({ 'x-request-id': 'abc', 'content-length': '0' });
  });

  it('turns a repeated header into an array, in order', () => {
    const r = parse(['HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nSet-Cookie: c=3\r\nContent-Length: 0\r\n\r\n']);
    expect(r.heads[0].headers['set-cookie']).toEqual(['a=1', 'b=2', 'c=3']);
  });

  it('joins an obs-fold continuation line to the previous value with a space', () => {
    const r = parse(['HTTP/1.1 200 OK\r\nX-Long: first\r\n  second\r\n\tthird\r\nContent-Length: 0\r\n\r\n']);
    expect(r.heads[0].headers['x-long']).toBe('first second third');
  });

  it('keeps a status line without a reason phrase', () => {
    expect(parse(['HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n']).heads[0].status).toBe(200);
  });
});

describe('ResponseParser: interim responses', () => {
  it('skips 100 Continue and 103 Early Hints before the real response, at every split point', () => {
    const r = parseAtEverySplit(
      'HTTP/1.1 100 Continue\r\n\r\n' +
        'HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n' +
        'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
    );
    expect(r.heads).toEqual([{ status: 200, headers: { 'content-length': '2' } }]);
    expect(r.body).toBe('ok');
    expect(r.ends).toBe(1);
  });

  it('refuses 101 Switching Protocols', () => {
    expect(parseError(['HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n'])).toThrow(ResponseParseError);
  });
});

describe('ResponseParser: close-delimited bodies', () => {
  const raw = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end';

  it('reads the body until the connection ends, then completes on end()', () => {
    const r = parse([raw]);
    expect(r.body).toBe('until the end');
    expect(r.ends).toBe(0);
    expect(r.parser.done).toBe(false);
    r.parser.end();
    expect(r.ends).toBe(1);
    expect(r.parser.done).toBe(true);
    expect(r.parser.keepAlive).toBe(false);
  });

  it('gives the same result at every split point', () => {
    expect(parseAtEverySplit(raw, { end: true }).body).toBe('until the end');
  });
});

describe('ResponseParser: keep-alive', () => {
  const keepAlive = (head: string) => parse([`${head}\r\nContent-Length: 0\r\n\r\n`]).parser.keepAlive;

  it('is kept for plain HTTP/1.1', () => expect(keepAlive('HTTP/1.1 200 OK')).toBe(true));
  it('is dropped on connection: close', () => expect(keepAlive('HTTP/1.1 200 OK\r\nConnection: close')).toBe(false));
  it('is dropped for HTTP/1.0 without keep-alive', () => expect(keepAlive('HTTP/1.0 200 OK')).toBe(false));
  it('is kept for HTTP/1.0 with connection: keep-alive', () => expect(keepAlive('HTTP/1.0 200 OK\r\nConnection: Keep-Alive')).toBe(true));
  it('reads connection options as tokens', () => {
    expect(keepAlive('HTTP/1.1 200 OK\r\nConnection: x-close-me')).toBe(true);
    expect(keepAlive('HTTP/1.1 200 OK\r\nConnection: upgrade, Close')).toBe(false);
  });

  it('reads the keep-alive timeout hint in ms', () => {
    const r = parse(['HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5, max=100\r\nContent-Length: 0\r\n\r\n']);
    expect(r.parser.keepAliveHintMs).toBe(5000);
    expect(parse(['HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n']).parser.keepAliveHintMs).toBe(0);
  });

  it('drops keep-alive on bytes after a complete response, without a second head', () => {
    const next = 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n';
    const together = parse([`HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok${next}`]);
    const later = parse(['HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok', next]);
    for (const r of [together, later]) {
      expect(r.heads).toHaveLength(1);
      expect(r.body).toBe('ok');
      expect(r.ends).toBe(1);
      expect(r.parser.keepAlive).toBe(false);
    }
  });
});

describe('ResponseParser: malformed responses', () => {
  it.each([
    ['an invalid status line', 'HTTP/2 200 OK\r\n\r\n'],
    ['a status line with a short code', 'HTTP/1.1 20 OK\r\n\r\n'],
    ['a header line without a colon', 'HTTP/1.1 200 OK\r\nno-colon-here\r\n\r\n'],
    ['a header line with an empty name', 'HTTP/1.1 200 OK\r\n: value\r\n\r\n'],
    ['whitespace before the colon', 'HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n'],
    ['a folded line with no header before it', 'HTTP/1.1 200 OK\r\n folded\r\n\r\n'],
    ['conflicting Content-Length values', 'HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello'],
    ['conflicting Content-Length headers', 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello'],
    ['a non-numeric Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n'],
    ['a later Content-Length value that is not digits', 'HTTP/1.1 200 OK\r\nContent-Length: 5, 0x5\r\n\r\nhello'],
    ['a bare LF inside a header value', 'HTTP/1.1 200 OK\r\nX: a\nSet-Cookie: s=1\r\nContent-Length: 0\r\n\r\n'],
    ['a bare CR inside a header value', 'HTTP/1.1 200 OK\r\nX: a\rb\r\nContent-Length: 0\r\n\r\n'],
    ['a header name with a space', 'HTTP/1.1 200 OK\r\nBad Name: x\r\nContent-Length: 0\r\n\r\n'],
    ['a negative Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n'],
  ])('refuses %s', (_, raw) => {
    expect(parseError([raw])).toThrow(ResponseParseError);
  });

  it('refuses a head larger than 64 KiB', () => {
    const big = `HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(64 * 1024)}`;
    expect(parseError([big])).toThrow(/larger than 64 KiB/);
    expect(parseError([big.slice(0, 1000), big.slice(1000)])).toThrow(/larger than 64 KiB/);
    // Complete in one read or two: the size decides, not where TCP happened to cut.
    const whole = `${big}\r\nContent-Length: 0\r\n\r\n`;
    expect(parseError([whole])).toThrow(/larger than 64 KiB/);
    expect(parseError([whole.slice(0, 100), whole.slice(100)])).toThrow(/larger than 64 KiB/);
  });

  it('refuses a chunk-size line longer than 1 KiB, complete or not', () => {
    const raw = `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;${'e'.repeat(5000)}\r\nok\r\n0\r\n\r\n`;
    expect(parseError([raw])).toThrow(/longer than 1024 bytes/);
    expect(parseError([raw.slice(0, 60), raw.slice(60)])).toThrow(/longer than 1024 bytes/);
  });

  it('says the response was cut when the connection ends in a Content-Length body', () => {
    const r = parse(['HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello']);
    expect(() => r.parser.end()).toThrow(ResponseParseError);
    expect(() => r.parser.end()).toThrow(/in the middle of its response/);
    expect(r.ends).toBe(0);
  });

  it('says the response was cut when the connection ends in the head', () => {
    const r = parse(['HTTP/1.1 200 O']);
    expect(r.parser.started).toBe(true);
    expect(() => r.parser.end()).toThrow(/in the middle of its response/);
  });

  it('says the upstream did not answer when the connection ends before any byte', () => {
    const r = parse([]);
    expect(r.parser.started).toBe(false);
    expect(() => r.parser.end()).toThrow(ResponseParseError);
    expect(() => r.parser.end()).toThrow(/closed the connection without answering/);
  });

  it('ignores end() after a complete response', () => {
    const r = parse(['HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok']);
    expect(() => r.parser.end()).not.toThrow();
    expect(r.ends).toBe(1);
  });
});

describe('ResponseParser: halt()', () => {
  /** A parser that halts in the named event and records every event it still saw. */
  function halting(at: 'onHead' | 'onData') {
    const seen: string[] = [];
    const parser: ResponseParser = new ResponseParser({
      onHead: () => { seen.push('head'); if (at === 'onHead') parser.halt(); },
      onData: (c) => { seen.push(`data:${c.toString('latin1')}`); if (at === 'onData') parser.halt(); },
      onEnd: () => seen.push('end'),
    });
    return { parser, seen };
  }

  it('stops every event after a halt in onHead', () => {
    const { parser, seen } = halting('onHead');
    parser.execute(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'));
    parser.execute(Buffer.from('more'));
    parser.end();
    expect(seen).toEqual(['head']);
    expect(parser.keepAlive).toBe(false);
  });

  it('stops every event after a halt in onHead of a 204', () => {
    const { parser, seen } = halting('onHead');
    parser.execute(Buffer.from('HTTP/1.1 204 No Content\r\n\r\n'));
    expect(seen).toEqual(['head']);
  });

  it.each([
    ['Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'],
    ['chunked', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n2\r\nno\r\n0\r\n\r\n'],
    ['close-delimited', 'HTTP/1.1 200 OK\r\n\r\nok'],
  ])('stops every event after a halt in onData of a %s body', (_, raw) => {
    const { parser, seen } = halting('onData');
    parser.execute(Buffer.from(raw));
    parser.execute(Buffer.from('more'));
    parser.end();
    expect(seen).toEqual(['head', 'data:ok']);
    expect(parser.keepAlive).toBe(false);
  });
});
