import type { ServerResponse } from 'node:http';
import type { Behaviour } from './common';
import type { Call } from './openai';

/**
 * The pace of the mock's batch APIs (OpenAI batches, Anthropic message batches). The real
 * services take minutes to hours; the mock moves every open batch one stage per step, on a
 * timer (`stepMs`) or when a test steps it, so tests wait by polling, never by the clock.
 */

/** A batch the clock moves. */
export interface BatchJob {
  readonly id: string;
  /** Not yet in a final state. */
  readonly open: boolean;
  /** One stage: validate, run up to `lines` requests, finalize, or finish a cancellation. */
  step(lines: number): Promise<void>;
  /** Its completion window is over now: what is done is kept, the rest expires. */
  expire(): Promise<void>;
}

export interface BatchPace {
  /** Milliseconds between steps; null holds every batch where it is until stepBatches(). */
  stepMs?: number | null;
  /** Requests a running batch answers per step (default: all of them). */
  linesPerStep?: number;
}

export class BatchClock {
  private readonly jobs = new Map<string, BatchJob>();
  private stepMs: number | null;
  private linesPerStep: number;
  private timer: NodeJS.Timeout | null = null;
  /** Steps run one after another, whoever asks for them. */
  private turn: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(pace: BatchPace) {
    this.stepMs = pace.stepMs === undefined ? 50 : pace.stepMs;
    this.linesPerStep = pace.linesPerStep ?? Infinity;
  }

  add(job: BatchJob): void {
    this.jobs.set(job.id, job);
    this.arm();
  }

  pace(p: BatchPace): void {
    if (p.stepMs !== undefined) this.stepMs = p.stepMs;
    if (p.linesPerStep !== undefined) this.linesPerStep = p.linesPerStep;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.arm();
  }

  /** Moves every open batch one stage. */
  step(): Promise<void> {
    this.turn = this.turn.then(async () => {
      await Promise.all([...this.jobs.values()].filter((j) => j.open).map((j) => j.step(this.linesPerStep).catch((e: Error) => this.broke(j, e))));
    });
    return this.turn;
  }

  /** A batch that broke inside the mock (its files gone from under it after close()) must not stop the others. */
  private broke(job: BatchJob, e: Error): void {
    if (!this.closed) console.error(`mock upstream: batch ${job.id} broke: ${e.message}`);
  }

  /** Expires this batch now (either provider's); false when there is no such batch. */
  async expire(id: string): Promise<boolean> {
    const job = this.jobs.get(id);
    if (!job) return false;
    this.turn = this.turn.then(() => (job.open ? job.expire().catch((e: Error) => this.broke(job, e)) : undefined));
    await this.turn;
    return true;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(): void {
    if (this.closed || this.timer || this.stepMs === null || ![...this.jobs.values()].some((j) => j.open)) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.step().finally(() => this.arm());
    }, this.stepMs);
    this.timer.unref();
  }
}

/**
 * Put this text anywhere in a batch request's body and that request fails as an upstream
 * failure would (OpenAI: status 500 in the error file; Anthropic: an `errored` result with
 * `api_error`), so tests can make a line fail without making its body invalid.
 */
export const FAIL_LINE_MARKER = 'mock:fail-this-line';

/** What one of the mock's endpoint handlers answered, without an HTTP exchange. */
export interface Answer {
  status: number;
  body: any;
}

/**
 * Runs one of the mock's own endpoint handlers (chat completions, responses, embeddings,
 * messages, …) for a batch request and keeps its answer: the same body, usage and refusals a
 * direct call would get. Only whole (non-streaming) answers are asked for.
 */
export async function answerOf(handle: (c: Call) => void | Promise<void>, headers: Record<string, string>, url: string, body: Record<string, unknown>, behaviour: Behaviour, model: string, before?: (c: Call) => boolean): Promise<Answer> {
  let status = 0;
  let text = '';
  const res = {
    destroyed: false, writableEnded: false, headersSent: false,
    writeHead(s: number) { status = s; this.headersSent = true; return this; },
    setHeader() { return this; },
    flushHeaders() {},
    write(chunk: unknown) { text += String(chunk); return true; },
    end(chunk?: unknown) { if (chunk !== undefined) text += String(chunk); this.writableEnded = true; return this; },
    on() { return this; },
  };
  const req = { headers, url, socket: { destroy() {} } };
  const call: Call = { req: req as unknown as Call['req'], res: res as unknown as ServerResponse, body, behaviour, model };
  if (!before || before(call)) await handle(call);
  let parsed: unknown = text;
  try { parsed = JSON.parse(text); } catch { /* a non-JSON answer stays text */ }
  return { status: status || 500, body: parsed };
}
