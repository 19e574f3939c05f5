import type { IncomingMessage, ServerResponse } from 'node:http';
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '@aws-crypto/sha256-js';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { mockId, sendJson, type Behaviour } from './common';
import { converse, converseInputTokens, converseProblem } from './bedrock-converse';
import { anthropicPreconditions, countedInputTokens, messages } from './anthropic';
import type { Call } from './openai';

/**
 * A Bedrock runtime (bedrock-runtime.{region}.amazonaws.com), as strict as AWS's:
 * `POST /model/{modelId}/invoke`, `/invoke-with-response-stream`, `/converse`,
 * `/converse-stream` and `/count-tokens` (Amazon Bedrock API reference, "Amazon Bedrock
 * Runtime"). Requests are signed with SigV4 (verified against the secret registered for the
 * access key) or carry a Bedrock API key as Bearer. Errors are AWS's: `{"message":"…"}` with
 * the name in `x-amzn-errortype`. Streams are AWS event-stream framed.
 */
export const BEDROCK_PATH = /\/model\/([^/]+)\/(invoke|invoke-with-response-stream|converse|converse-stream|count-tokens)$/;
const EVENT_STREAM = 'application/vnd.amazon.eventstream';
const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** Each error name with the status AWS gives it ("Common Errors" and each action's Errors section). */
const AWS_ERRORS: Record<number, string> = {
  400: 'ValidationException', 403: 'AccessDeniedException', 404: 'ResourceNotFoundException', 408: 'ModelTimeoutException',
  424: 'ModelErrorException', 429: 'ThrottlingException', 500: 'InternalServerException', 503: 'ServiceUnavailableException',
};

export function awsError(res: ServerResponse, status: number, name: string, message: string): void {
  sendJson(res, status, { message }, { 'x-amzn-errortype': `${name}:http://internal.amazon.com/coral/com.amazon.bedrock/`, 'x-amzn-requestid': mockId('req-') });
}

/** What the mock answers a Behaviour's status with. */
export function behaviourError(res: ServerResponse, status: number, echo: string): void {
  const name = AWS_ERRORS[status] ?? (status >= 500 ? 'InternalServerException' : 'ValidationException');
  const message = status === 429 ? 'Too many requests, please wait before trying again.' : `mock upstream failure (${status})`;
  awsError(res, status, name, message + echo);
}

export interface BedrockAuth {
  /** The behaviour credential: the Bearer API key, or the secret access key behind a valid signature. */
  credential: string;
}

/** `Credential=AKID/20250101/us-east-1/bedrock/aws4_request, SignedHeaders=a;b, Signature=hex` */
const SIGV4 = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/;

/**
 * The request's credential, or null once refused as AWS refuses it ("Signature Version 4
 * signing", IAM user guide; Bedrock "Troubleshooting": UnrecognizedClientException for an
 * unknown access key, InvalidSignatureException when the signature does not match, both 403).
 */
export async function bedrockAuth(req: IncomingMessage, res: ServerResponse, path: string, raw: Buffer, secrets: ReadonlyMap<string, string>): Promise<BedrockAuth | null> {
  const auth = req.headers.authorization ?? '';
  const bearer = /^Bearer\s+(\S+)$/.exec(auth);
  if (bearer) return { credential: bearer[1] };
  const m = SIGV4.exec(auth);
  if (!m) {
    awsError(res, 403, 'MissingAuthenticationTokenException', 'Missing Authentication Token');
    return null;
  }
  const [, accessKeyId, day, region, service, signedList, signature] = m;
  const secret = secrets.get(accessKeyId);
  if (!secret) {
    awsError(res, 403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
    return null;
  }
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const d = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!d || !amzDate.startsWith(day) || service !== 'bedrock') {
    awsError(res, 403, 'InvalidSignatureException', 'Credential should be scoped to correct service and date.');
    return null;
  }
  const headers: Record<string, string> = {};
  for (const name of signedList.split(';')) {
    const v = req.headers[name];
    if (v !== undefined) headers[name] = Array.isArray(v) ? v.join(',') : v;
  }
  const signer = new SignatureV4({
    service, region, sha256: Sha256,
    credentials: { accessKeyId, secretAccessKey: secret, sessionToken: headers['x-amz-security-token'] },
  });
  const signed = await signer.sign(
    { method: req.method ?? 'POST', protocol: 'http:', hostname: String(req.headers.host ?? '').split(':')[0], path, query: {}, headers, body: raw },
    { signingDate: new Date(Date.UTC(+d[1], +d[2] - 1, +d[3], +d[4], +d[5], +d[6])) },
  );
  const expected = /Signature=([0-9a-f]{64})/.exec(signed.headers.authorization ?? '')?.[1];
  if (expected !== signature) {
    // AWS's own wording, which spells the canonical request (the gateway must never relay it).
    awsError(res, 403, 'InvalidSignatureException', 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.'
      + `\n\nThe Canonical String for this request should have been\n'POST\n${path}\n\nhost:${req.headers.host}\n'\n\nThe String-to-Sign should have been\n'AWS4-HMAC-SHA256\n${amzDate}\n${day}/${region}/${service}/aws4_request'\n`);
    return null;
  }
  return { credential: secret };
}

/** An event-stream message, as AWS writes one. */
export function frame(eventType: string, payload: unknown, messageType: 'event' | 'exception' = 'event'): Uint8Array {
  const typeHeader = messageType === 'event' ? ':event-type' : ':exception-type';
  return codec.encode({
    headers: {
      ':message-type': { type: 'string', value: messageType },
      [typeHeader]: { type: 'string', value: eventType },
      ':content-type': { type: 'string', value: 'application/json' },
    },
    body: fromUtf8(JSON.stringify(payload)),
  });
}

/** InvokeModel's `chunk` event: one Anthropic event's JSON in base64, as `bytes`. */
const chunk = (json: string) => frame('chunk', { bytes: Buffer.from(json).toString('base64'), p: 'abcdefghij' });

/**
 * The Anthropic mock's answer carried the Bedrock way: a whole answer as it is, a stream's SSE
 * events as `chunk` frames, an SSE `error` event as a modelStreamErrorException, an Anthropic
 * error answer as AWS's ValidationException (or the status's own exception).
 */
function bedrockResponse(res: ServerResponse): ServerResponse {
  let status = 200;
  let streaming = false;
  let pending = '';
  const toFrames = (text: string): Buffer => {
    pending += text;
    const out: Uint8Array[] = [];
    let i: number;
    while ((i = pending.indexOf('\n\n')) !== -1) {
      const ev = pending.slice(0, i);
      pending = pending.slice(i + 2);
      const data = ev.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
      if (!data) continue;
      const doc = JSON.parse(data);
      out.push(doc?.type === 'error' ? frame('modelStreamErrorException', { message: doc.error?.message ?? 'error', originalStatusCode: 500 }, 'exception') : chunk(data));
    }
    return Buffer.concat(out);
  };
  const adapter = {
    on(ev: string, fn: () => void) { res.on(ev, fn); return adapter; },
    get destroyed() { return res.destroyed; },
    get writableEnded() { return res.writableEnded; },
    get headersSent() { return res.headersSent; },
    writeHead(s: number, headers: Record<string, string | number>) {
      status = s;
      streaming = s === 200 && String(headers['content-type']).includes('text/event-stream');
      if (streaming) res.writeHead(200, { 'content-type': EVENT_STREAM, 'x-amzn-requestid': mockId('req-') });
      else if (s === 200) res.writeHead(200, headers);
      return adapter;
    },
    flushHeaders() { res.flushHeaders(); },
    write(text: string, cb?: () => void) { return res.write(toFrames(text), cb); },
    end(text?: string) {
      if (streaming) return res.end(text ? toFrames(text) : undefined);
      if (status === 200) return res.end(text);
      let message = 'error';
      try { message = JSON.parse(text ?? '{}')?.error?.message ?? message; } catch { /* the status speaks */ }
      awsError(res, status, AWS_ERRORS[status] ?? 'ValidationException', message);
    },
  };
  return adapter as unknown as ServerResponse;
}

/** Bedrock's refusals of a Claude InvokeModel body ("Anthropic Claude Messages API", Bedrock user guide: model and stream are not body fields there, anthropic_version must be bedrock-2023-05-31). */
function claudeBodyProblem(body: Record<string, unknown>): string | null {
  for (const k of ['model', 'stream']) if (k in body) return `Malformed input request: #: extraneous key [${k}] is not permitted, please reformat your input and try again.`;
  if (body.anthropic_version === undefined) return 'Malformed input request: #: required key [anthropic_version] not found, please reformat your input and try again.';
  if (body.anthropic_version !== 'bedrock-2023-05-31') return 'Invalid API version';
  if (body.anthropic_beta !== undefined && (!Array.isArray(body.anthropic_beta) || body.anthropic_beta.some((b) => typeof b !== 'string'))) return 'Malformed input request: #/anthropic_beta: expected type: JSONArray';
  if (typeof body.max_tokens !== 'number') return 'Malformed input request: #: required key [max_tokens] not found, please reformat your input and try again.';
  return null;
}

const isClaude = (id: string) => /(^|[./])anthropic\./.test(id);

/** One Bedrock runtime request, authenticated and its behaviour applied by the caller. */
export async function bedrockCall(req: IncomingMessage, res: ServerResponse, modelId: string, action: string, body: Record<string, unknown>, b: Behaviour): Promise<void> {
  if (action === 'count-tokens') return countTokens(res, modelId, body);
  if (action === 'invoke' || action === 'invoke-with-response-stream') {
    if (!isClaude(modelId)) return awsError(res, 400, 'ValidationException', 'The provided model identifier is invalid.');
    const problem = claudeBodyProblem(body);
    if (problem) return awsError(res, 400, 'ValidationException', problem);
    const { anthropic_version: _v, anthropic_beta: _b, ...rest } = body;
    const c: Call = { req, res: bedrockResponse(res), body: action === 'invoke' ? rest : { ...rest, stream: true }, behaviour: b, model: modelId };
    // Bedrock validates the Messages body as Anthropic does (a ValidationException naming the place); the headers' part is the signature's.
    if (!anthropicPreconditions(c, true)) return;
    return messages(c);
  }
  // Converse takes any model Bedrock serves, Claude too (the gateway sends Claude through InvokeModel).
  return converse(res, modelId, body, b, action === 'converse-stream', (status, name, message) => awsError(res, status, name, message), frame, EVENT_STREAM);
}

function countTokens(res: ServerResponse, modelId: string, body: Record<string, unknown>): void {
  // CountTokens takes foundation models only, not cross-region inference profiles (Bedrock API reference, "CountTokens").
  if (!isClaude(modelId) || /^(us|eu|apac|global)\./.test(modelId)) return awsError(res, 400, 'ValidationException', `The provided model doesn't support counting tokens.`);
  const input = body.input as { invokeModel?: { body?: unknown }; converse?: Record<string, unknown> } | undefined;
  if (input?.converse !== undefined) {
    // CountTokensInput is a union; its converse member is a ConverseTokensRequest: messages, system, toolConfig, additionalModelRequestFields.
    const c = input.converse;
    const extra = Object.keys(c).find((k) => !['messages', 'system', 'toolConfig', 'additionalModelRequestFields'].includes(k));
    const problem = input.invokeModel !== undefined ? 'CountTokensInput takes one of invokeModel and converse.' : extra ? `Malformed input request: extraneous key [${extra}] is not permitted, please reformat your input and try again.` : converseProblem(c);
    if (problem) return awsError(res, 400, 'ValidationException', problem);
    return sendJson(res, 200, { inputTokens: converseInputTokens(c) });
  }
  const encoded = input?.invokeModel?.body;
  if (typeof encoded !== 'string') return awsError(res, 400, 'ValidationException', '1 validation error detected: Value null at \'input\' failed to satisfy constraint: Member must not be null');
  let doc: Record<string, unknown>;
  try { doc = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8')); } catch { return awsError(res, 400, 'ValidationException', 'Malformed input request, please reformat your input and try again.'); }
  const problem = claudeBodyProblem(doc);
  if (problem) return awsError(res, 400, 'ValidationException', problem);
  sendJson(res, 200, { inputTokens: countedInputTokens(doc) });
}
