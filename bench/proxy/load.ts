import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { Pool } from 'undici';

/** One system under test: where to send an OpenAI-format chat completion, and with which headers. */
export interface Target {
  name: string;
  /** Full URL of the chat completions endpoint. */
  url: string;
  headers: Record<string, string>;
  /** The process serving it, whose CPU time is measured per request (Linux only). */
  pid?: number;
  /** Request bodies in another client format (bench:formats); the OpenAI-format BODIES otherwise. */
  bodies?: Record<Workload, string>;
  /** Where streamed calls go when the format names streaming in the path (Gemini's `:streamGenerateContent`). */
  streamUrl?: string;
}

const urlOf = (t: Target, w: Workload) => (w === 'stream' && t.streamUrl ? t.streamUrl : t.url);

export type Workload = 'whole' | 'stream';

const MESSAGES = [{ role: 'user', content: 'Say hello in five words.' }];
export const BODIES: Record<Workload, string> = {
  whole: JSON.stringify({ model: 'gpt-4o-mini', messages: MESSAGES, max_tokens: 16 }),
  stream: JSON.stringify({ model: 'gpt-4o-mini', messages: MESSAGES, max_tokens: 16, stream: true, stream_options: { include_usage: true } }),
};

export interface Throughput {
  rps: number;
  p50: number;
  p99: number;
  /** Non-2xx answers plus connection errors and timeouts. */
  failures: number;
  statuses: string;
  /** Requests answered, and the CPU time the target's process spent meanwhile (µs, all threads). */
  requests: number;
  cpuUs?: number;
}

export interface Latency {
  count: number;
  p50: number;
  p99: number;
  failures: number;
}

/** Raw timings of one concurrency-1 run, merged across rounds before percentiles are taken. */
export interface Timings {
  samples: number[];
  failures: number;
}

/**
 * One real request of each workload, checked for a usable answer, so a target that answers
 * 404 or a broken stream is reported as such instead of being "fast". Returns the problem or null.
 */
export async function validate(t: Target, w: Workload): Promise<string | null> {
  let res: Response;
  try {
    res = await fetch(t.url, { method: 'POST', headers: { 'content-type': 'application/json', ...t.headers }, body: BODIES[w] });
  } catch (err) {
    return `request failed: ${(err as Error).message}`;
  }
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    return `HTTP ${res.status}, then the body broke off: ${(err as Error).message}`;
  }
  if (res.status < 200 || res.status > 299) return `HTTP ${res.status}: ${text.slice(0, 300)}`;
  if (w === 'whole') {
    try {
      const body = JSON.parse(text) as { choices?: { message?: { content?: unknown } }[] };
      if (typeof body.choices?.[0]?.message?.content !== 'string') return `no choices[0].message.content in ${text.slice(0, 200)}`;
    } catch {
      return `not JSON: ${text.slice(0, 200)}`;
    }
    return null;
  }
  const events = text.split('\n').filter((l) => l.startsWith('data: '));
  if (events[events.length - 1] !== 'data: [DONE]') return `stream did not end with [DONE]: ${text.slice(-200)}`;
  const deltas = events.filter((l) => l.includes('"content"')).length;
  if (deltas < 3) return `stream had ${deltas} content chunks, expected 3: ${text.slice(0, 300)}`;
  return null;
}

/** Throughput at `connections` concurrent keep-alive connections, for `seconds`. */
export async function throughput(t: Target, w: Workload, seconds: number, connections: number): Promise<Throughput> {
  const cpu0 = t.pid === undefined ? undefined : cpuMicros(t.pid);
  const r = await autocannon({
    url: urlOf(t, w), method: 'POST', headers: { 'content-type': 'application/json', ...t.headers }, body: (t.bodies ?? BODIES)[w],
    connections, duration: seconds, timeout: 10,
  });
  const statuses = Object.entries(r.statusCodeStats ?? {}).map(([code, s]) => `${code}×${s.count}`).join(' ');
  const cpu1 = t.pid === undefined ? undefined : cpuMicros(t.pid);
  return {
    rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, failures: r.non2xx + r.errors + r.timeouts, statuses,
    requests: r.requests.total, cpuUs: cpu0 !== undefined && cpu1 !== undefined ? cpu1 - cpu0 : undefined,
  };
}

/** Clock ticks per second of /proc's CPU times: 100 on every Linux build in use. */
const TICKS_PER_SECOND = 100;

/**
 * The CPU time (user + system, every thread) a process has used so far, in µs; undefined where
 * /proc is not there. Throughput on shared cores moves with whatever else runs; the CPU a
 * target spends per request moves much less, so the two are reported side by side.
 */
export function cpuMicros(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After "pid (name) ", utime and stime (fields 14 and 15 of proc(5)) are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/**
 * Sequential requests on one keep-alive connection, timed with the high-resolution clock
 * (autocannon's latency histogram is whole milliseconds: too coarse for sub-millisecond overhead).
 */
export async function timingsAtOne(t: Target, w: Workload, seconds: number): Promise<Timings> {
  const u = new URL(urlOf(t, w));
  const pool = new Pool(u.origin, { connections: 1, pipelining: 1 });
  const headers = { 'content-type': 'application/json', ...t.headers };
  const samples: number[] = [];
  let failures = 0;
  const end = Date.now() + seconds * 1000;
  try {
    while (Date.now() < end) {
      const t0 = process.hrtime.bigint();
      const res = await pool.request({ path: u.pathname + u.search, method: 'POST', headers, body: (t.bodies ?? BODIES)[w] });
      await res.body.text();
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (res.statusCode >= 200 && res.statusCode < 300) samples.push(ms);
      else failures++;
    }
  } finally {
    await pool.close();
  }
  return { samples, failures };
}

export function latencyOf(runs: Timings[]): Latency {
  const samples = runs.flatMap((r) => r.samples).sort((a, b) => a - b);
  const pct = (p: number) => (samples.length ? samples[Math.min(samples.length - 1, Math.floor(p * samples.length))] : NaN);
  return { count: samples.length, p50: pct(0.5), p99: pct(0.99), failures: runs.reduce((n, r) => n + r.failures, 0) };
}

/** Rounds of one workload combined: mean req/s, request-weighted latency percentiles, summed failures. */
export function combine(runs: Throughput[]): Throughput {
  const weight = runs.reduce((n, r) => n + r.rps, 0) || 1;
  const statuses = new Map<string, number>();
  for (const r of runs) {
    for (const part of r.statuses.split(' ').filter(Boolean)) {
      const [code, count] = part.split('×');
      statuses.set(code, (statuses.get(code) ?? 0) + Number(count));
    }
  }
  return {
    rps: runs.reduce((n, r) => n + r.rps, 0) / runs.length,
    p50: runs.reduce((n, r) => n + r.p50 * r.rps, 0) / weight,
    p99: runs.reduce((n, r) => n + r.p99 * r.rps, 0) / weight,
    failures: runs.reduce((n, r) => n + r.failures, 0),
    statuses: [...statuses].map(([c, n]) => `${c}×${n}`).join(' '),
    requests: runs.reduce((n, r) => n + r.requests, 0),
    cpuUs: runs.every((r) => r.cpuUs !== undefined) ? runs.reduce((n, r) => n + r.cpuUs!, 0) : undefined,
  };
}
