import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { LINGER_BYTES, LINGER_MS } from './body-intake';
import { fileBytes, multipartBody } from '../../testing/multipart';

/**
 * Answers the gateway gives before the body has arrived (413 for a body over MAX_BODY_BYTES,
 * 401 for a bad key), read by a client that writes its whole request before it reads, as
 * blocking clients do. On a connection that closes after the answer, closing with the body
 * unread would reset the connection and the client would read ECONNRESET, not the answer.
 */
let gw: TestGateway;
let port: number;
beforeAll(async () => {
  gw = await startTestGateway();
  port = Number(new URL(gw.url).port);
});
afterAll(async () => { await gw?.close(); });

interface Outcome {
  /** The answer's status, or how the connection ended without one. */
  status: number | 'reset' | 'closed' | 'waited';
  /** Bytes of the request the client wrote before the connection ended. */
  written: number;
  ms: number;
}

/**
 * Writes `head` and then `body` (in 64 KiB pieces, `stopAfter` bytes of it at most) without
 * reading, then reads one answer: what a client that sends before it reads meets.
 */
function sendThenRead(head: string, body: Buffer, opts: { stopAfter?: number; waitMs?: number; port?: number } = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const socket = net.connect(opts.port ?? port, '127.0.0.1');
    socket.pause();
    let data = '';
    let written = 0;
    let done = false;
    const finish = (status: Outcome['status']) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ status, written, ms: Date.now() - t0 });
    };
    const timer = setTimeout(() => finish('waited'), opts.waitMs ?? 10_000);
    socket.on('connect', async () => {
      socket.write(head);
      const end = Math.min(body.length, opts.stopAfter ?? body.length);
      for (let at = 0; at < end && !done; at += 64 * 1024) {
        const piece = body.subarray(at, Math.min(end, at + 64 * 1024));
        const ok = socket.write(piece, (err) => { if (!err) written += piece.length; });
        if (!ok) await new Promise<void>((r) => { socket.once('drain', r); socket.once('close', r); });
      }
      socket.resume();
    });
    socket.on('data', (d) => {
      data += d.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(data);
      if (m && data.includes('\r\n\r\n')) finish(Number(m[1]));
    });
    socket.on('error', (err: NodeJS.ErrnoException) => finish(err.code === 'ECONNRESET' || err.code === 'EPIPE' ? 'reset' : 'closed'));
    socket.on('close', () => finish('closed'));
  });
}

const FIVE_MB = Buffer.alloc(5 * 1024 * 1024, 0x20);
const head = (path: string, key: string, length: number, extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n`;
const CLOSE = 'Connection: close\r\n';

async function statuses(times: number, send: () => Promise<Outcome>): Promise<Record<string, number>> {
  const tally: Record<string, number> = {};
  for (let i = 0; i < times; i++) {
    const { status } = await send();
    tally[status] = (tally[status] ?? 0) + 1;
  }
  return tally;
}

describe('an answer given before the body arrived', () => {
  it('reaches a client that asked to close and is still sending: 413 for 5 MB, 100 times out of 100', async () => {
    expect(await statuses(100, () => sendThenRead(head('/v1/chat/completions', gw.rootKey, FIVE_MB.length, CLOSE), FIVE_MB))).toEqual({ 413: 100 });
  }, 120_000);

  it('reaches it with a bad key on a large body (401), and on an admin route (413)', async () => {
    expect(await statuses(40, () => sendThenRead(head('/v1/chat/completions', 'sk-not-a-key', FIVE_MB.length, CLOSE), FIVE_MB))).toEqual({ 401: 40 });
    expect(await statuses(20, () => sendThenRead(head('/x-keys', gw.rootKey, FIVE_MB.length, CLOSE), FIVE_MB))).toEqual({ 413: 20 });
  }, 120_000);

  it('goes out at once on a connection that stays open, which then serves the next request', async () => {
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let data = '';
    socket.on('data', (d) => (data += d));
    const until = async (re: RegExp) => { for (let i = 0; i < 200 && !re.test(data); i++) await new Promise((r) => setTimeout(r, 10)); };
    socket.write(head('/v1/chat/completions', gw.rootKey, FIVE_MB.length));
    // The 413 arrives before a byte of the body is sent.
    await until(/\r\n\r\n\{.*\}$/);
    expect(data).toMatch(/^HTTP\/1\.1 413 /);
    data = '';
    socket.write(FIVE_MB);
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(/\{"status":"ok"\}$/);
    expect(data).toMatch(/^HTTP\/1\.1 200 /);
    socket.destroy();
  });

  it('waits for the rest of the body at most LINGER_MS, then answers and closes', async () => {
    // The client sends 1 MB of the 5 MB it declared and then only reads.
    const o = await sendThenRead(head('/v1/chat/completions', gw.rootKey, FIVE_MB.length, CLOSE), FIVE_MB, { stopAfter: 1024 * 1024, waitMs: LINGER_MS + 5_000 });
    expect(o.status).toBe(413);
    expect(o.ms).toBeGreaterThanOrEqual(LINGER_MS - 500);
    expect(o.ms).toBeLessThan(LINGER_MS + 3_000);
  }, 20_000);

  it('reads and drops at most LINGER_BYTES more of a chunked body, and waits for none past a declared length over it', async () => {
    const huge = Buffer.alloc(4 * LINGER_BYTES, 0x20);
    const chunkedHead = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-not-a-key\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n${CLOSE}\r\n${huge.length.toString(16)}\r\n`;
    const chunked = await sendThenRead(chunkedHead, huge, { waitMs: 15_000 });
    // Closed with the client's bytes still coming: the answer or a reset, once LINGER_BYTES were dropped.
    expect(['reset', 401]).toContain(chunked.status);
    expect(chunked.written).toBeGreaterThan(LINGER_BYTES);
    // What the client counts as written includes what both kernels held on loopback when the gateway
    // closed: its receive buffer grows to tcp_rmem's maximum (32 MB here), so on a busy machine this
    // once reached 2 × LINGER_BYTES + 64 KB. The body is 4 × LINGER_BYTES, which is more than
    // LINGER_BYTES and both buffers: not all of it went, so the gateway stopped reading.
    expect(chunked.written).toBeLessThan(huge.length);
    const declared = await sendThenRead(head('/v1/chat/completions', gw.rootKey, huge.length, CLOSE), huge, { waitMs: 15_000 });
    expect(['reset', 413]).toContain(declared.status);
    expect(declared.written).toBeLessThan(LINGER_BYTES);
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
  }, 30_000);
});

describe('an upload that goes over MAX_UPLOAD_BYTES as it arrives', () => {
  const LIMIT = 1024 * 1024;
  let small: TestGateway;
  beforeAll(async () => { small = await startTestGateway({ maxUploadBytes: LIMIT }); });
  afterAll(async () => { await small?.close(); });

  it('answers 413 to a client that asked to close and is still sending a chunked form, 20 times out of 20', async () => {
    // The file comes before the model, so the form is read until the limit is passed; chunked,
    // so no declared length gives the refusal away before the bytes do. 12 MB is more than the
    // loopback's socket buffers hold, so bytes are still unread when the 413 is ready.
    const { body } = multipartBody([{ name: 'file', filename: 'big.mp3', data: fileBytes(12 * LIMIT) }, { name: 'model', value: 'whisper-1' }], 'b');
    const chunked = Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]);
    const uploadHead = `POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${small.rootKey}\r\nContent-Type: multipart/form-data; boundary=b\r\nTransfer-Encoding: chunked\r\n${CLOSE}\r\n`;
    const smallPort = Number(new URL(small.url).port);
    expect(await statuses(20, () => sendThenRead(uploadHead, chunked, { port: smallPort }))).toEqual({ 413: 20 });
  }, 60_000);
});
