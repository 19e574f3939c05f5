/**
 * The telemetry port: what the proxy reports about each call, as plain facts. The gateway
 * reports through it; `server/adapters/telemetry/` implements it with prom-client and the
 * OpenTelemetry SDK; the composition root wires one to the other. Either side may be absent
 * (METRICS=off, no OTEL_EXPORTER_OTLP_ENDPOINT): the proxy then skips the work entirely.
 */

/** Token counts of one call (the billed ones). */
export interface ObservedUsage {
  readonly prompt: number;
  readonly completion: number;
  readonly reasoning: number;
  readonly cached: number;
}


/**
 * One proxied call once it ended. The gateway's call object has these fields itself, so it is
 * passed as it is: reporting allocates nothing per call.
 */
export interface ObservedCall {
  /** The canonical `/v1/...` route. */
  readonly path: string;
  /** The status the client was answered with; 499 when it left before any answer. */
  readonly status: number;
  /** The model billed (after mapping and failover); '' when the call ended before the body was read. */
  readonly metricModel: string;
  /** The Level that served the call (or the start Level); -1 when the call ended before mapping. */
  readonly metricLevel: number;
  readonly stream: boolean;
  /** Upstream attempts made (0 for a call refused before dispatch). */
  readonly attempts: number;
  /** Milliseconds from the call's arrival to its end. */
  readonly durationMs: number;
  /** The gateway's own milliseconds: everything but waiting on upstream attempts. */
  readonly overheadMs: number;
  /** Milliseconds from arrival until the first bytes of a streamed answer went out; -1 when none did. */
  readonly firstByteMs: number;
  /** What was billed, or null when nothing was. */
  readonly usage: ObservedUsage | null;
  /** The units a call billed by its unit was charged for, by kind as its usage record keeps them (images, audio_seconds, search_units, …). */
  readonly billedUnits?: Readonly<Record<string, number>> | null;
  readonly credit: number;
}

/** How one upstream attempt ended, as a bounded label. */
export type AttemptOutcome = 'ok' | 'client_error' | 'rate_limited' | 'auth_error' | 'server_error' | 'timeout' | 'unreachable' | 'client_gone';

export interface ProxyMetrics {
  /** Once per call, when it ended. */
  callEnded(c: ObservedCall): void;
  /** Once per upstream attempt; `provider` is a GenAI provider name (bounded). */
  attemptEnded(provider: string, outcome: AttemptOutcome, seconds: number): void;
  /** A call failed because the database could not be reached. */
  databaseUnavailable(): void;
}

/** One upstream attempt, as its span starts. */
export interface AttemptStart {
  /** GenAI provider name (`openai`, `anthropic`, `azure.ai.openai`, `gcp.vertex_ai`). */
  provider: string;
  /** The model sent upstream. */
  model: string;
  keyId: number;
  level: number;
}

/** The span of one upstream attempt: its W3C context goes upstream with the request. */
export interface AttemptSpan {
  readonly traceparent: string;
  readonly tracestate: string | undefined;
  /** `status` 0 when no answer came; `error` a bounded error type, undefined on success. */
  end(status: number, error: AttemptOutcome | undefined): void;
}

/** What the call span needs to know at its start. */
export interface TracedCallStart {
  /** POST, or GET and DELETE for a stored response's reads and deletion. */
  readonly method: string;
  readonly path: string;
  readonly id: string;
  /** The client's W3C trace context headers, when it sent them. */
  readonly traceparent: string | undefined;
  readonly tracestate: string | undefined;
}

/** What the call span records when it ends, beyond ObservedCall. */
export interface TracedCallEnd extends ObservedCall {
  /** The model the client asked for. */
  readonly requestedModel: string;
  /** The GenAI provider name of the attempt that served the call; '' when none did. */
  readonly provider: string;
  /** The ID of the provider key that served the call; 0 when none did. */
  readonly keyId: number;
}

/** One realtime response once it ended (`response.done`): a span of its own under the session's. */
export interface TracedResponse {
  /** The response's usage record ID: the session's request ID and its number (`<id>.2`). */
  readonly requestId: string;
  /** The provider's response ID; '' when it sent none. */
  readonly responseId: string;
  /** The response's status as the provider reported it (`completed`, `cancelled`, `incomplete`, `failed`); '' when absent. */
  readonly status: string;
  /** The GenAI provider name of the session's upstream. */
  readonly provider: string;
  /** The model the session was asked for, and the one that served it. */
  readonly requestedModel: string;
  readonly model: string;
  readonly keyId: number;
  readonly level: number;
  /** Unix milliseconds when the response was asked for (or began), and when it ended. */
  readonly startTime: number;
  readonly endTime: number;
  /** Milliseconds from its start until its first event reached the client; -1 when none did. */
  readonly firstByteMs: number;
  readonly usage: ObservedUsage;
}
export interface CallSpan {
  startAttempt(a: AttemptStart): AttemptSpan;
  /** A realtime session's response, as a child of the session's span. */
  response(r: TracedResponse): void;
  end(c: TracedCallEnd): void;
}

export interface ProxyTracer {
  startCall(c: TracedCallStart): CallSpan;
}

/** The proxy's telemetry: each part present only when turned on. */
export interface ProxyTelemetry {
  metrics?: ProxyMetrics;
  tracer?: ProxyTracer;
  /** An `info` line per proxied call (ACCESS_LOG). */
  accessLog?: boolean;
}
