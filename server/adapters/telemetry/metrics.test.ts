import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hello, secret, startProxyFixture, type ProxyFixture } from '../../gateway/test-fixture';
import { metricsAccess } from './access';

/** One sample line of the exposition: name, labels, value. */
interface Sample { name: string; labels: Record<string, string>; value: number }

function parse(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`unparsable line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

/** Sum of the samples of `name` whose labels include `where`. */
const sum = (samples: Sample[], name: string, where: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);

let f: ProxyFixture;
const TOKEN = 'metrics-token-0123456789';
beforeAll(async () => {
  f = await startProxyFixture({ maxAttemptsPerLevel: 2, keyFailureThreshold: 1000 });
});
afterAll(async () => { await f?.close(); });

async function scrape(): Promise<{ status: number; text: string; type: string | null }> {
  const r = await fetch(`${f.gw.url}/metrics`);
  return { status: r.status, text: await r.text(), type: r.headers.get('content-type') };
}

describe('GET /metrics', () => {
  it('counts a mixed load exactly: successes, 4xx, an upstream failure, a stream; tokens and credit as billed', async () => {
    await f.addKey(1, secret('metrics-ok'));
    const failing = secret('metrics-503');
    await f.addKey(2, failing);
    f.mock.behave(failing, { status: 503 });
    const ok = await f.account({ level: 1 });
    const broken = await f.account({ level: 2 });
    const before = parse((await scrape()).text);
    const chat = (key: string | null, body: unknown) => f.gw.as(key).post('/v1/chat/completions', body);

    for (let i = 0; i < 3; i++) expect((await chat(ok.key, { model: 'gpt-4o-mini', messages: hello })).status).toBe(200);
    const stream = await f.openai(ok.key).chat.completions.create({ model: 'gpt-4o-mini', messages: hello, stream: true });
    for await (const _ of stream) { /* drained */ }
    expect((await chat('sk-not-a-key-at-all-000000', { model: 'gpt-4o-mini', messages: hello })).status).toBe(401);
    expect((await chat(null, { model: 'gpt-4o-mini', messages: hello })).status).toBe(401);
    expect((await chat(ok.key, { messages: hello })).status).toBe(400);
    expect((await chat(broken.key, { model: 'gpt-4o-mini', messages: hello })).status).toBe(502);
    const embedded = await f.gw.as(ok.key).post('/v1/embeddings', { model: 'text-embedding-3-small', input: 'hi' });
    expect(embedded.status).toBe(200);

    const usage = await f.usage(ok.id);
    const page = await scrape();
    expect(page.status).toBe(200);
    expect(page.type).toContain('text/plain');
    const after = parse(page.text);
    const delta = (name: string, where: Record<string, string> = {}) => sum(after, name, where) - sum(before, name, where);
    const requests = 'switchyard_proxy_requests_total';
    const chatRoute = { route: '/v1/chat/completions' };
    expect(delta(requests, { ...chatRoute, status_class: '2xx', model: 'gpt-4o-mini', level: '1' })).toBe(4);
    expect(delta(requests, { route: '/v1/embeddings', status_class: '2xx', model: 'text-embedding-3-small', level: '1' })).toBe(1);
    // Refused before the body was read: no model, no Level.
    expect(delta(requests, { ...chatRoute, status_class: '4xx', model: 'none', level: 'none' })).toBe(3);
    expect(delta(requests, { ...chatRoute, status_class: '5xx', model: 'gpt-4o-mini', level: '2' })).toBe(1);
    expect(delta(requests)).toBe(9);
    // Every call is in the duration and overhead histograms, once.
    expect(delta('switchyard_proxy_request_duration_seconds_count')).toBe(9);
    expect(delta('switchyard_proxy_request_duration_seconds_count', { ...chatRoute, status_class: '4xx' })).toBe(3);
    expect(delta('switchyard_proxy_overhead_seconds_count')).toBe(9);
    expect(delta('switchyard_proxy_time_to_first_token_seconds_count', { model: 'gpt-4o-mini' })).toBe(1);
    // Upstream attempts: five answered, one 503 (one key on Level 2).
    expect(delta('switchyard_upstream_request_duration_seconds_count', { provider: 'openai', outcome: 'ok' })).toBe(5);
    expect(delta('switchyard_upstream_request_duration_seconds_count', { provider: 'openai', outcome: 'server_error' })).toBe(1);
    // Tokens and credit: what the usage records say was billed.
    const total = (k: 'prompt' | 'completion' | 'credit_used', model: string) => usage.filter((u) => u.model === model).reduce((a, u) => a + u[k], 0);
    for (const model of ['gpt-4o-mini', 'text-embedding-3-small']) {
      expect(delta('switchyard_tokens_total', { type: 'input', model })).toBe(total('prompt', model));
      expect(delta('switchyard_tokens_total', { type: 'output', model })).toBe(total('completion', model));
      expect(delta('switchyard_credit_used_total', { model })).toBeCloseTo(total('credit_used', model), 9);
    }
    expect(total('prompt', 'gpt-4o-mini')).toBeGreaterThan(0);
    // Gauges: both keys in rotation (the failing one has not reached its threshold), the usage written.
    expect(sum(after, 'switchyard_provider_keys', { state: 'healthy' }) + sum(after, 'switchyard_provider_keys', { state: 'failing' })).toBe(2);
    expect(sum(after, 'switchyard_usage_buffered_events')).toBe(0);
    expect(sum(after, 'switchyard_usage_flush_duration_seconds_count')).toBeGreaterThan(0);
    expect(sum(after, 'switchyard_proxy_requests_in_flight')).toBe(0);
    // Bounded labels: no account ID, API key or provider key anywhere in the page.
    for (const s of [ok.key, broken.key, failing]) expect(page.text).not.toContain(s);
    expect(page.text).not.toMatch(/account=|key_id=|api_key=/);
    // Process metrics of prom-client come along.
    expect(page.text).toContain('process_cpu_seconds_total');
    // Without REDIS_URL there is no Redis to be up or down.
    expect(page.text).not.toContain('switchyard_redis_up');
  });

  it('names each metric once with HELP and TYPE, in Prometheus units', async () => {
    const { text } = await scrape();
    const types = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]);
    const ours = types.filter(([n]) => n.startsWith('switchyard_'));
    expect(new Set(ours.map(([n]) => n)).size).toBe(ours.length);
    for (const [name, type] of ours) {
      if (type === 'counter') expect(name).toMatch(/_total$/);
      if (type === 'histogram' || type === 'summary') expect(name).toMatch(/_seconds$/);
    }
    expect(ours.map(([n]) => n)).toEqual(expect.arrayContaining([
      'switchyard_proxy_requests_total', 'switchyard_proxy_request_duration_seconds', 'switchyard_upstream_request_duration_seconds',
      'switchyard_proxy_time_to_first_token_seconds', 'switchyard_proxy_overhead_seconds', 'switchyard_tokens_total', 'switchyard_credit_used_total',
      'switchyard_provider_keys', 'switchyard_level_switched_over', 'switchyard_usage_buffered_events', 'switchyard_usage_flush_duration_seconds',
      'switchyard_database_errors_total', 'switchyard_redis_errors_total',
    ]));
  });
});

describe('who may read /metrics', () => {
  it('open on loopback without a token; METRICS_TOKEN asks for it as a bearer token', async () => {
    const { startTestGateway } = await import('../../testing/gateway');
    const gw = await startTestGateway({ metricsToken: TOKEN, databaseUrl: 'memory://' });
    try {
      const none = await fetch(`${gw.url}/metrics`);
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toContain('Bearer');
      expect((await none.json()).error.code).toBe('unauthorized');
      expect((await fetch(`${gw.url}/metrics`, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
      const good = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(good.status).toBe(200);
      expect(await good.text()).toContain('switchyard_proxy_requests_total');
    } finally {
      await gw.close();
    }
  });

  it('METRICS=off: no /metrics at all', async () => {
    const { startTestGateway } = await import('../../testing/gateway');
    const gw = await startTestGateway({ metrics: 'off', databaseUrl: 'memory://' });
    try {
      expect((await fetch(`${gw.url}/metrics`)).status).toBe(404);
      expect(gw.gateway.telemetry.metrics).toBeUndefined();
    } finally {
      await gw.close();
    }
  });

  it('refused on a non-loopback listener without a token, unless METRICS=open', () => {
    expect(metricsAccess({ metrics: 'on', loopback: false }, undefined)).toMatchObject({ ok: false, status: 403 });
    expect(metricsAccess({ metrics: 'open', loopback: false }, undefined)).toEqual({ ok: true });
    expect(metricsAccess({ metrics: 'on', loopback: true }, undefined)).toEqual({ ok: true });
    expect(metricsAccess({ metrics: 'open', loopback: true, token: TOKEN }, undefined)).toMatchObject({ ok: false, status: 401 });
    expect(metricsAccess({ metrics: 'on', loopback: false, token: TOKEN }, `Bearer ${TOKEN}`)).toEqual({ ok: true });
  });
});
