import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { listenExclusive, uWS } from './uws';
import { Exchange } from './exchange';
import { readJsonObject, type JsonBody, type JsonBodyOptions } from './body-intake';

/** Sends raw bytes (the second part after a pause), returns what came back when the server closed or `waitMs` passed. */
function rawRequest(port: number, head: string | Buffer, opts: { later?: string; destroyAfterWrite?: boolean; waitMs?: number } = {}): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    const done = () => { socket.destroy(); resolve(data); };
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(head);
      if (opts.destroyAfterWrite) setTimeout(done, 50);
      else if (opts.later !== undefined) setTimeout(() => socket.write(opts.later!), 100);
    });
    socket.on('data', (d) => (data += d));
    socket.on('close', done);
    socket.on('error', done);
    setTimeout(done, opts.waitMs ?? 2000);
  });
}

describe('body intake on a bare uWS app', () => {
  let listen: Awaited<ReturnType<typeof listenExclusive>>;
  const settled: JsonBody[] = [];
  const post = (path: string, opts: JsonBodyOptions) => (res: uWS.HttpResponse, req: uWS.HttpRequest) => {
    const ex = new Exchange(res, req, 1024);
    readJsonObject(ex, opts).then((body) => {
      settled.push(body);
      if (body.ok) ex.sendJson(200, { path, value: body.value ?? null, bytes: body.raw.length });
      else if ('refusal' in body) ex.sendError(body.refusal.status, body.refusal.message, body.refusal.code);
    });
  };

  beforeAll(async () => {
    const app = uWS.App();
    app.post('/optional', post('/optional', { required: false }));
    app.post('/required', post('/required', { required: true }));
    app.post('/stored', post('/stored', { required: false, storableText: true }));
    // A route with an error format of its own (as /v1/messages has).
    app.post('/shaped', (res, req) => {
      const ex = new Exchange(res, req, 1024, undefined, (status, message, code) => JSON.stringify({ type: 'error', error: { status, message, code } }));
      readJsonObject(ex, { required: false }).then((body) => { if (body.ok) ex.sendJson(200, {}); });
    });
    // Answers before it reads (as the proxy's 401 does): the body must not be left rejected.
    app.post('/early', (res, req) => {
      const ex = new Exchange(res, req, 1024);
      ex.sendError(401, 'no key');
    });
    listen = await listenExclusive(app, '127.0.0.1', 0);
  });
  afterAll(() => uWS.us_listen_socket_close(listen.socket));

  const send = (path: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) => {
    const h = Object.entries({ 'content-length': String(Buffer.byteLength(body)), ...headers }).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    return rawRequest(listen.port, `POST ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${h}\r\n${body}`);
  };
  const status = (res: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(res)?.[1]);
  const json = (res: string) => JSON.parse(res.slice(res.indexOf('\r\n\r\n') + 4));

  it('reads a JSON object, whole or in chunks, and an empty body as no value unless required', async () => {
    expect(json(await send('/optional', '{"a":[1,"x"]}'))).toEqual({ path: '/optional', value: { a: [1, 'x'] }, bytes: 13 });
    expect(json(await send('/optional', '', {}))).toEqual({ path: '/optional', value: null, bytes: 0 });
    const r = await send('/required', '', {});
    expect(status(r)).toBe(400);
    expect(json(r).error.code).toBe('invalid_request');
    const chunk = (s: string) => `${s.length.toString(16)}\r\n${s}\r\n`;
    const chunked = await rawRequest(listen.port, `POST /optional HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunk('{"a":')}`, { later: `${chunk('"b"}')}0\r\n\r\n` });
    expect(json(chunked)).toEqual({ path: '/optional', value: { a: 'b' }, bytes: 9 });
  });

  it('answers 413, 415 and 400 with the envelope', async () => {
    const big = await send('/optional', JSON.stringify({ a: 'x'.repeat(2000) }));
    expect([status(big), json(big).error.code]).toEqual([413, 'body_too_large']);
    // Kept open: on a connection that closes, the answer would wait for the body (early-answers.test.ts).
    const declared = await rawRequest(listen.port, 'POST /optional HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1025\r\n\r\n', { waitMs: 500 });
    expect([status(declared), json(declared).error.code]).toEqual([413, 'body_too_large']);
    for (const type of ['text/plain', 'application/json-seq', 'application/x-www-form-urlencoded']) {
      const r = await send('/optional', '{}', { 'content-type': type });
      expect([status(r), json(r).error.code]).toEqual([415, 'unsupported_media_type']);
    }
    const untyped = await send('/optional', '{}', {});
    expect([status(untyped), json(untyped).error.message]).toEqual([415, 'Missing content-type header; send application/json']);
    expect(status(await send('/optional', '{}', { 'content-type': 'Application/JSON; charset=utf-8' }))).toBe(200);
    const malformed = await send('/optional', '{"a":');
    expect([status(malformed), json(malformed).error.code]).toEqual([400, 'invalid_json']);
    for (const notObject of ['[]', '"x"', 'null', '3']) {
      const r = await send('/optional', notObject);
      expect([status(r), json(r).error.message]).toEqual([400, 'body: must be a JSON object']);
    }
  });

  it('refuses text the database cannot store only when asked, naming the field', async () => {
    const cases: [string, string][] = [
      ['{"Name":"a\\u0000b"}', 'Name: must not contain NUL characters'],
      ['{"deployments":{"gpt\\u0000":"x"}}', 'deployments.gpt\u0000: must not contain NUL characters'],
      ['{"Models":["ok","\\ud800"]}', 'Models.1: must not contain unpaired UTF-16 surrogates'],
      ['{"a":{"b":"\\udc00x"}}', 'a.b: must not contain unpaired UTF-16 surrogates'],
    ];
    for (const [body, message] of cases) {
      const r = await send('/stored', body);
      expect([status(r), json(r).error]).toEqual([400, { message, type: 'invalid_request_error', code: 'invalid_request' }]);
      expect(status(await send('/optional', body))).toBe(200);
    }
    // A surrogate pair is a character; an escaped backslash before "u0000" is not a NUL.
    expect(json(await send('/stored', '{"a":"\\ud83d\\ude00","b":"\\\\u0000"}')).value).toEqual({ a: '😀', b: '\\u0000' });
  });

  it('settles as gone when the client leaves in the middle of a body', async () => {
    const before = settled.length;
    await rawRequest(listen.port, 'POST /optional HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"a":', { destroyAfterWrite: true });
    const chunked = 'POST /required HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{"a\r\n';
    await rawRequest(listen.port, chunked, { destroyAfterWrite: true });
    for (let i = 0; i < 50 && settled.length < before + 2; i++) await new Promise((r) => setTimeout(r, 20));
    expect(settled.slice(before)).toEqual([{ ok: false, gone: true }, { ok: false, gone: true }]);
  });

  it('leaves nothing unhandled when the handler answers before the body (declared too large, or never sent)', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    try {
      const r = await rawRequest(listen.port, 'POST /early HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4194305\r\n\r\n', { waitMs: 300 });
      expect(status(r)).toBe(401);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('answers an unsupported transfer coding with 400, whether the body comes with the head or after it', async () => {
    for (const te of ['identity', 'gzip, chunked']) {
      const head = `POST /optional HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: ${te}\r\n\r\n`;
      for (const r of [await rawRequest(listen.port, head + '{}'), await rawRequest(listen.port, head, { later: '{}' })]) {
        expect(status(r)).toBe(400);
        expect(r).toMatch(/^connection: close\r$/im);
        expect(json(r).error.code).toBe('unsupported_transfer_encoding');
      }
    }
  });

  it('refuses Content-Length lines that disagree with 400 before reading, in either order, and takes equal ones as one', async () => {
    const body = '{"a":"b"}';
    const head = (lengths: number[]) => `POST /optional HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${lengths.map((n) => `Content-Length: ${n}\r\n`).join('')}\r\n`;
    for (const lengths of [[body.length, 3], [3, body.length], [body.length, body.length + 100]]) {
      const before = settled.length;
      const r = await rawRequest(listen.port, head(lengths) + body);
      expect(status(r), String(lengths)).toBe(400);
      expect(r).toMatch(/^connection: close\r$/im);
      expect(json(r).error).toEqual({ message: 'The request has Content-Length headers with different values; send one', type: 'invalid_request_error', code: 'conflicting_content_length' });
      // Only the intake's own answer: the handler saw a refusal, not a body.
      expect(settled.slice(before).every((b) => !b.ok)).toBe(true);
    }
    const same = await rawRequest(listen.port, head([body.length, body.length]).replace('HTTP/1.1\r\n', 'HTTP/1.1\r\nConnection: close\r\n') + body);
    expect(json(same)).toEqual({ path: '/optional', value: { a: 'b' }, bytes: body.length });
  });

  it("gives the intake's own refusals in the route's error format", async () => {
    const te = await rawRequest(listen.port, 'POST /shaped HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: identity\r\n\r\n{}');
    expect([status(te), json(te)]).toEqual([400, { type: 'error', error: { status: 400, message: expect.stringContaining('identity'), code: 'unsupported_transfer_encoding' } }]);
    const cl = await rawRequest(listen.port, 'POST /shaped HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}');
    expect(json(cl).error.code).toBe('conflicting_content_length');
  });
});
