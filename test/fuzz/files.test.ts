import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { startProxyFixture, secret, sleep, type ProxyFixture } from '../../server/gateway/test-fixture';
import { rawExchange, type RawPiece } from './support/raw-http';
import { proxyErrorProblem } from './support/envelope';
import { forEachLimited } from './support/limited';
import { fuzzPasses, replayHint, scaled } from './support/seeds';

/**
 * Fuzzing the Files API (POST /v1/files and the reads by ID) against an in-process gateway in
 * front of a healthy mock upstream: broken multipart framing, purposes, JSONL lines that are not
 * JSON, lack a field or name another model, and file IDs of every shape in the path. No case may
 * get a 5xx or an error outside the envelope, or leave a call under way.
 */
const UPLOAD_CASES = scaled(150);
const PATH_CASES = scaled(300);
const FILE = 'test/fuzz/files.test.ts';
const FILE_LIMIT = 256 * 1024;

let f: ProxyFixture;
let key = '';
beforeAll(async () => {
  f = await startProxyFixture({ userMinBalance: 0, maxFileBytes: FILE_LIMIT });
  await f.addKey(1, secret('fuzz-files'));
  key = (await f.account({ level: 1, credit: 1000 })).key;
}, 180_000);
afterAll(async () => { await f?.close(); });

const good = (i: number, model = 'gpt-4o-mini') => JSON.stringify({ custom_id: `c${i}`, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content: 'hi' }] } });

/** A JSONL line: valid, or broken in one of the ways clients break them. */
const lineArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.nat(1000).map((i) => good(i)) },
  fc.constantFrom(good(1, 'gpt-4o'), good(2, '../etc'), good(3, ''), '', '   ', '{', '[]', 'null', '"x"', '{"custom_id":"a","method":"GET","url":"/v1/chat/completions","body":{"model":"gpt-4o-mini"}}',
    '{"custom_id":"a","method":"POST","url":"/v1/images/generations","body":{"model":"gpt-4o-mini"}}', '{"custom_id":"a","method":"POST","url":"/v1/embeddings","body":{"model":"gpt-4o-mini","input":"x"}}',
    '{"custom_id":1,"method":"POST","url":"/v1/chat/completions","body":{}}', '\u0000\u0001', '{"custom_id":"ü✓","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o-mini","max_tokens":-1,"n":1e308}}'),
  fc.string({ maxLength: 60 }),
  fc.json({ maxDepth: 3 }),
);

type Part = { name: string; value: string } | { name: string; filename: string; lines: string[]; newline: string };

const partArb: fc.Arbitrary<Part> = fc.oneof(
  fc.record({ name: fc.constantFrom('purpose', 'purpose', 'expires_after[anchor]', 'model', 'x"y', ''), value: fc.constantFrom('batch', 'batch', 'user_data', 'vision', 'assistants', 'fine-tune', '', '../x', 'created_at') }),
  fc.record({ name: fc.constantFrom('file', 'file', 'file', 'files', 'document'), filename: fc.constantFrom('a.jsonl', 'b.txt', '', '../../x.jsonl', 'ü.jsonl'), lines: fc.array(lineArb, { maxLength: 12 }), newline: fc.constantFrom('\n', '\r\n', '') }),
);

const uploadArb = fc.record({
  path: fc.constantFrom('/v1/files', '/files'),
  parts: fc.array(partArb, { maxLength: 5 }),
  boundary: fc.constantFrom('b0undary', 'x'.repeat(70), 'a b', '--'),
  fault: fc.constantFrom('none', 'none', 'none', 'none', 'wrong-boundary', 'cut', 'short-length', 'no-type', 'json-type', 'garbage', 'over-limit', 'declared-over', 'chunked'),
});

function uploadPieces(c: { path: string; parts: Part[]; boundary: string; fault: string }): RawPiece[] {
  const bodyBoundary = c.fault === 'wrong-boundary' ? 'other' : c.boundary;
  const chunks: Buffer[] = [];
  for (const p of c.parts) {
    if ('value' in p) chunks.push(Buffer.from(`--${bodyBoundary}\r\nContent-Disposition: form-data; name="${p.name}"\r\n\r\n${p.value}\r\n`));
    else chunks.push(Buffer.from(`--${bodyBoundary}\r\nContent-Disposition: form-data; name="${p.name}"; filename="${p.filename}"\r\nContent-Type: application/jsonl\r\n\r\n${p.lines.join(p.newline || '\n')}${p.newline}\r\n`));
  }
  chunks.push(Buffer.from(`--${bodyBoundary}--\r\n`));
  let body = Buffer.concat(chunks);
  if (c.fault === 'garbage') body = Buffer.from(body.toString('latin1').split('').reverse().join(''), 'latin1');
  if (c.fault === 'over-limit') body = Buffer.concat([body.subarray(0, body.length >> 1), Buffer.alloc(FILE_LIMIT + 10, 0x0a), body.subarray(body.length >> 1)]);
  const type = c.fault === 'no-type' ? '' : c.fault === 'json-type' ? 'content-type: application/json\r\n' : `content-type: multipart/form-data; boundary=${c.boundary}\r\n`;
  const head = `POST ${c.path} HTTP/1.1\r\nhost: fuzz\r\nauthorization: Bearer ${key}\r\n${type}`;
  if (c.fault === 'chunked') return [`${head}transfer-encoding: chunked\r\n\r\n`, Buffer.from(`${body.length.toString(16)}\r\n`), body, '\r\n0\r\n\r\n'];
  if (c.fault === 'declared-over') return [`${head}content-length: ${FILE_LIMIT + 1}\r\n\r\n`, body.subarray(0, 100)];
  const length = c.fault === 'short-length' ? body.length + 50 : body.length;
  if (c.fault === 'cut') return [`${head}content-length: ${length}\r\n\r\n`, body.subarray(0, body.length >> 1)];
  return [`${head}content-length: ${length}\r\n\r\n`, body];
}

/** A file ID as a path segment: real-looking, empty-ish, encoded bytes, traversal, unicode, very long. */
const idArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('file-abc123', '%00', '..', '%2E%2E', '..%2F..%2Fetc%2Fpasswd', '%E2%9C%93', '%FF%FE', 'file-x%0D%0Ax-injected:1', '%25', '~', 'a'.repeat(201), 'x'.repeat(9000), '%2F', 'file%20id', "file'\"<>"),
  fc.string({ maxLength: 40 }).map(encodeURIComponent).filter((s) => s.length > 0),
  fc.uint8Array({ minLength: 1, maxLength: 30 }).map((b) => [...b].map((x) => `%${x.toString(16).padStart(2, '0')}`).join('')),
);

const pathArb = fc.record({
  method: fc.constantFrom('GET', 'DELETE'),
  prefix: fc.constantFrom('/v1/files/', '/files/'),
  id: idArb,
  suffix: fc.constantFrom('', '', '/content'),
  query: fc.constantFrom('', '?limit=0', '?after=%00', '?order=x', '?limit=99999999999999999999'),
});

describe.each(fuzzPasses())('files fuzz ($label seed $seed)', ({ seed }) => {
  it(`answers ${UPLOAD_CASES} uploads and ${PATH_CASES} reads by ID without a 5xx or an error outside the envelope`, async () => {
    const problems: string[] = [];
    const port = Number(new URL(f.gw.url).port);
    const judge = (what: string, status: number, body: Buffer) => {
      if (status >= 500) problems.push(`${what}: ${status} ${body.toString().slice(0, 200)}`);
      else if (status >= 400) {
        const p = proxyErrorProblem(body.toString(), false);
        if (p) problems.push(`${what}: ${status} ${p}`);
      }
    };
    const uploads = fc.sample(uploadArb, { seed, numRuns: UPLOAD_CASES });
    await forEachLimited(uploads, 4, async (c) => {
      const outcome = await rawExchange(port, uploadPieces(c), { responses: 1, waitMs: c.fault === 'cut' || c.fault === 'short-length' ? 300 : 5_000 });
      const what = `POST ${c.path} ${c.fault} ${JSON.stringify(c.parts).slice(0, 300)}`;
      for (const r of outcome.responses) judge(what, r.status, r.body);
      if ((c.fault === 'over-limit' || c.fault === 'declared-over') && outcome.responses[0] && outcome.responses[0].status !== 413) {
        problems.push(`${what}: ${outcome.responses[0].status} instead of 413`);
      }
    });
    // Reads by ID: the list, too, with broken queries.
    const paths = fc.sample(pathArb, { seed: seed ^ 0x5a5a, numRuns: PATH_CASES });
    await forEachLimited(paths, 8, async (c) => {
      const target = `${c.prefix}${c.id}${c.suffix}${c.query}`;
      const outcome = await rawExchange(port, [`${c.method} ${target} HTTP/1.1\r\nhost: fuzz\r\nauthorization: Bearer ${key}\r\n\r\n`], { responses: 1, waitMs: 5_000 });
      const r = outcome.responses[0];
      if (!r) return;
      judge(`${c.method} ${target.slice(0, 200)}`, r.status, r.body);
      // No ID the gateway never handed out is anything but the 404 (uWS itself answers what it cannot route).
      if (r.status === 200) problems.push(`${c.method} ${target.slice(0, 200)}: 200 for a file never uploaded`);
    });
    for (const q of ['?limit=0', '?order=x', '?after=%00', '?limit=abc', '?purpose=%FF']) {
      const outcome = await rawExchange(port, [`GET /v1/files${q} HTTP/1.1\r\nhost: fuzz\r\nauthorization: Bearer ${key}\r\n\r\n`], { responses: 1, waitMs: 5_000 });
      for (const r of outcome.responses) judge(`GET /v1/files${q}`, r.status, r.body);
    }
    for (let i = 0; i < 100 && f.gw.gateway.proxy.inFlight > 0; i++) await sleep(50);
    expect(problems, replayHint(seed, FILE)).toEqual([]);
    expect(f.gw.gateway.proxy.inFlight).toBe(0);
    expect((await fetch(`${f.gw.url}/healthz`)).status).toBe(200);
  }, 300_000);
});
