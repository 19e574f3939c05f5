/**
 * `npm run bench:realtime`: realtime sessions and uploads through Switchyard, run as its own
 * process against the mock upstream in this one.
 *
 * 1. SESSIONS (256 by default) concurrent realtime sessions; each appends 20 ms audio frames
 *    while the upstream streams FRAMES audio deltas 20 ms apart. The gaps between deltas as
 *    the client receives them, p50 and p99, through Switchyard and straight to the upstream,
 *    and their ratio.
 * 2. UPLOADS (100) concurrent 5 MB transcription uploads (file before model: spooled, then
 *    streamed): Switchyard's peak resident memory over its idle one, against the bytes uploaded.
 */
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { spawnServer } from '../server/testing/spawn';
import { startMockUpstream } from '../server/testing/mock-upstream';
import { generateAccountKey } from '../server/adapters/security/crypto';
import { fileBytes, multipartBody } from '../server/testing/multipart';

const SESSIONS = Number(process.env.SESSIONS ?? 256);
const FRAMES = Number(process.env.FRAMES ?? 50);
const UPLOADS = Number(process.env.UPLOADS ?? 100);
const UPLOAD_MB = Number(process.env.UPLOAD_MB ?? 5);
const FRAME_MS = 20;

const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};
const mb = (b: number) => (b / 1024 / 1024).toFixed(1);

/** One session: audio frames out every 20 ms, one response of FRAMES deltas in; the gaps between deltas. */
function session(url: string, headers: Record<string, string>): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, perMessageDeflate: false });
    const gaps: number[] = [];
    let last = 0;
    let sender: NodeJS.Timeout | undefined;
    const frame = JSON.stringify({ type: 'input_audio_buffer.append', audio: Buffer.alloc(960, 1).toString('base64') });
    ws.on('open', () => {
      sender = setInterval(() => ws.send(frame), FRAME_MS);
      ws.send(JSON.stringify({ type: 'response.create' }));
    });
    ws.on('message', (data) => {
      const s = data.toString();
      if (s.includes('"response.output_audio.delta"')) {
        const now = performance.now();
        if (last) gaps.push(now - last);
        last = now;
      } else if (s.includes('"response.done"')) {
        clearInterval(sender);
        ws.close();
      }
    });
    ws.on('close', () => { clearInterval(sender); resolve(gaps); });
    ws.on('error', (err) => { clearInterval(sender); reject(err); });
  });
}

async function sessions(url: string, headers: Record<string, string>): Promise<number[]> {
  const all = await Promise.all(Array.from({ length: SESSIONS }, () => session(url, headers)));
  return all.flat();
}

async function main(): Promise<void> {
  const mock = await startMockUpstream();
  const rootKey = generateAccountKey();
  const server = await spawnServer({ DATABASE_URL: 'memory://', ROOT_KEY: rootKey, LOG_LEVEL: 'warn', MASTER_KEY: 'switchyard-bench-master-key-0123', ACCESS_LOG: 'off' }, 120_000);
  try {
    const upstreamKey = 'sk-bench-realtime-upstream-0001';
    const created = await fetch(`${server.url}/x-keys`, {
      method: 'POST', headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ Level: 1, Provider: mock.url, SecretKey: upstreamKey, Status: true }),
    });
    if (created.status !== 201) throw new Error(`add key: ${created.status}`);
    mock.behave(upstreamKey, { chunks: FRAMES, chunkDelayMs: FRAME_MS });

    const direct = await sessions(`${mock.url.replace('http', 'ws')}/v1/realtime?model=gpt-realtime`, { authorization: `Bearer ${upstreamKey}` });
    const via = await sessions(`${server.url.replace('http', 'ws')}/v1/realtime?model=gpt-realtime`, { authorization: `Bearer ${rootKey}` });
    const d99 = pct(direct, 99);
    const v99 = pct(via, 99);
    console.log(`realtime: ${SESSIONS} sessions × ${FRAMES} audio deltas ${FRAME_MS} ms apart`);
    console.log(`  frame gap direct      p50 ${pct(direct, 50).toFixed(1)} ms  p99 ${d99.toFixed(1)} ms`);
    console.log(`  frame gap switchyard  p50 ${pct(via, 50).toFixed(1)} ms  p99 ${v99.toFixed(1)} ms`);
    console.log(`  p99 ratio switchyard/direct: ${(v99 / d99).toFixed(2)}`);

    const pid = server.child.pid!;
    const audio = fileBytes(UPLOAD_MB * 1024 * 1024);
    const form = multipartBody([{ name: 'file', filename: 'bench.mp3', data: audio }, { name: 'model', value: 'whisper-1' }]);
    const { type } = form;
    const body = new Uint8Array(form.body);
    const base = rssOf(pid);
    let peak = base;
    const sampler = setInterval(() => { peak = Math.max(peak, rssOf(pid)); }, 10);
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: UPLOADS }, () => fetch(`${server.url}/v1/audio/transcriptions`, {
      method: 'POST', headers: { authorization: `Bearer ${rootKey}`, 'content-type': type }, body,
    }).then(async (r) => { await r.arrayBuffer(); return r.status; })));
    clearInterval(sampler);
    const ok = answers.filter((s) => s === 200).length;
    const total = UPLOADS * body.length;
    console.log(`uploads: ${UPLOADS} concurrent × ${UPLOAD_MB} MB transcriptions, ${ok} answered 200 in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    console.log(`  switchyard RSS idle ${mb(base)} MB, peak ${mb(peak)} MB: +${mb(peak - base)} MB for ${mb(total)} MB uploaded (ratio ${((peak - base) / total).toFixed(3)})`);
  } finally {
    await server.stop('SIGTERM');
    await mock.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
