/**
 * OpenTelemetry traces of proxied calls, exported over OTLP/HTTP (JSON) in batches: one span
 * per call (kind SERVER, a child of the client's W3C trace context when it sent one) and one
 * child span per upstream attempt (kind CLIENT), whose context goes upstream as `traceparent`;
 * a realtime session's span has one child per response (kind CLIENT: a generation the provider
 * ran over the session's socket), written when the response ended with its own start and end.
 * Attributes follow the GenAI semantic conventions (gen_ai.*) and HTTP's; the upstream's host
 * is never recorded, nor any key or body. Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set.
 */
import { defaultTextMapGetter, diag, DiagLogLevel, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { Logger } from '../../core/log';
import type { AttemptOutcome, AttemptSpan, AttemptStart, CallSpan, ProxyTracer, TracedCallEnd, TracedCallStart, TracedResponse } from '../../core/telemetry';

export interface TracingOptions {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL; spans go to `<endpoint>/v1/traces`. */
  endpoint: string;
  /** OTEL_SERVICE_NAME. */
  serviceName: string;
  log: Pick<Logger, 'warn'>;
  /** Export delay; unset, the SDK's (OTEL_BSP_SCHEDULE_DELAY, 5 s by default). */
  exportDelayMs?: number;
}

/** `<endpoint>/v1/traces`, as the OTLP exporter specification builds it from the base endpoint. */
export const tracesUrl = (endpoint: string) => `${endpoint.replace(/\/+$/, '')}/v1/traces`;

const propagator = new W3CTraceContextPropagator();

/** gen_ai.operation.name of a proxy route (Gemini's `:embedContent` and `:batchEmbedContents` are embeddings too). */
const operationOf = (path: string) => (path === '/v1/embeddings' || /:(?:batchE|e)mbedContents?$/.test(path) ? 'embeddings' : 'chat');

export class OtlpTracer implements ProxyTracer {
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;

  constructor(opts: TracingOptions) {
    // The SDK reports export failures through its diagnostics: once per failure, at warn.
    diag.setLogger({
      error: (message) => opts.log.warn('otel_export_problem', { message: String(message) }),
      warn: (message) => opts.log.warn('otel_export_problem', { message: String(message) }),
      info: () => undefined, debug: () => undefined, verbose: () => undefined,
    }, DiagLogLevel.WARN);
    const exporter = new OTLPTraceExporter({ url: tracesUrl(opts.endpoint) });
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: opts.serviceName }),
      spanProcessors: [new BatchSpanProcessor(exporter, opts.exportDelayMs !== undefined ? { scheduledDelayMillis: opts.exportDelayMs } : {})],
    });
    this.tracer = this.provider.getTracer('switchyard');
  }

  startCall(c: TracedCallStart): CallSpan {
    const parent = c.traceparent !== undefined
      ? propagator.extract(ROOT_CONTEXT, { traceparent: c.traceparent, tracestate: c.tracestate }, defaultTextMapGetter)
      : ROOT_CONTEXT;
    const operation = operationOf(c.path);
    const span = this.tracer.startSpan(operation, {
      kind: SpanKind.SERVER,
      attributes: { 'gen_ai.operation.name': operation, 'http.request.method': c.method, 'http.route': c.path, 'switchyard.request_id': c.id },
    }, parent);
    return new OtlpCallSpan(this.tracer, span, operation);
  }

  /** Sends what is still queued and stops (shutdown). */
  async close(): Promise<void> {
    await this.provider.shutdown();
  }

  /** Sends what is queued now. */
  async flush(): Promise<void> {
    await this.provider.forceFlush();
  }
}

class OtlpCallSpan implements CallSpan {
  constructor(private readonly tracer: Tracer, private readonly span: Span, private readonly operation: string) {}

  startAttempt(a: AttemptStart): AttemptSpan {
    const span = this.tracer.startSpan(`${this.operation} ${a.model}`, {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': this.operation, 'gen_ai.provider.name': a.provider, 'gen_ai.request.model': a.model,
        'switchyard.key_id': a.keyId, 'switchyard.level': a.level,
      },
    }, trace.setSpan(ROOT_CONTEXT, this.span));
    return new OtlpAttemptSpan(span);
  }

  response(r: TracedResponse): void {
    const attributes: Attributes = {
      'gen_ai.operation.name': this.operation, 'gen_ai.provider.name': r.provider,
      'gen_ai.request.model': r.requestedModel, 'gen_ai.response.model': r.model,
      'gen_ai.usage.input_tokens': r.usage.prompt, 'gen_ai.usage.output_tokens': r.usage.completion,
      'switchyard.request_id': r.requestId, 'switchyard.key_id': r.keyId, 'switchyard.level': r.level,
    };
    if (r.responseId) attributes['gen_ai.response.id'] = r.responseId;
    if (r.status) attributes['gen_ai.response.finish_reasons'] = [r.status];
    if (r.firstByteMs >= 0) attributes['switchyard.first_byte_ms'] = Math.round(r.firstByteMs * 100) / 100;
    const span = this.tracer.startSpan(`${this.operation} ${r.requestedModel}`, { kind: SpanKind.CLIENT, attributes, startTime: r.startTime }, trace.setSpan(ROOT_CONTEXT, this.span));
    if (r.status === 'failed') {
      span.setAttribute('error.type', 'response_failed');
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end(r.endTime);
  }

  end(c: TracedCallEnd): void {
    const span = this.span;
    if (c.requestedModel) span.updateName(`${this.operation} ${c.requestedModel}`);
    const attributes: Attributes = {
      'http.response.status_code': c.status,
      'switchyard.attempts': c.attempts,
      'switchyard.overhead_ms': Math.round(c.overheadMs * 100) / 100,
    };
    if (c.requestedModel) attributes['gen_ai.request.model'] = c.requestedModel;
    if (c.metricLevel >= 0) attributes['switchyard.level'] = c.metricLevel;
    if (c.keyId !== 0) {
      attributes['gen_ai.provider.name'] = c.provider;
      attributes['gen_ai.response.model'] = c.metricModel;
      attributes['switchyard.key_id'] = c.keyId;
    }
    if (c.usage) {
      attributes['gen_ai.usage.input_tokens'] = c.usage.prompt;
      attributes['gen_ai.usage.output_tokens'] = c.usage.completion;
    }
    if (c.status >= 400) attributes['error.type'] = String(c.status);
    span.setAttributes(attributes);
    // A server span is in error for 5xx only: a 4xx is the client's (HTTP semantic conventions).
    if (c.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  }
}

class OtlpAttemptSpan implements AttemptSpan {
  readonly traceparent: string;
  readonly tracestate: string | undefined;

  constructor(private readonly span: Span) {
    const ctx = span.spanContext();
    this.traceparent = `00-${ctx.traceId}-${ctx.spanId}-${(ctx.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
    this.tracestate = ctx.traceState?.serialize() || undefined;
  }

  end(status: number, error: AttemptOutcome | undefined): void {
    if (status > 0) this.span.setAttribute('http.response.status_code', status);
    if (error !== undefined) {
      this.span.setAttribute('error.type', error);
      this.span.setStatus({ code: SpanStatusCode.ERROR });
    }
    this.span.end();
  }
}
