import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { hello, keyedUser, secret, startProxyFixture, type ProxyFixture } from '../../gateway/test-fixture';

/** A span as the OTLP/HTTP JSON export carries it, its attributes flattened. */
interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  status: number;
  attributes: Record<string, string | number | boolean>;
  service: string;
}

/** A real OTLP/HTTP receiver: decodes what the exporter POSTs to /v1/traces (JSON encoding). */
class OtlpReceiver {
  spans: ReceivedSpan[] = [];
  requests: { path: string; contentType: string }[] = [];
  private server!: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.requests.push({ path: req.url ?? '', contentType: String(req.headers['content-type']) });
        const doc = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport;
        for (const rs of doc.resourceSpans ?? []) {
          const service = String(flatten(rs.resource?.attributes)['service.name']);
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              this.spans.push({
                traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '', name: s.name, kind: s.kind,
                status: s.status?.code ?? 0, attributes: flatten(s.attributes), service,
              });
            }
          }
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

interface OtlpValue { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean }
interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: OtlpValue }[] };
    scopeSpans?: { spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; status?: { code?: number }; attributes?: { key: string; value: OtlpValue }[] }[] }[];
  }[];
}

function flatten(attrs: { key: string; value: OtlpValue }[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of attrs ?? []) {
    out[key] = value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : undefined) ?? value.doubleValue ?? value.boolValue ?? '';
  }
  return out;
}

const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;

let receiver: OtlpReceiver;
let f: ProxyFixture;
beforeAll(async () => {
  receiver = new OtlpReceiver();
  await receiver.start();
  // Circuits that never open: the failing model must fail over on every call of the test.
  f = await startProxyFixture({ otelExporterOtlpEndpoint: receiver.url, otelServiceName: 'switchyard-test', keyFailureThreshold: 1000 });
  await f.config({ MODEL_FAILOVER: 'gpt-4o=gpt-4o-mini' });
});
afterAll(async () => {
  await f?.close();
  await receiver?.close();
});

/** Sends what the exporter holds and waits until the receiver has `n` spans of the trace. */
async function spansOf(traceId: string, n: number): Promise<ReceivedSpan[]> {
  await f.gw.gateway.telemetry.tracer!.flush();
  for (let i = 0; i < 50; i++) {
    const got = receiver.spans.filter((s) => s.traceId === traceId);
    if (got.length >= n) return got;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`trace ${traceId}: ${receiver.spans.filter((s) => s.traceId === traceId).length} spans of ${n}`);
}

describe('OpenTelemetry traces over OTLP/HTTP', () => {
  it('a streamed call: a SERVER span under the client traceparent, one CLIENT attempt span, its context sent upstream', async () => {
    const upstream = secret('otel-stream');
    await f.addKey(1, upstream);
    const user = await f.account({ level: 1 });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const clientSpan = '00f067aa0ba902b7';
    const r = await fetch(`${f.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json', traceparent: `00-${traceId}-${clientSpan}-01`, tracestate: 'vendor=abc' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: hello, stream: true }),
    });
    expect(r.status).toBe(200);
    const text = await r.text();
    expect(text).toContain('[DONE]');
    const requestId = r.headers.get('x-request-id')!;
    const [usage] = await f.usage(user.id);

    const spans = await spansOf(traceId, 2);
    const call = spans.find((s) => s.kind === SERVER)!;
    const attempt = spans.find((s) => s.kind === CLIENT)!;
    expect(spans).toHaveLength(2);
    expect(call.parentSpanId).toBe(clientSpan);
    expect(attempt.parentSpanId).toBe(call.spanId);
    expect(call.service).toBe('switchyard-test');
    expect(call.name).toBe('chat gpt-4o-mini');
    expect(call.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-4o-mini', 'gen_ai.response.model': 'gpt-4o-mini',
      'gen_ai.usage.input_tokens': usage.prompt, 'gen_ai.usage.output_tokens': usage.completion,
      'http.request.method': 'POST', 'http.route': '/v1/chat/completions', 'http.response.status_code': 200,
      'switchyard.request_id': requestId, 'switchyard.attempts': 1, 'switchyard.level': 1,
    });
    expect(usage.completion).toBeGreaterThan(0);
    expect(call.status).not.toBe(ERROR);
    expect(attempt.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-4o-mini', 'http.response.status_code': 200 });
    expect(attempt.attributes['error.type']).toBeUndefined();
    // The upstream got the attempt span's context: the client's trace continues there.
    const sent = f.mock.requests.filter((q) => q.credential === upstream).at(-1)!;
    expect(sent.headers.traceparent).toBe(`00-${traceId}-${attempt.spanId}-01`);
    expect(sent.headers.tracestate).toBe('vendor=abc');
    // Exported as OTLP/HTTP JSON to <endpoint>/v1/traces; no upstream host or key in any span.
    expect(receiver.requests.every((q) => q.path === '/v1/traces' && q.contentType.includes('application/json'))).toBe(true);
    const all = JSON.stringify(spans);
    expect(all).not.toContain(f.mock.url.replace('http://', ''));
    expect(all).not.toContain(upstream);
    expect(all).not.toContain(user.key);
  });

  it('a failed-over call: one child per attempt, the failed one in error, the call served by the fallback model', async () => {
    const upstream = secret('otel-failover');
    await f.addKey(5, upstream);
    f.mock.behave(upstream, { status: 503, onlyModels: ['gpt-4o'] });
    const user = await f.account({ level: 5 });
    const r = await f.gw.as(user.key).post('/v1/chat/completions', { model: 'gpt-4o', messages: hello });
    expect(r.status, r.text).toBe(200);
    const requestId = r.headers.get('x-request-id')!;
    await f.gw.gateway.telemetry.tracer!.flush();
    let call: ReceivedSpan | undefined;
    for (let i = 0; i < 50 && !call; i++) {
      call = receiver.spans.find((s) => s.attributes['switchyard.request_id'] === requestId);
      if (!call) await new Promise((res) => setTimeout(res, 50));
    }
    expect(call).toBeDefined();
    // No traceparent from the client: a new trace, the call span its root.
    expect(call!.parentSpanId).toBe('');
    const spans = await spansOf(call!.traceId, 3);
    const attempts = spans.filter((s) => s.kind === CLIENT);
    expect(attempts).toHaveLength(2);
    expect(attempts.every((a) => a.parentSpanId === call!.spanId)).toBe(true);
    const [failed, served] = attempts.sort((a, b) => (a.attributes['gen_ai.request.model'] === 'gpt-4o' ? -1 : b.attributes['gen_ai.request.model'] === 'gpt-4o' ? 1 : 0));
    expect(failed.attributes).toMatchObject({ 'gen_ai.request.model': 'gpt-4o', 'http.response.status_code': 503, 'error.type': 'server_error' });
    expect(failed.status).toBe(ERROR);
    expect(served.attributes).toMatchObject({ 'gen_ai.request.model': 'gpt-4o-mini', 'http.response.status_code': 200 });
    expect(served.status).not.toBe(ERROR);
    expect(call!.attributes).toMatchObject({
      'gen_ai.request.model': 'gpt-4o', 'gen_ai.response.model': 'gpt-4o-mini', 'switchyard.attempts': 2, 'http.response.status_code': 200,
    });
    // Each attempt went upstream with its own span as parent.
    const sent = f.mock.requests.filter((q) => q.credential === upstream).slice(-2).map((q) => q.headers.traceparent);
    expect(sent.sort()).toEqual(attempts.map((a) => `00-${call!.traceId}-${a.spanId}-01`).sort());
  });

  it('a realtime session: its SERVER span, and one CLIENT child per response with its model, usage and record ID', async () => {
    const { user, level } = await keyedUser(f, 'otel-realtime');
    const traceId = '5cf92f3577b34da6a3ce929d0e0e4737';
    const ws = new WebSocket(`${f.gw.url.replace('http', 'ws')}/v1/realtime?model=gpt-realtime`, {
      headers: { authorization: `Bearer ${user.key}`, traceparent: `00-${traceId}-00f067aa0ba902b8-01` },
    });
    await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
    const dones: any[] = [];
    ws.on('message', (m) => {
      const e = JSON.parse(m.toString());
      if (e.type === 'response.done') dones.push(e.response);
    });
    for (let n = 1; n <= 2; n++) {
      ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: Buffer.alloc(3200, 1).toString('base64') }));
      ws.send(JSON.stringify({ type: 'response.create' }));
      for (let i = 0; i < 200 && dones.length < n; i++) await new Promise((r) => setTimeout(r, 10));
    }
    expect(dones).toHaveLength(2);
    ws.close();
    await new Promise((r) => ws.once('close', r));
    const rows = await f.usage(user.id);
    expect(rows).toHaveLength(2);

    const spans = await spansOf(traceId, 3);
    expect(spans).toHaveLength(3);
    const session = spans.find((s) => s.kind === SERVER)!;
    const responses = spans.filter((s) => s.kind === CLIENT).sort((a, b) => String(a.attributes['switchyard.request_id']).localeCompare(String(b.attributes['switchyard.request_id'])));
    expect(session.attributes).toMatchObject({ 'http.route': '/v1/realtime', 'gen_ai.request.model': 'gpt-realtime' });
    const sessionId = session.attributes['switchyard.request_id'];
    responses.forEach((r, i) => {
      expect(dones[i].id).toMatch(/\S/);
      expect(r.parentSpanId).toBe(session.spanId);
      expect(r.name).toBe('chat gpt-realtime');
      expect(r.status).not.toBe(ERROR);
      expect(r.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-realtime', 'gen_ai.response.model': 'gpt-realtime',
        'gen_ai.response.id': dones[i].id, 'gen_ai.usage.input_tokens': rows[i].prompt, 'gen_ai.usage.output_tokens': rows[i].completion,
        'switchyard.request_id': `${sessionId}.${i + 1}`, 'switchyard.level': level,
      });
    });
    expect(rows[0].prompt + rows[0].completion).toBeGreaterThan(0);
    expect(JSON.stringify(spans)).not.toContain(user.key);
  });

  it('a call the upstream fails on every key: the call span in error with the status', async () => {
    const upstream = secret('otel-dead');
    await f.addKey(7, upstream);
    f.mock.behave(upstream, { status: 500 });
    const user = await f.account({ level: 7 });
    const r = await f.gw.as(user.key).post('/v1/chat/completions', { model: 'gpt-4o-mini', messages: hello });
    expect(r.status).toBe(502);
    const requestId = r.headers.get('x-request-id')!;
    await f.gw.gateway.telemetry.tracer!.flush();
    let call: ReceivedSpan | undefined;
    for (let i = 0; i < 50 && !call; i++) {
      call = receiver.spans.find((s) => s.attributes['switchyard.request_id'] === requestId);
      if (!call) await new Promise((res) => setTimeout(res, 50));
    }
    expect(call!.status).toBe(ERROR);
    expect(call!.attributes).toMatchObject({ 'http.response.status_code': 502, 'error.type': '502', 'switchyard.attempts': 1 });
    expect(call!.attributes['gen_ai.response.model']).toBeUndefined();
  });
});
