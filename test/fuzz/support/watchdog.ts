import { Worker } from 'node:worker_threads';

/**
 * A gateway started in the test's own process shares its event loop: a request that makes
 * the server loop forever (as `date=9999-12-31` once did) would freeze the test, timers and
 * vitest's timeout included, and CI would hang. This watchdog runs on its own thread, hears
 * a heartbeat carrying the requests under way, and when the heartbeat stops for `stallMs`
 * writes those requests to stderr and kills the process, so the run fails and says why.
 */
export class Watchdog {
  private readonly worker: Worker;
  private readonly beat: NodeJS.Timeout;
  private readonly underWay = new Map<number, string>();
  private serial = 0;

  constructor(label: string, stallMs = 25_000) {
    this.worker = new Worker(WATCHDOG_SOURCE, { eval: true, workerData: { label, stallMs } });
    this.worker.unref();
    this.beat = setInterval(() => this.worker.postMessage([...this.underWay.values()]), 250);
    this.beat.unref();
  }

  /** Marks a request as under way; call the returned function when it is answered. */
  track(description: string): () => void {
    const id = ++this.serial;
    this.underWay.set(id, description);
    return () => this.underWay.delete(id);
  }

  async stop(): Promise<void> {
    clearInterval(this.beat);
    await this.worker.terminate();
  }
}

const WATCHDOG_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { writeSync } = require('node:fs');
let last = Date.now();
let underWay = [];
parentPort.on('message', (m) => { last = Date.now(); underWay = m; });
setInterval(() => {
  if (Date.now() - last < workerData.stallMs) return;
  writeSync(2, '\\n[fuzz watchdog] ' + workerData.label + ': the event loop has been blocked for '
    + Math.round((Date.now() - last) / 1000) + ' s (the in-process gateway is stuck). Requests under way:\\n'
    + underWay.map((d) => '  ' + d).join('\\n') + '\\nKilling the test process.\\n');
  process.kill(process.pid, 'SIGKILL');
}, 1000);
`;
