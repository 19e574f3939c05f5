/**
 * The slow-stream upstream of `bench:streams`: every POST to a chat completions path is
 * answered with an event stream of CHUNKS content chunks INTERVAL_MS apart (the last one
 * also carries the usage chunk and [DONE]), keep-alive, in OpenAI's format.
 *
 * It speaks HTTP/1.1 on raw sockets with every answer byte prebuilt (chunked framing
 * included), one timer per connection re-armed with refresh(), and one write per chunk, so
 * that thousands of concurrent streams cost it little: the upstream must not be what the
 * benchmark measures. Runs as its own process; prints `listening <url>` once ready.
 *
 *   CHUNKS (default 64), INTERVAL_MS (default 20)
 */
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

const CHUNKS = Math.max(2, Number(process.env.CHUNKS) || 64);
const INTERVAL_MS = Math.max(1, Number(process.env.INTERVAL_MS) || 20);
const MODEL = 'gpt-4o-mini';
const created = Math.floor(Date.now() / 1000);

const event = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`;
const chunkEvent = (i: number) => event({
  id: 'chatcmpl-bench', object: 'chat.completion.chunk', created, model: MODEL,
  choices: [{ index: 0, delta: i === 0 ? { role: 'assistant', content: 'tok0' } : { content: ` tok${i}` }, finish_reason: i === CHUNKS - 1 ? 'stop' : null }],
});
const framed = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;

const HEAD = 'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n'
  + 'transfer-encoding: chunked\r\nconnection: keep-alive\r\n\r\n';
const USAGE = event({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created, model: MODEL, choices: [], usage: { prompt_tokens: 12, completion_tokens: CHUNKS, total_tokens: 12 + CHUNKS } });
/** PIECES[i] is what goes out at step i: the head with the first chunk, each chunk, and the last with usage, [DONE] and the terminator. */
const PIECES: Buffer[] = Array.from({ length: CHUNKS }, (_, i) => {
  if (i === 0) return Buffer.from(HEAD + framed(chunkEvent(0)));
  if (i === CHUNKS - 1) return Buffer.from(framed(chunkEvent(i) + USAGE + 'data: [DONE]\n\n') + '0\r\n\r\n');
  return Buffer.from(framed(chunkEvent(i)));
});
const NOT_FOUND = Buffer.from('HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 21\r\n\r\n{"error":"not found"}');
const BAD = Buffer.from('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');

const CRLF2 = Buffer.from('\r\n\r\n');

/** One client connection: reads a request, streams the answer, then waits for the next request. */
class Connection {
  private buf: Buffer | null = null;
  /** Bytes of the current request's body still to come. */
  private bodyLeft = -1;
  private found = false;
  private step = -1;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.on('data', (d: Buffer) => this.read(d));
    socket.on('error', () => this.stop());
    socket.on('close', () => this.stop());
  }

  private read(d: Buffer): void {
    if (this.step >= 0) return; // nothing is pipelined by the bench's clients
    if (this.bodyLeft >= 0) {
      this.bodyLeft -= d.length;
      if (this.bodyLeft <= 0) this.answer();
      return;
    }
    const buf = this.buf ? Buffer.concat([this.buf, d]) : d;
    const end = buf.indexOf(CRLF2);
    if (end === -1) {
      if (buf.length > 64 * 1024) return void this.socket.end(BAD);
      this.buf = buf;
      return;
    }
    this.buf = null;
    const head = buf.toString('latin1', 0, end);
    const line = head.slice(0, head.indexOf('\r\n'));
    this.found = line.startsWith('POST ') && line.includes('/chat/completions');
    const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    this.bodyLeft = (m ? Number(m[1]) : 0) - (buf.length - end - 4);
    if (this.bodyLeft <= 0) this.answer();
  }

  private answer(): void {
    this.bodyLeft = -1;
    if (!this.found) return void this.socket.write(NOT_FOUND);
    this.step = 0;
    this.next();
  }

  /** Writes this step's piece and arms the timer for the next one. */
  private next = (): void => {
    if (this.step < 0 || this.socket.destroyed) return;
    this.socket.write(PIECES[this.step]);
    this.step++;
    if (this.step === CHUNKS) {
      this.step = -1;
      return;
    }
    if (this.timer) this.timer.refresh();
    else this.timer = setTimeout(this.next, INTERVAL_MS);
  };

  private stop(): void {
    this.step = -1;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

const server = createServer({ noDelay: true }, (socket) => new Connection(socket));
server.listen({ port: 0, host: '127.0.0.1', backlog: 8192 }, () => {
  process.stdout.write(`listening http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
process.on('disconnect', () => process.exit(0));
