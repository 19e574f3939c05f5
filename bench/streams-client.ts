/**
 * The client side of `bench:streams`, in its own process so that its work does not share a
 * thread with the benchmark's bookkeeping: opens N keep-alive connections, sends one
 * streamed chat completion on each at once, and times every read of every answer.
 *
 * Raw sockets with one shared read buffer (`onread`): no HTTP parser, no allocation per
 * chunk. Per stream it keeps the time to the first byte and the worst gap between two reads
 * after it; a stream counts as delivered when it answered 200, carried every event and ended
 * with the terminating chunk. Takes its job as one IPC message, answers with one.
 */
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface StreamsJob {
  url: string;
  headers: Record<string, string>;
  body: string;
  streams: number;
  /** Events a complete answer carries (\n\n-terminated). */
  events: number;
  /** A stream not finished this long after its request went out counts as failed. */
  deadlineMs: number;
}

export interface StreamsResult {
  /** Worst inter-read gap of each delivered stream, ms. */
  worstGaps: number[];
  /** Time to the first byte of each delivered stream, ms. */
  firstBytes: number[];
  /** When each delivered stream's worst gap ended, ms after the requests went out. */
  worstAts: number[];
  failed: number;
  /** A few reasons of failed streams, with counts. */
  reasons: Record<string, number>;
  /** Most streams between first byte and end at the same moment. */
  peakOpen: number;
  wallMs: number;
  /** CPU time of this process while the streams ran, as a share of one core. */
  clientCpu: number;
}

/** What the client tells the benchmark: that it starts sending, then its result or why it failed. */
export type ClientMessage = { kind: 'sending' } | { kind: 'result'; result: StreamsResult } | { kind: 'error'; error: string };

const LF = 10;
const TERMINATOR = Buffer.from('0\r\n\r\n');
const STATUS_OK = Buffer.from('HTTP/1.1 200');

class Stream {
  sentAt = 0;
  firstAt = -1;
  lastAt = 0;
  worst = 0;
  /** When the worst gap ended (performance.now()). */
  worstAt = 0;
  events = 0;
  ok = false;
  done = false;
  failure: string | null = null;
  prevLf = false;
  /** The last bytes read, to find the terminator across reads. */
  tail = Buffer.alloc(5);
  tailLen = 0;
}

function run(job: StreamsJob): Promise<StreamsResult> {
  const u = new URL(job.url);
  const port = Number(u.port || 80);
  const head = `POST ${u.pathname}${u.search} HTTP/1.1\r\nhost: ${u.host}\r\ncontent-type: application/json\r\n`
    + Object.entries(job.headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')
    + `content-length: ${Buffer.byteLength(job.body)}\r\nconnection: keep-alive\r\n\r\n`;
  const request = Buffer.from(head + job.body);
  const shared = Buffer.alloc(256 * 1024);
  const streams: Stream[] = [];
  const sockets: Socket[] = [];
  let open = 0;
  let peakOpen = 0;
  let left = job.streams;
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (finish = resolve));

  const settle = (s: Stream, failure: string | null) => {
    if (s.done) return;
    s.done = true;
    s.failure = failure;
    if (s.firstAt >= 0) open--;
    if (--left === 0) finish();
  };

  const onRead = (s: Stream, n: number, buf: Buffer) => {
    if (s.done) return true;
    const now = performance.now();
    if (s.firstAt < 0) {
      s.firstAt = now;
      open++;
      if (open > peakOpen) peakOpen = open;
      s.ok = n >= STATUS_OK.length && buf.compare(STATUS_OK, 0, STATUS_OK.length, 0, STATUS_OK.length) === 0;
      if (!s.ok) {
        settle(s, `status ${buf.toString('latin1', 9, Math.min(n, 12))}`);
        return true;
      }
    } else {
      const gap = now - s.lastAt;
      if (gap > s.worst) {
        s.worst = gap;
        s.worstAt = now;
      }
    }
    s.lastAt = now;
    let prev = s.prevLf;
    for (let i = 0; i < n; i++) {
      const lf = buf[i] === LF;
      if (lf && prev) s.events++;
      prev = lf && !prev ? true : false;
    }
    s.prevLf = prev;
    // Keep the last five bytes seen, however the reads split them.
    if (n >= 5) {
      buf.copy(s.tail, 0, n - 5, n);
      s.tailLen = 5;
    } else {
      const keep = Math.min(s.tailLen, 5 - n);
      s.tail.copy(s.tail, 0, s.tailLen - keep, s.tailLen);
      buf.copy(s.tail, keep, 0, n);
      s.tailLen = keep + n;
    }
    if (s.tailLen === 5 && s.tail.equals(TERMINATOR)) {
      settle(s, s.events >= job.events ? null : `${s.events} of ${job.events} events`);
    }
    return true;
  };

  const open1 = (s: Stream) => new Promise<void>((resolve) => {
    const socket = connect({
      port, host: u.hostname, noDelay: true,
      onread: { buffer: shared, callback: (n: number, buf: Uint8Array) => onRead(s, n, buf as Buffer) },
    });
    sockets.push(socket);
    socket.once('connect', () => resolve());
    socket.on('error', (err) => {
      settle(s, (err as NodeJS.ErrnoException).code ?? err.message);
      resolve();
    });
    socket.on('close', () => settle(s, 'closed early'));
  });

  return (async () => {
    // Connected in batches, so a burst of SYNs does not overflow the server's accept queue.
    for (let i = 0; i < job.streams; i += 256) {
      const batch: Promise<void>[] = [];
      for (let j = i; j < Math.min(job.streams, i + 256); j++) {
        const s = new Stream();
        streams.push(s);
        batch.push(open1(s));
      }
      await Promise.all(batch);
    }
    process.send!({ kind: 'sending' } satisfies ClientMessage);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < streams.length; i++) {
      const s = streams[i];
      if (s.done) continue;
      s.sentAt = performance.now();
      sockets[i].write(request);
    }
    const deadline = setTimeout(() => {
      for (const s of streams) settle(s, s.firstAt < 0 ? 'no answer before the deadline' : 'not finished before the deadline');
    }, job.deadlineMs);
    await finished;
    clearTimeout(deadline);
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    for (const socket of sockets) socket.destroy();
    const reasons: Record<string, number> = {};
    const worstGaps: number[] = [];
    const firstBytes: number[] = [];
    const worstAts: number[] = [];
    let failed = 0;
    for (const s of streams) {
      if (s.failure !== null) {
        failed++;
        reasons[s.failure] = (reasons[s.failure] ?? 0) + 1;
        continue;
      }
      worstGaps.push(s.worst);
      firstBytes.push(s.firstAt - s.sentAt);
      worstAts.push(s.worstAt - t0);
    }
    return { worstGaps, firstBytes, worstAts, failed, reasons, peakOpen, wallMs, clientCpu: (cpu.user + cpu.system) / 1000 / wallMs };
  })();
}

process.once('message', (job: StreamsJob) => {
  run(job).then(
    (result) => process.send!({ kind: 'result', result } satisfies ClientMessage, () => process.exit(0)),
    (err: Error) => process.send!({ kind: 'error', error: err.message } satisfies ClientMessage, () => process.exit(1)),
  );
});
