import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import WebSocket from 'ws';
import { startProxyFixture, secret, sleep, type ProxyFixture } from '../../server/gateway/test-fixture';
import { rawExchange, type RawPiece } from './support/raw-http';
import { forEachLimited } from './support/limited';
import { fuzzPasses, replayHint, scaled } from './support/seeds';

/**
 * Fuzzing the upload routes' multipart framing and the realtime WebSocket's upgrades and
 * frames, against an in-process gateway in front of a healthy mock upstream. No case may get
 * a 5xx, crash the gateway or leave anything behind: once all are done no call is under way,
 * no reservation open, no realtime session counted.
 */
const UPLOAD_CASES = scaled(120);
const SOCKET_CASES = scaled(60);
const FILE = 'test/fuzz/uploads-realtime.test.ts';
const UPLOAD_LIMIT = 256 * 1024;

let f: ProxyFixture;
let key = '';
beforeAll(async () => {
  f = await startProxyFixture({ userMinBalance: 0, maxUploadBytes: UPLOAD_LIMIT });
  await f.addKey(1, secret('fuzz-upload'));
  key = (await f.account({ level: 1, credit: 1000 })).key;
}, 60_000);
afterAll(async () => { await f?.close(); });

type Part = { name: string; value: string } | { name: string; filename: string; bytes: number };

const partArb: fc.Arbitrary<Part> = fc.oneof(
  fc.record({ name: fc.constantFrom('model', 'response_format', 'n', 'size', 'prompt', 'stream', 'x"y', ''), value: fc.oneof(fc.constantFrom('whisper-1', 'dall-e-2', 'text', 'true', '2', '256x256', '../../etc', ''), fc.string({ maxLength: 40 })) }),
  fc.record({ name: fc.constantFrom('file', 'image', 'image[]', 'mask'), filename: fc.oneof(fc.constantFrom('a.mp3', 'b.png', ''), fc.string({ maxLength: 20 })), bytes: fc.integer({ min: 0, max: 120_000 }) }),
);

/** A multipart request, well or badly framed: wrong boundary, cut short, lying length, garbage, too large. */
const uploadArb = fc.record({
  path: fc.constantFrom('/v1/audio/transcriptions', '/audio/translations', '/v1/images/edits', '/v1/images/variations'),
  parts: fc.array(partArb, { maxLength: 6 }),
  boundary: fc.constantFrom('b0undary', 'x'.repeat(70), 'a b', '--'),
  fault: fc.constantFrom('none', 'none', 'none', 'wrong-boundary', 'cut', 'short-length', 'no-type', 'json-type', 'garbage', 'over-limit', 'declared-over', 'chunked'),
});

function uploadPieces(c: { path: string; parts: Part[]; boundary: string; fault: string }): RawPiece[] {
  const bodyBoundary = c.fault === 'wrong-boundary' ? 'other' : c.boundary;
  const chunks: Buffer[] = [];
  for (const p of c.parts as Part[]) {
    if ('value' in p) chunks.push(Buffer.from(`--${bodyBoundary}\r\nContent-Disposition: form-data; name="${p.name}"\r\n\r\n${p.value}\r\n`));
    else chunks.push(Buffer.from(`--${bodyBoundary}\r\nContent-Disposition: form-data; name="${p.name}"; filename="${p.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`), Buffer.alloc(p.bytes, 7), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${bodyBoundary}--\r\n`));
  let body = Buffer.concat(chunks);
  if (c.fault === 'garbage') body = Buffer.from(body.toString('latin1').split('').reverse().join(''), 'latin1');
  if (c.fault === 'over-limit') body = Buffer.concat([body, Buffer.alloc(UPLOAD_LIMIT + 10, 1)]);
  const type = c.fault === 'no-type' ? '' : c.fault === 'json-type' ? 'content-type: application/json\r\n' : `content-type: multipart/form-data; boundary=${c.boundary}\r\n`;
  const head = `POST ${c.path} HTTP/1.1\r\nhost: fuzz\r\nauthorization: Bearer ${key}\r\n${type}`;
  if (c.fault === 'chunked') return [`${head}transfer-encoding: chunked\r\n\r\n`, Buffer.from(`${body.length.toString(16)}\r\n`), body, '\r\n0\r\n\r\n'];
  if (c.fault === 'declared-over') return [`${head}content-length: ${UPLOAD_LIMIT + 1}\r\n\r\n`, body.subarray(0, 100)];
  const length = c.fault === 'short-length' ? body.length + 50 : body.length;
  if (c.fault === 'cut') return [`${head}content-length: ${length}\r\n\r\n`, body.subarray(0, body.length >> 1)];
  return [`${head}content-length: ${length}\r\n\r\n`, body];
}

/** A realtime client: its upgrade headers, then frames, then how it leaves. */
const socketArb = fc.record({
  query: fc.constantFrom('model=gpt-realtime', 'model=', '', 'model=../x', 'model=gpt-realtime&model=x', `model=${'m'.repeat(300)}`),
  auth: fc.constantFrom('header', 'protocol', 'protocol-only-key', 'none', 'bad'),
  frames: fc.array(fc.oneof(
    fc.constantFrom('{"type":"response.create"}', '{"type":"input_audio_buffer.append","audio":"AAAA"}', '{"type":"session.update","session":{}}', 'not json', '{"type":"response.done"}', '"response.created"'),
    fc.uint8Array({ maxLength: 2000 }),
  ), { maxLength: 8 }),
  leave: fc.constantFrom('close', 'terminate', 'wait'),
});

describe.each(fuzzPasses())('uploads and realtime fuzz ($label seed $seed)', ({ seed }) => {
  it(`answers ${UPLOAD_CASES} multipart requests and ${SOCKET_CASES} realtime clients without a 5xx, a crash or a leak`, async () => {
    const problems: string[] = [];
    const uploads = fc.sample(uploadArb, { seed, numRuns: UPLOAD_CASES });
    await forEachLimited(uploads, 4, async (c) => {
      const pieces = uploadPieces(c);
      const outcome = await rawExchange(Number(new URL(f.gw.url).port), pieces, { responses: 1, waitMs: c.fault === 'cut' || c.fault === 'short-length' ? 300 : 5_000 });
      for (const r of outcome.responses) if (r.status >= 500) problems.push(`${c.path} ${c.fault}: ${r.status} ${r.body.toString().slice(0, 200)}`);
      if ((c.fault === 'over-limit' || c.fault === 'declared-over') && outcome.responses[0] && outcome.responses[0].status !== 413 && outcome.responses[0].status !== 401) {
        problems.push(`${c.path} ${c.fault}: ${outcome.responses[0].status} instead of 413`);
      }
    });
    const sockets = fc.sample(socketArb, { seed: seed ^ 0x3c3c, numRuns: SOCKET_CASES });
    await forEachLimited(sockets, 4, async (c) => {
      const protocols = c.auth === 'protocol' ? ['realtime', `openai-insecure-api-key.${key}`] : c.auth === 'protocol-only-key' ? [`openai-insecure-api-key.${key}`] : undefined;
      const headers = c.auth === 'header' ? { authorization: `Bearer ${key}` } : c.auth === 'bad' ? { authorization: 'Bearer sk-nope' } : {};
      const ws = new WebSocket(`${f.gw.url.replace('http', 'ws')}/v1/realtime?${c.query}`, protocols, { headers });
      await new Promise<void>((resolve) => {
        ws.once('unexpected-response', (_q, res) => {
          if ((res.statusCode ?? 0) >= 500) problems.push(`upgrade ${c.auth} ${c.query.slice(0, 40)}: ${res.statusCode}`);
          res.resume();
          resolve();
        });
        ws.once('error', () => resolve());
        ws.once('open', async () => {
          for (const fr of c.frames) if (ws.readyState === ws.OPEN) ws.send(fr);
          if (c.leave === 'wait') await sleep(100);
          if (c.leave === 'terminate') ws.terminate();
          else ws.close();
          resolve();
        });
      });
      ws.once('close', (code) => { if (code === 1011) problems.push(`session ${c.auth}: closed with 1011`); });
    });
    // Everything let go: calls, reservations, sessions.
    for (let i = 0; i < 100 && (f.gw.gateway.proxy.inFlight > 0 || f.gw.gateway.proxy.realtime.count > 0); i++) await sleep(50);
    expect(problems, replayHint(seed, FILE)).toEqual([]);
    expect(f.gw.gateway.proxy.inFlight).toBe(0);
    expect(f.gw.gateway.proxy.realtime.count).toBe(0);
    expect(f.gw.gateway.proxy.admission.open).toBe(0);
    expect((await fetch(`${f.gw.url}/healthz`)).status).toBe(200);
  }, 180_000);
});
