import { afterAll, describe, it } from 'vitest';
import fc from 'fast-check';
import { Pool } from 'undici';
import { sql } from 'drizzle-orm';
import { startMockUpstream, type MockUpstream } from '../../server/testing/mock-upstream';
import { ChildGateway, MAX_BODY_BYTES, SHUTDOWN_GRACE_MS, provision } from './proxy/child';
import { proxyCases, tagCase, isBadModel, modelFault, type ProxyCase } from './proxy/cases';
import { framingCases, type FramingCase } from './proxy/framing';
import { fromUws, judgeCase, judgeFraming, type HttpAnswer } from './proxy/judge';
import { rawExchange } from './support/raw-http';
import { Findings } from './support/findings';
import { forEachLimited } from './support/limited';
import { fuzzPasses, replayHint, scaled } from './support/seeds';

/**
 * AI proxy fuzzing against a child-process gateway in front of the mock upstream (kept
 * healthy: no 5xx is expected at all): bodies, headers and callers over kept connections
 * with undici, request framing over raw sockets. Afterwards the gateway must be alive and
 * healthy, must not have forwarded what it had to refuse, must stop promptly on SIGTERM (no
 * call left counted as under way), and must have recorded usage for exactly the 2xx answers.
 */

const HTTP_CASES = scaled(850);
const RAW_CASES = scaled(150);
const CONCURRENCY = 8;
/** How long an incomplete request may keep the server waiting before the case ends (counted apart). */
const MAY_WAIT_MS = 800;
/** How long an answer may take where one is due. */
const ANSWER_WAIT_MS = 3_000;
const FILE = 'test/fuzz/proxy.test.ts';
const UPSTREAM_SECRET = 'sk-up-proxy-fuzz-0123456789abcdef';

type Item = { kind: 'http'; c: ProxyCase } | { kind: 'raw'; c: FramingCase };

describe.each(fuzzPasses())('AI proxy fuzz ($label seed $seed)', ({ seed }) => {
  let mock: MockUpstream | undefined;
  let gw: ChildGateway | undefined;
  afterAll(async () => {
    await gw?.dispose();
    await mock?.close();
  });

  it(`answers ${HTTP_CASES + RAW_CASES} generated calls without a 5xx, a crash, a leak to the provider or a stuck shutdown`, async () => {
    mock = await startMockUpstream();
    gw = await ChildGateway.start();
    const g = gw;
    const keys = await provision(g, mock.url, UPSTREAM_SECRET);
    const logTotal = async () => (await (await fetch(`${g.url}/dashboard/logs?size=1`, { headers: { authorization: `Bearer ${keys.root}` } })).json()).total as number;
    const logsBefore = await logTotal();
    // Fuzzing a gateway that cannot serve one valid call would only list that failure a thousand times.
    const preflight = await fetch(`${g.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${keys.funded}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ready?' }], fuzz_case: 'health' }),
    });
    const preflightText = await preflight.text();
    if (preflight.status !== 200) throw new Error(`the gateway does not serve a valid call (${preflight.status} ${preflightText.slice(0, 200)}); not fuzzing.\n${g.server.stderr().slice(-1500)}`);

    const http = fc.sample(proxyCases(keys), { seed, numRuns: HTTP_CASES }).map((c, i) => tagCase(c, `${seed}-h${i}`));
    const raw = fc.sample(framingCases({ key: keys.funded, maxBody: MAX_BODY_BYTES }), { seed: seed ^ 0x5f5f, numRuns: RAW_CASES }).map((make, i) => make(`${seed}-r${i}`));
    // Framing cases spread through the run, so they meet a busy gateway.
    const items: Item[] = [];
    const every = Math.max(1, Math.floor(http.length / Math.max(1, raw.length)));
    let r = 0;
    http.forEach((c, i) => {
      items.push({ kind: 'http', c: { ...c, index: items.length } as ProxyCase });
      if (i % every === every - 1 && r < raw.length) items.push({ kind: 'raw', c: { ...raw[r++], index: items.length } });
    });
    while (r < raw.length) items.push({ kind: 'raw', c: { ...raw[r++], index: items.length } });

    /** uWS's own pages, by case and status: documented answers, printed for the record. */
    const uwsPages = new Map<string, number>();
    const findings = new Findings(`AI proxy fuzz (${items.length} calls)`, seed, replayHint(seed, FILE));
    const byTag = new Map<string, Item>();
    for (const it of items) if (it.c.tag) byTag.set(it.c.tag, it);
    let answered2xx = 1; // the preflight call
    let waited = 0;
    let lostToCrash = 0;
    const pools = new Map<string, Pool>();
    const pool = () => {
      let p = pools.get(g.url);
      // uWS closes a silent connection after about 11 s: past 15 s nothing more will come.
      if (!p) pools.set(g.url, (p = new Pool(g.url, { connections: CONCURRENCY, headersTimeout: 15_000, bodyTimeout: 15_000 })));
      return p;
    };

    /** True when the gateway died while the case was under way (its exit event may trail the socket errors a little). */
    const crashed = async (before: number, failed: boolean) => {
      if (failed && g.alive && g.exits.length === before) await new Promise((res) => setTimeout(res, 300));
      return g.exits.length > before || (failed && !g.alive);
    };

    await forEachLimited(items, CONCURRENCY, async (item) => {
      await g.ready();
      const crashesBefore = g.exits.length;
      const done = g.track(`#${item.c.index} ${item.c.note ?? ''} ${item.c.path}`);
      try {
        if (item.kind === 'http') {
          const answer = await sendHttp(pool(), item.c);
          if (await crashed(crashesBefore, 'error' in answer)) { lostToCrash++; return; }
          if (!('error' in answer) && answer.status >= 200 && answer.status < 300) answered2xx++;
          for (const f of judgeCase(item.c, answer)) findings.add(f);
        } else {
          const c = item.c;
          const outcome = await rawExchange(g.port, c.pieces, { responses: c.responses, methods: c.methods, waitMs: c.abandon ? 0 : c.expect === 'may-wait' ? MAY_WAIT_MS : ANSWER_WAIT_MS });
          if (await crashed(crashesBefore, outcome.ending === 'refused' || (outcome.ending !== 'answered' && !outcome.responses.length))) { lostToCrash++; return; }
          // Proxied calls only: a pipelined GET /healthz records no usage.
          answered2xx += outcome.responses.filter((x) => x.status >= 200).filter((x, i) => x.status < 300 && c.methods[i] === 'POST').length;
          const verdict = judgeFraming(c, outcome);
          if (verdict.waited) waited++;
          for (const f of verdict.findings) findings.add(f);
          for (const x of outcome.responses) if (fromUws(x)) uwsPages.set(`${c.note} → ${x.status}`, (uwsPages.get(`${c.note} → ${x.status}`) ?? 0) + 1);
        }
      } finally {
        done();
      }
    });
    for (const p of pools.values()) await p.close();

    for (const e of g.exits) {
      findings.add({ key: 'the gateway process died', detail: `exit code ${e.code}, signal ${e.signal}; output: ${e.stderr.replace(/\s+/g, ' ').slice(-700)}\n      under way, then the last finished:\n        ${e.underWay.join('\n        ')}` });
    }

    // Healthy afterwards: alive, live, and a valid call still goes through.
    await g.ready();
    const health = await fetch(`${g.url}/healthz`).catch((e) => ({ status: `error ${e}` }));
    if (health.status !== 200) findings.add({ key: 'unhealthy after the run', detail: `/healthz: ${health.status}` });
    const checkPool = new Pool(g.url, { connections: 1 });
    const check = await sendHttp(checkPool, {
      index: -1, method: 'POST', path: '/v1/chat/completions', endpoint: 'chat', expect: 'ok', stream: false, tag: 'health', why: null,
      headers: ['authorization', `Bearer ${keys.funded}`, 'content-type', 'application/json'],
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'still there?' }], fuzz_case: 'health' }),
    });
    await checkPool.close();
    if ('error' in check || check.status !== 200) findings.add({ key: 'a valid call fails after the run', detail: 'error' in check ? check.error : `${check.status} ${check.text.slice(0, 200)}` });
    else answered2xx++;

    // Nothing that had to be refused reached the provider; no unusable model name did.
    for (const rec of mock.requests) {
      const text = typeof rec.body === 'string' ? rec.body : JSON.stringify(rec.body);
      // A translated Messages call carries its tag as the chat request's `user` (cases.ts).
      const tag = (/"fuzz_case":"([^"]+)"/.exec(text) ?? /"user":"([^"]+)"/.exec(text))?.[1];
      const item = tag ? byTag.get(tag) : undefined;
      const model = typeof rec.body === 'object' && rec.body !== null ? (rec.body as { model?: unknown }).model : undefined;
      if (tag === 'health') continue;
      if (!item) findings.add({ key: 'the provider got a body the fuzzer cannot trace (not a JSON object?)', detail: `${rec.method} ${rec.path}: ${text.slice(0, 160)}` });
      else if (item.kind === 'http' && item.c.expect === 'refused') findings.add({ key: `forwarded to the provider although it must be refused (${item.c.why})`, detail: 'the mock upstream received it', request: item.c, where: `POST ${item.c.path}` });
      else if (item && model !== undefined && isBadModel(model)) findings.add({ key: `forwarded to the provider although it must be refused (${modelFault(model)})`, detail: `model ${shown(model)}`, request: item.c });
    }

    if (g.alive) {
      const logsAfter = await logTotal();
      if (logsAfter !== logsBefore) findings.add({ key: 'proxy calls wrote to the operation log', detail: `${logsBefore} entries before, ${logsAfter} after (no upstream failed, so none is due)` });
    }

    // SIGTERM finishes at once when nothing is under way: a call counted as in flight forever would hold it for the whole grace.
    const stop = await g.stop();
    if (stop.code !== 0) findings.add({ key: 'SIGTERM exit code', detail: `exited with ${stop.code}` });
    if (stop.ms > 5_000) findings.add({ key: 'SIGTERM waited for calls that were no longer under way', detail: `stopping took ${stop.ms} ms (SHUTDOWN_GRACE_MS ${SHUTDOWN_GRACE_MS}): the in-flight count did not return to zero` });

    // Usage: one record per 2xx answer, written by the SIGTERM flush; no unusable model stored.
    const database = await g.openDatabase();
    try {
      const [{ n }] = await database.rows<{ n: number }>(sql`select count(*)::int as n from usage_records`);
      if (g.exits.length) console.log(`usage check skipped: the gateway crashed ${g.exits.length}× and lost its buffered usage`);
      else if (n !== answered2xx) findings.add({ key: 'usage records do not match the 2xx answers', detail: `${n} usage records for ${answered2xx} answers with a 2xx status` });
      const models = await database.rows<{ model: string }>(sql`select distinct model from usage_records`);
      for (const m of models) if (isBadModel(m.model)) findings.add({ key: `stored in usage_records although it must be refused (${modelFault(m.model)})`, detail: `model ${shown(m.model)}` });
    } finally {
      await database.close();
    }

    console.log(`proxy fuzz: ${items.length} calls (${http.length} over undici, ${raw.length} raw framing), ${answered2xx} answered 2xx, ${waited} ended in a bounded wait (incomplete requests), ${lostToCrash} lost to a crash; SIGTERM took ${stop.ms} ms`);
    if (uwsPages.size) console.log(`proxy fuzz: answers uWS gave itself (docs/decisions.md):\n  ${[...uwsPages].map(([k, n]) => `${k} ×${n}`).join('\n  ')}`);
    findings.assertNone();
  }, 600_000);
});

/** JSON, with the invisible control characters JSON leaves raw (DEL, C1) escaped too. */
function shown(v: unknown): string {
  return (JSON.stringify(v) ?? String(v)).replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).slice(0, 80);
}

async function sendHttp(pool: Pool, c: ProxyCase): Promise<HttpAnswer | { error: string }> {
  for (let attempt = 0; ; attempt++) {
    const t0 = Date.now();
    try {
      const res = await pool.request({ method: 'POST', path: c.path, headers: c.headers, body: c.body });
      const text = await res.body.text();
      const ct = res.headers['content-type'];
      return { status: res.statusCode, contentType: Array.isArray(ct) ? ct[0] : ct ?? '', text };
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.code === 'UND_ERR_INVALID_ARG') throw new Error(`the fuzzer made a request undici will not send (#${c.index}): ${e.message}`);
      // A kept connection the server closed just before fails at once: send once more on a fresh one.
      if (attempt === 0 && Date.now() - t0 < 1000 && ['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE'].includes(e.code ?? '')) continue;
      if (e.code === 'UND_ERR_SOCKET' || e.code === 'ECONNRESET') return { error: `${e.code}: closed after ${Date.now() - t0} ms` };
      return { error: `${e.code ?? e.name}: ${e.message}` };
    }
  }
}
