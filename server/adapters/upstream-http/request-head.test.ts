import { describe, expect, it } from 'vitest';
import { requestBytes } from './request-head';
import { UpstreamHttpError, type UpstreamRequest } from './types';

const HOST = 'api.example.test';

function request(over: Partial<UpstreamRequest> = {}): UpstreamRequest {
  return {
    origin: `https://${HOST}`,
    path: '/v1/chat',
    method: 'POST',
    headers: {},
    body: null,
    headersTimeout: 0,
    bodyTimeout: 0,
    ...over,
  };
}

/** The request's bytes as one latin1 string, whatever the number of buffers. */
const text = (r: UpstreamRequest) => Buffer.concat(requestBytes(r, HOST)).toString('latin1');

/** The header lines of the request, after the request line, up to the blank line. */
const headerLines = (r: UpstreamRequest) => text(r).split('\r\n\r\n')[0].split('\r\n').slice(1);

/** Expects requestBytes to refuse the request as UPSTREAM_INVALID_REQUEST. */
function expectInvalid(r: UpstreamRequest): void {
  let caught: unknown;
  try {
    requestBytes(r, HOST);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(UpstreamHttpError);
  expect((caught as UpstreamHttpError).code).toBe('UPSTREAM_INVALID_REQUEST');
}

describe('requestBytes: the bytes written', () => {
  it('writes a small POST as one buffer: request line, own headers, caller headers in order, body', () => {
    const out = requestBytes(
      request({ contentType: 'application/json', headers: { authorization: 'Bearer k', 'X-Trace': 't-1' }, body: Buffer.from('{"a":1}') }),
      HOST,
    );
    expect(out).toHaveLength(1);
    expect(out[0].toString('latin1')).toBe(
      'POST /v1/chat HTTP/1.1\r\n' +
        'host: api.example.test\r\n' +
        'accept-encoding: identity\r\n' +
        'content-length: 7\r\n' +
        'content-type: application/json\r\n' +
        'authorization: Bearer k\r\n' +
        'X-Trace: t-1\r\n' +
        '\r\n' +
        '{"a":1}',
    );
  });

  it('writes no content-type without contentType', () => {
    expect(headerLines(request({ body: Buffer.from('x') }))).toEqual(['host: api.example.test', 'accept-encoding: identity', 'content-length: 1']);
  });

  it('writes content-length: 0 for a POST without a body', () => {
    const out = requestBytes(request(), HOST);
    expect(out).toHaveLength(1);
    expect(out[0].toString('latin1')).toBe('POST /v1/chat HTTP/1.1\r\nhost: api.example.test\r\naccept-encoding: identity\r\ncontent-length: 0\r\n\r\n');
  });

  it('writes no content-length for a GET without a body', () => {
    expect(text(request({ method: 'GET', path: '/v1/models?limit=5' }))).toBe(
      'GET /v1/models?limit=5 HTTP/1.1\r\nhost: api.example.test\r\naccept-encoding: identity\r\n\r\n',
    );
  });

  it('keeps a body of up to 16 KiB in the same buffer as the head', () => {
    const body = Buffer.alloc(16 * 1024, 0x61);
    const out = requestBytes(request({ body }), HOST);
    expect(out).toHaveLength(1);
    expect(out[0].subarray(out[0].length - body.length).equals(body)).toBe(true);
  });

  it('sends a body over 16 KiB as a second buffer, the caller’s own Buffer', () => {
    const body = Buffer.alloc(16 * 1024 + 1, 0x61);
    const out = requestBytes(request({ body }), HOST);
    expect(out).toHaveLength(2);
    expect(out[1]).toBe(body);
    expect(out[0].toString('latin1')).toBe(
      `POST /v1/chat HTTP/1.1\r\nhost: api.example.test\r\naccept-encoding: identity\r\ncontent-length: ${body.length}\r\n\r\n`,
    );
  });

  it('keeps obs-text bytes (0x80-0xff) of a header value as they are', () => {
    const out = requestBytes(request({ headers: { 'x-name': 'caf\xe9 \x80\xff' } }), HOST);
    const bytes = out[0];
    const at = bytes.indexOf('x-name: ');
    expect([...bytes.subarray(at + 8, at + 8 + 8)]).toEqual([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80, 0xff, 0x0d]);
  });

  it('keeps a tab in a header value', () => {
    expect(headerLines(request({ headers: { 'x-tab': 'a\tb' } }))).toContain('x-tab: a\tb');
  });
});

describe('requestBytes: headers the client writes itself', () => {
  it.each(['Host', 'host', 'Content-Length', 'CONNECTION', 'Transfer-Encoding', 'accept-encoding', 'Keep-Alive', 'Upgrade', 'TE', 'Expect'])(
    'drops a caller copy of %s',
    (name) => {
      const lines = headerLines(request({ headers: { [name]: 'caller', 'x-kept': '1' }, body: Buffer.from('abc') }));
      expect(lines).toEqual(['host: api.example.test', 'accept-encoding: identity', 'content-length: 3', 'x-kept: 1']);
    },
  );

  it('drops a caller content-type when contentType is given', () => {
    const lines = headerLines(request({ contentType: 'application/json', headers: { 'Content-Type': 'text/plain' } }));
    expect(lines.filter((l) => /^content-type:/i.test(l))).toEqual(['content-type: application/json']);
  });

  it('keeps a caller content-type when no contentType is given', () => {
    const lines = headerLines(request({ headers: { 'Content-Type': 'text/plain' } }));
    expect(lines.filter((l) => /^content-type:/i.test(l))).toEqual(['Content-Type: text/plain']);
  });
});

describe('requestBytes: refused requests', () => {
  it.each([
    ['a CR', 'a\rb'],
    ['an LF', 'a\nb'],
    ['a CRLF with an injected header', 'a\r\nx-injected: 1'],
    ['a NUL', 'a\0b'],
    ['a character past 0xff', 'a\u20acb'],
  ])('refuses a header value with %s', (_, value) => {
    expectInvalid(request({ headers: { 'x-value': value } }));
  });

  it('refuses a bad value even in a header it would drop', () => {
    expectInvalid(request({ headers: { host: 'evil\r\nx: 1' } }));
  });

  it('refuses a content type with a line break', () => {
    expectInvalid(request({ contentType: 'application/json\r\nx-injected: 1' }));
  });

  it.each([['with a space', 'x name'], ['with a colon', 'x:name'], ['empty', ''], ['with a CRLF', 'x\r\ny']])(
    'refuses a header name %s',
    (_, name) => {
      expectInvalid(request({ headers: { [name]: 'v' } }));
    },
  );

  it.each([
    ['with a space', '/v1/chat completions'],
    ['with a CRLF', '/v1/chat\r\nx-injected: 1'],
    ['not starting with /', 'v1/chat'],
    ['absolute', 'http://other.test/v1/chat'],
    ['empty', ''],
    ['with a non-ASCII character', '/v1/caf\xe9'],
  ])('refuses a path %s', (_, path) => {
    expectInvalid(request({ path }));
  });
});
