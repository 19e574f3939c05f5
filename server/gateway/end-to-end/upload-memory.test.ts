import { afterAll, beforeAll, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { spawnServer, type RunningServer } from '../../testing/spawn';
import { startMockUpstream, type MockUpstream } from '../../testing/mock-upstream';
import { generateAccountKey } from '../../adapters/security/crypto';
import { fileBytes, multipartBody, sha256 } from '../../testing/multipart';
import type { ReceivedFile } from '../../testing/mock-upstream/uploads';
import { secret } from '../test-fixture';

/**
 * A 20 MB audio upload through Switchyard running as its own process, its resident memory read
 * from /proc while the file passes: the upload is spooled (the model comes after the file, as
 * the openai SDK sends it) and streamed upstream, never held whole.
 */
let mock: MockUpstream;
let server: RunningServer | undefined;
const rootKey = generateAccountKey();

beforeAll(async () => {
  mock = await startMockUpstream();
  server = await spawnServer({ DATABASE_URL: 'memory://', ROOT_KEY: rootKey, LOG_LEVEL: 'warn', MASTER_KEY: 'switchyard-upload-master-key-0123' }, 120_000);
  const created = await fetch(`${server.url}/x-keys`, {
    method: 'POST', headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ Level: 1, Provider: mock.url, SecretKey: secret('memory'), Status: true }),
  });
  expect(created.status).toBe(201);
}, 180_000);

afterAll(async () => {
  if (server && server.child.exitCode === null) await server.stop('SIGKILL');
  await mock?.close();
});

const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

function transcribe(size: number) {
  const audio = fileBytes(size);
  const { body, type } = multipartBody([{ name: 'file', filename: 'long.mp3', data: audio }, { name: 'model', value: 'whisper-1' }]);
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < body.length; i += 256 * 1024) c.enqueue(body.subarray(i, i + 256 * 1024));
      c.close();
    },
  });
  const answer = fetch(`${server!.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${rootKey}`, 'content-type': type }, body: stream, duplex: 'half' } as RequestInit);
  return { audio, answer };
}

it('transcribes a 20 MB file while the gateway\'s resident memory grows by less than 10 MB', async () => {
  const pid = server!.child.pid!;
  // Warm: the upload path's code and buffers in place before measuring.
  expect((await transcribe(2 * 1024 * 1024).answer).status).toBe(200);
  const base = rssOf(pid);
  let peak = base;
  const sampler = setInterval(() => { peak = Math.max(peak, rssOf(pid)); }, 5);
  const { audio, answer } = transcribe(20 * 1024 * 1024);
  const r = await answer;
  expect(r.status).toBe(200);
  expect((await r.json()).text).toContain(`${audio.length} bytes`);
  clearInterval(sampler);
  expect((mock.requests.at(-1)!.body as { files: ReceivedFile[] }).files[0].sha256).toBe(sha256(audio));
  expect(peak - base).toBeLessThan(10 * 1024 * 1024);
}, 120_000);
