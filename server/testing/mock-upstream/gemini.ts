import { createHmac } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerText, estimateTokens, mockId, playStream, sendJson, splitText, type Behaviour, type Frame, type Usage } from './common';

/**
 * Google's Gemini API (generativelanguage.googleapis.com) as strict as Google:
 * `/v1beta/models/{model}:{method}` for generateContent, streamGenerateContent (`?alt=sse`),
 * countTokens, embedContent and batchEmbedContents, with the API key in `x-goog-api-key`.
 * It refuses what Google refuses, in Google's error shape `{"error":{"code","message","status"}}`
 * (https://ai.google.dev/api/rest and https://cloud.google.com/apis/design/errors).
 */
export const GEMINI_PATH = /\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens|embedContent|batchEmbedContents)$/;

const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED',
};

export function geminiError(res: ServerResponse, code: number, message: string, details?: unknown[], headers: Record<string, string> = {}): void {
  sendJson(res, code, { error: { code, message, status: STATUS[code] ?? 'UNKNOWN', ...(details ? { details } : {}) } }, headers);
}

/**
 * A behaviour's failure as Google answers it. A refused key (`status: 401`) is what Google
 * sends for an invalid API key: 400 INVALID_ARGUMENT with the reason API_KEY_INVALID in its
 * ErrorInfo (Google answers no 401 to an API key).
 */
export function geminiBehaviourError(res: ServerResponse, status: number, echo: string, retryAfter?: number): void {
  if (status === 401) {
    return geminiError(res, 400, `API key not valid. Please pass a valid API key.${echo}`, [
      { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } },
    ]);
  }
  if (status === 429) return geminiError(res, 429, `Resource has been exhausted (e.g. check quota).${echo}`, undefined, retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {});
  return geminiError(res, status, `mock upstream failure (${status})${echo}`);
}

/**
 * The API key of a Gemini call, or why it is refused. Google also reads `?key=`, but a key in a
 * URL reaches access logs: the gateway must send it as `x-goog-api-key`, so this mock refuses
 * a key in the query (stricter than Google, on purpose).
 */
export function geminiKeyOf(res: ServerResponse, headers: Record<string, string>, query: URLSearchParams): string | null {
  if (query.has('key')) {
    geminiError(res, 400, 'The API key was sent in the URL (?key=); this mock accepts it only in the x-goog-api-key header');
    return null;
  }
  const key = headers['x-goog-api-key'];
  if (!key) {
    // Google's answer to a call without a key (https://ai.google.dev/gemini-api/docs/troubleshooting).
    geminiError(res, 403, 'Method doesn\'t allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.');
    return null;
  }
  return key;
}

// ---- strict bodies ----------------------------------------------------------------------------

// The fields of each message of the API reference (https://ai.google.dev/api/generate-content,
// https://ai.google.dev/api/caching#Content, https://ai.google.dev/api/caching#Tool). Google
// parses the body against these messages and refuses any other name:
// `Invalid JSON payload received. Unknown name "x" at 'path': Cannot find field.`
const GENERATE = ['contents', 'tools', 'toolConfig', 'safetySettings', 'systemInstruction', 'generationConfig', 'cachedContent'];
const CONTENT = ['role', 'parts'];
const PART = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult', 'thought', 'thoughtSignature', 'videoMetadata', 'partMetadata', 'mediaResolution'];
const FUNCTION_CALL = ['id', 'name', 'args'];
const FUNCTION_RESPONSE = ['id', 'name', 'response', 'willContinue', 'scheduling', 'parts'];
const TOOL = ['functionDeclarations', 'googleSearchRetrieval', 'codeExecution', 'googleSearch', 'urlContext', 'computerUse', 'fileSearch', 'googleMaps'];
const DECLARATION = ['name', 'description', 'behavior', 'parameters', 'parametersJsonSchema', 'response', 'responseJsonSchema'];
const GENERATION = [
  'stopSequences', 'responseMimeType', 'responseSchema', 'responseJsonSchema', '_responseJsonSchema', 'responseModalities', 'candidateCount', 'maxOutputTokens',
  'temperature', 'topP', 'topK', 'seed', 'presencePenalty', 'frequencyPenalty', 'responseLogprobs', 'logprobs', 'enableEnhancedCivicAnswers',
  'speechConfig', 'thinkingConfig', 'imageConfig', 'mediaResolution',
];
const THINKING = ['includeThoughts', 'thinkingBudget', 'thinkingLevel'];
const EMBED = ['model', 'content', 'taskType', 'title', 'outputDimensionality'];

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

function unknownIn(o: unknown, known: readonly string[], at: string): string | null {
  if (!isObject(o)) return null;
  for (const k of Object.keys(o)) {
    if (!known.includes(k)) return `Invalid JSON payload received. Unknown name "${k}"${at ? ` at '${at}'` : ''}: Cannot find field.`;
  }
  return null;
}

/** The first unknown field of a generateContent body, as Google names it; null when every field is known. */
export function generateProblem(body: Record<string, any>): string | null {
  let p = unknownIn(body, GENERATE, '');
  if (p) return p;
  if (!Array.isArray(body.contents) || body.contents.length === 0) return '* GenerateContentRequest.contents: contents is not specified';
  const contents = [...body.contents, ...(isObject(body.systemInstruction) ? [body.systemInstruction] : [])];
  for (let i = 0; i < contents.length; i++) {
    const c = contents[i];
    const at = i < body.contents.length ? `contents[${i}]` : 'system_instruction';
    if ((p = unknownIn(c, CONTENT, at))) return p;
    // Google parses the body against its messages: a field of the wrong type is refused as
    // `Invalid JSON payload received. Invalid value at '<path>' (<type>), <value>`.
    if (c?.parts !== undefined && !Array.isArray(c.parts)) return `Invalid JSON payload received. Invalid value at '${at}.parts' (type.googleapis.com/google.ai.generativelanguage.v1beta.Part), ${JSON.stringify(c.parts).slice(0, 100)}`;
    for (let j = 0; j < (Array.isArray(c?.parts) ? c.parts.length : 0); j++) {
      const part = c.parts[j];
      if ((p = unknownIn(part, PART, `${at}.parts[${j}]`))) return p;
      if ((p = unknownIn(part?.functionCall, FUNCTION_CALL, `${at}.parts[${j}].function_call`))) return p;
      if ((p = unknownIn(part?.functionResponse, FUNCTION_RESPONSE, `${at}.parts[${j}].function_response`))) return p;
    }
  }
  for (let i = 0; i < (Array.isArray(body.tools) ? body.tools.length : 0); i++) {
    const t = body.tools[i];
    if ((p = unknownIn(t, TOOL, `tools[${i}]`))) return p;
    for (let j = 0; j < (Array.isArray(t?.functionDeclarations) ? t.functionDeclarations.length : 0); j++) {
      if ((p = unknownIn(t.functionDeclarations[j], DECLARATION, `tools[${i}].function_declarations[${j}]`))) return p;
    }
  }
  if ((p = unknownIn(body.generationConfig, GENERATION, 'generation_config'))) return p;
  return unknownIn(body.generationConfig?.thinkingConfig, THINKING, 'generation_config.thinking_config');
}

// ---- thought signatures -----------------------------------------------------------------------

const SIGNING_KEY = 'mock-gemini-thought-signatures';

/** The signature this mock gives a function call: bound to its name and arguments, so an altered call or signature is caught. */
export function thoughtSignatureOf(name: string, args: unknown): string {
  return createHmac('sha256', SIGNING_KEY).update(`${name}\n${JSON.stringify(args ?? {})}`).digest('base64');
}

/**
 * Gemini 3 refuses a model turn's function call that comes back without the signature it was
 * given (https://ai.google.dev/gemini-api/docs/thought-signatures: "the first functionCall part
 * in each step of the current turn must have its signature", else 400). This mock applies the
 * rule to every model and every model turn, and refuses a signature it did not issue for that call.
 */
export function signatureProblem(body: Record<string, any>): string | null {
  const contents = body.contents as any[];
  for (let i = 0; i < contents.length; i++) {
    const c = contents[i];
    if (c?.role !== 'model' || !Array.isArray(c.parts)) continue;
    const first = c.parts.find((p: any) => isObject(p?.functionCall));
    if (!first) continue;
    const name = String(first.functionCall.name ?? '');
    if (typeof first.thoughtSignature !== 'string') {
      // Google's message, as its users report it (e.g. chatboxai/chatbox#3308, csells/dartantic#86).
      return `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${name}\` , position ${i + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`;
    }
    if (first.thoughtSignature !== thoughtSignatureOf(name, first.functionCall.args)) return 'Unable to submit request because Thought signature is not valid.';
  }
  return null;
}

// ---- answers ----------------------------------------------------------------------------------

/** Behaviour usage as usageMetadata: the prompt holds the cached tokens, thoughts are counted apart from the candidates. */
export function usageMetadataOf(u: Usage): Record<string, number> {
  const thoughts = u.reasoning_tokens ?? 0;
  return {
    promptTokenCount: u.prompt_tokens,
    candidatesTokenCount: u.completion_tokens - thoughts,
    totalTokenCount: u.prompt_tokens + u.completion_tokens,
    ...(u.cached_tokens ? { cachedContentTokenCount: u.cached_tokens } : {}),
    ...(thoughts ? { thoughtsTokenCount: thoughts } : {}),
  };
}

function promptText(body: Record<string, any>): string {
  const texts: string[] = [];
  for (const c of [...(body.contents ?? []), ...(isObject(body.systemInstruction) ? [body.systemInstruction] : [])]) {
    for (const p of c?.parts ?? []) if (typeof p?.text === 'string') texts.push(p.text);
  }
  return texts.join('\n');
}

/** The answer's parts: a function call (signed) when tools are offered and the last turn is no function response, else the text. */
function answerParts(body: Record<string, any>, b: Behaviour, model: string): { parts: Record<string, unknown>[]; text: string } {
  const last = body.contents.at(-1);
  const answered = Array.isArray(last?.parts) && last.parts.some((p: any) => isObject(p?.functionResponse));
  const offered = Array.isArray(body.tools) && body.tools.some((t: any) => Array.isArray(t?.functionDeclarations) && t.functionDeclarations.length);
  const thoughts = b.thinking && body.generationConfig?.thinkingConfig?.includeThoughts === true ? [{ text: b.thinking, thought: true }] : [];
  if (b.toolCall && offered && !answered) {
    const args = b.toolCall.arguments;
    return { parts: [...thoughts, { functionCall: { name: b.toolCall.name, args }, thoughtSignature: thoughtSignatureOf(b.toolCall.name, args) }], text: '' };
  }
  const text = answerText(b, model);
  return { parts: [...thoughts, { text }], text };
}

function usage(b: Behaviour, body: Record<string, any>, answer: string): Usage {
  return b.usage ?? { prompt_tokens: estimateTokens(promptText(body)), completion_tokens: estimateTokens(answer || 'call') };
}

export async function geminiCall(req: IncomingMessage, res: ServerResponse, model: string, method: string, query: URLSearchParams, body: Record<string, any>, b: Behaviour): Promise<void> {
  if (method === 'embedContent' || method === 'batchEmbedContents') return embed(res, model, method, body);
  const wrapped = method === 'countTokens' && isObject(body.generateContentRequest);
  if (method === 'countTokens' && !wrapped) {
    const p = unknownIn(body, ['contents', 'generateContentRequest'], '');
    if (p) return geminiError(res, 400, p);
    return sendJson(res, 200, { totalTokens: estimateTokens(promptText(body)) });
  }
  const request = wrapped ? body.generateContentRequest : body;
  // A wrapped countTokens request names its model (`models/…`) as well.
  const { model: _named, ...fields } = wrapped ? request : { model: undefined, ...request };
  const problem = generateProblem(wrapped ? fields : request) ?? signatureProblem(request);
  if (problem) return geminiError(res, 400, problem);
  if (method === 'countTokens') return sendJson(res, 200, { totalTokens: estimateTokens(promptText(request)) });
  const { parts, text } = answerParts(request, b, model);
  const u = usage(b, request, text);
  const responseId = mockId('gm_');
  if (method === 'generateContent') {
    return sendJson(res, 200, {
      candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
      usageMetadata: usageMetadataOf(u),
      modelVersion: model,
      responseId,
    });
  }
  // Without alt=sse Google streams one JSON array; the gateway always asks for events.
  if (query.get('alt') !== 'sse') return geminiError(res, 400, 'This mock streams only with alt=sse');
  // Each chunk's usageMetadata is a running total (the candidates so far); the last one, with the finish reason, is final.
  const pieces = text ? splitText(text, b.chunks ?? 3) : [];
  const content: Frame[] = [];
  const thoughtParts = parts.filter((p) => p.thought === true);
  let sent = 0;
  const running = (n: number) => ({ ...usageMetadataOf({ ...u, completion_tokens: n, reasoning_tokens: 0, cached_tokens: u.cached_tokens }), totalTokenCount: u.prompt_tokens + n });
  if (thoughtParts.length) content.push({ data: { candidates: [{ content: { role: 'model', parts: thoughtParts }, index: 0 }], usageMetadata: running(0), modelVersion: model, responseId } });
  const finalParts = pieces.length ? [] : parts.filter((p) => p.thought !== true);
  for (const piece of pieces) {
    sent += Math.max(1, Math.floor((u.completion_tokens - (u.reasoning_tokens ?? 0)) / pieces.length));
    content.push({ data: { candidates: [{ content: { role: 'model', parts: [{ text: piece }] }, index: 0 }], usageMetadata: running(Math.min(sent, u.completion_tokens)), modelVersion: model, responseId } });
  }
  const tail: Frame[] = [{
    data: { candidates: [{ content: { role: 'model', parts: finalParts.length ? finalParts : [{ text: '' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: usageMetadataOf(u), modelVersion: model, responseId },
  }];
  return playStream(req, res, b, { head: [], content, tail });
}

/** A deterministic vector per text: the same text embeds the same, every time. */
const vectorOf = (text: string, n: number) => Array.from({ length: n }, (_, i) => ((text.charCodeAt(i % Math.max(1, text.length)) || 7) % 97) / 97);

function embed(res: ServerResponse, model: string, method: string, body: Record<string, any>): void {
  const batch = method === 'batchEmbedContents';
  const p = batch ? unknownIn(body, ['requests'], '') : unknownIn(body, EMBED, '');
  if (p) return geminiError(res, 400, p);
  const requests = batch ? body.requests : [body];
  if (!Array.isArray(requests) || requests.length === 0) return geminiError(res, 400, '* BatchEmbedContentsRequest.requests: requests is not specified');
  for (let i = 0; i < requests.length; i++) {
    const r = requests[i];
    const q = unknownIn(r, EMBED, `requests[${i}]`);
    if (q) return geminiError(res, 400, q);
    // Each request of a batch names the model of the path (https://ai.google.dev/api/embeddings#method:-models.batchembedcontents).
    if (batch && r?.model !== `models/${model}`) return geminiError(res, 400, `* BatchEmbedContentsRequest.requests[${i}].model: the model must be models/${model}, the batch's model`);
    if (!Array.isArray(r?.content?.parts)) return geminiError(res, 400, `* EmbedContentRequest.content: content is not specified`);
  }
  const vectors = requests.map((r: any) => ({ values: vectorOf(r.content.parts.map((x: any) => x?.text ?? '').join(''), r.outputDimensionality ?? 8) }));
  sendJson(res, 200, batch ? { embeddings: vectors } : { embedding: vectors[0] });
}
