import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { startProxyFixture, secret, sleep, type ProxyFixture } from '../../server/gateway/test-fixture';
import { rawExchange } from './support/raw-http';
import { proxyErrorProblem } from './support/envelope';
import { forEachLimited } from './support/limited';
import { fuzzPasses, replayHint, scaled } from './support/seeds';
import { anyJson, hostileString } from './support/hostile';

/**
 * Fuzzing the batch routes (OpenAI's /v1/batches, Anthropic's /v1/messages/batches) against an
 * in-process gateway in front of a healthy mock upstream: create bodies of every wrong shape
 * (files that are not the caller's, endpoints, windows; requests that are not objects, lack
 * params, mix models) and batch IDs of every shape in the path. No case may get a 5xx or an
 * error outside its API's envelope, reach a batch it does not own (never a 200 for an ID it did
 * not create), or leave a call or a reservation under way.
 */
const BODY_CASES = scaled(150);
const PATH_CASES = scaled(300);
const FILE = 'test/fuzz/batches.test.ts';

let f: ProxyFixture;
let key = '';
beforeAll(async () => {
  f = await startProxyFixture({ userMinBalance: 0, batchPollMs: 60_000 });
  // An OpenAI-compatible key only: an Anthropic batch never finds a key to run on, so nothing reaches a provider.
  await f.addKey(1, secret('fuzz-batches'));
  key = (await f.account({ level: 1, credit: 1000 })).key;
}, 180_000);
afterAll(async () => { await f?.close(); });

const openaiBody = fc.oneof(
  fc.record({
    input_file_id: fc.oneof(fc.constantFrom('file-abc', '', '../x', 'file-%00', 'a'.repeat(300)), hostileString, anyJson),
    endpoint: fc.oneof(fc.constantFrom('/v1/chat/completions', '/v1/embeddings', '/v1/moderations', '/v1/batches', ''), anyJson),
    completion_window: fc.oneof(fc.constantFrom('24h', '1h', ''), anyJson),
  }, { requiredKeys: [] }),
  anyJson,
);

const messageParams = fc.oneof(
  fc.record({ model: fc.oneof(fc.constantFrom('claude-test-1', 'claude-other', '', 'a\nb'), anyJson), max_tokens: fc.oneof(fc.nat(), anyJson), messages: anyJson }, { requiredKeys: [] }),
  anyJson,
);
const anthropicBody = fc.oneof(
  fc.record({ requests: fc.oneof(fc.array(fc.oneof(fc.record({ custom_id: fc.oneof(hostileString, anyJson), params: messageParams }, { requiredKeys: [] }), anyJson), { maxLength: 5 }), anyJson) }, { requiredKeys: [] }),
  anyJson,
);

const bodyArb = fc.oneof(
  fc.record({ path: fc.constantFrom('/v1/batches', '/batches'), anthropic: fc.constant(false), body: openaiBody.map((b) => JSON.stringify(b) ?? 'null') }),
  fc.record({ path: fc.constantFrom('/v1/messages/batches', '/messages/batches'), anthropic: fc.constant(true), body: anthropicBody.map((b) => JSON.stringify(b) ?? 'null') }),
  fc.record({ path: fc.constantFrom('/v1/batches', '/v1/messages/batches'), anthropic: fc.boolean(), body: fc.constantFrom('', '{', '[', '"x"', '{"requests":' + '['.repeat(5000)) }),
).map((c) => ({ ...c, anthropic: c.path.includes('messages') }));

/** A batch ID as a path segment: real-looking, encoded bytes, traversal, unicode, very long. */
const idArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('batch_abc123', 'msgbatch_abc', '%00', '..', '%2E%2E', '..%2F..%2Fetc%2Fpasswd', '%E2%9C%93', '%FF%FE', 'batch_x%0D%0Ax-injected:1', '%25', '~', 'a'.repeat(201), 'x'.repeat(9000), '%2F', "batch'\"<>"),
  fc.string({ maxLength: 40 }).map(encodeURIComponent).filter((s) => s.length > 0),
  fc.uint8Array({ minLength: 1, maxLength: 30 }).map((b) => [...b].map((x) => `%${x.toString(16).padStart(2, '0')}`).join('')),
);

const pathArb = fc.record({
  route: fc.constantFrom<[method: string, prefix: string, suffix: string]>(
    ['GET', '/v1/batches/', ''], ['POST', '/v1/batches/', '/cancel'], ['GET', '/batches/', ''],
    ['GET', '/v1/messages/batches/', ''], ['GET', '/v1/messages/batches/', '/results'], ['POST', '/v1/messages/batches/', '/cancel'], ['DELETE', '/v1/messages/batches/', ''],
  ),
  id: idArb,
});

describe.each(fuzzPasses())('batches fuzz ($label seed $seed)', ({ seed }) => {
  it(`answers ${BODY_CASES} create bodies and ${PATH_CASES} reads by ID without a 5xx, an error outside the envelope or another's batch`, async () => {
    const problems: string[] = [];
    const port = Number(new URL(f.gw.url).port);
    const judge = (what: string, status: number, body: Buffer, anthropic: boolean) => {
      if (status >= 500) problems.push(`${what}: ${status} ${body.toString().slice(0, 200)}`);
      else if (status >= 400) {
        const p = proxyErrorProblem(body.toString(), anthropic);
        if (p) problems.push(`${what}: ${status} ${p}`);
      }
    };
    const bodies = fc.sample(bodyArb, { seed, numRuns: BODY_CASES });
    await forEachLimited(bodies, 4, async (c) => {
      const body = Buffer.from(c.body);
      // fixed-date: anthropic-version names an API version, not a time.
      const head = `POST ${c.path} HTTP/1.1\r\nhost: fuzz\r\nauthorization: Bearer ${key}\r\nx-api-key: ${key}\r\nanthropic-version: 2023-06-01\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`;
      const outcome = await rawExchange(port, [head, body], { responses: 1, waitMs: 5_000 });
      const what = `POST ${c.path} ${c.body.slice(0, 300)}`;
      for (const r of outcome.responses) {
        judge(what, r.status, r.body, c.anthropic);
        // No file of this account exists and no key runs Anthropic batches: nothing may be created.
        if (r.status < 300) problems.push(`${what}: ${r.status} created a batch`);
      }
    });
    const paths = fc.sample(pathArb, { seed: seed ^ 0x5a5a, numRuns: PATH_CASES });
    await forEachLimited(paths, 8, async (c) => {
      const [method, prefix, suffix] = c.route;
      const target = `${prefix}${c.id}${suffix}`;
      const outcome = await rawExchange(port, [`${method} ${target} HTTP/1.1\r\nhost: fuzz\r\nauthorization: Bearer ${key}\r\nx-api-key: ${key}\r\ncontent-length: 0\r\n\r\n`], { responses: 1, waitMs: 5_000 });
      const r = outcome.responses[0];
      if (!r) return;
      judge(`${method} ${target.slice(0, 200)}`, r.status, r.body, prefix.includes('messages'));
      if (r.status === 200) problems.push(`${method} ${target.slice(0, 200)}: 200 for a batch never created`);
    });
    for (const q of ['?limit=0', '?limit=abc', '?after=%00', '?after_id=x&before_id=y', '?limit=99999999999999999999']) {
      for (const p of ['/v1/batches', '/v1/messages/batches']) {
        const outcome = await rawExchange(port, [`GET ${p}${q} HTTP/1.1\r\nhost: fuzz\r\nauthorization: Bearer ${key}\r\nx-api-key: ${key}\r\n\r\n`], { responses: 1, waitMs: 5_000 });
        for (const r of outcome.responses) judge(`GET ${p}${q}`, r.status, r.body, p.includes('messages'));
      }
    }
    for (let i = 0; i < 100 && f.gw.gateway.proxy.inFlight > 0; i++) await sleep(50);
    expect(problems, replayHint(seed, FILE)).toEqual([]);
    expect(f.gw.gateway.proxy.inFlight).toBe(0);
    expect(f.gw.gateway.proxy.admission.open).toBe(0);
    expect((await fetch(`${f.gw.url}/healthz`)).status).toBe(200);
  }, 300_000);
});
