import { randomBytes } from 'node:crypto';
import { errorFormatOf, proxyErrorBody, translatedErrorBody } from '../errors';
import { finishOfGemini, usageOfMetadata } from './gemini';
import { SseReader } from './sse';
import {
  dataUrl, nowSeconds, parseArguments, textOf, Untranslatable,
  type ChatChunk, type ChatMessage, type ChatRequest, type ChatResponse, type ChatToolCall, type Json, type SseEvent, type StreamItem,
} from './types';
import type { ProviderFormat, StreamDecoder } from './format';
import type { Translation } from './index';

/**
 * Gemini's generateContent as a provider format (OpenAI, Anthropic and Responses clients on a
 * `gemini` key): the canonical request written as `contents`/`parts`, the answer's candidate
 * and `usageMetadata` read back (usage and finish reasons through gemini.ts, their one home).
 *
 * Thought signatures ride inside the tool call ID, as LiteLLM carries them:
 * `<call id>__thought__<signature, base64url of its text>`. Every client format keeps a tool
 * call's ID and sends it back with the call and its result, so a client that returns its tool
 * loop as received gives Gemini back the `thoughtSignature` it issued (Gemini 3 refuses a
 * model turn's function call without it). The base64url keeps the ID to `[A-Za-z0-9_-]`,
 * which Anthropic's tool_use IDs require.
 */

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export const THOUGHT_SEPARATOR = '__thought__';
/** IDs the gateway made for calls Gemini gave none: never sent back as Gemini's own. */
const MADE_ID = 'call_gm';

/** A tool call ID carrying a function call's thought signature (none: the ID alone). */
export function callIdWithSignature(id: string, signature: string | undefined): string {
  return signature ? `${id}${THOUGHT_SEPARATOR}${Buffer.from(signature, 'utf8').toString('base64url')}` : id;
}

/** A tool call ID split into Gemini's own call ID (none for one the gateway made) and the thought signature it carries. */
export function signatureOfCallId(id: string): { id?: string; signature?: string } {
  const at = id.indexOf(THOUGHT_SEPARATOR);
  const base = at === -1 ? id : id.slice(0, at);
  const signature = at === -1 ? undefined : Buffer.from(id.slice(at + THOUGHT_SEPARATOR.length), 'base64url').toString('utf8') || undefined;
  return { id: base.startsWith(MADE_ID) || !base ? undefined : base, signature };
}

const madeId = () => `${MADE_ID}${randomBytes(9).toString('hex')}`;

// ---- requests ---------------------------------------------------------------------------------

const AUDIO_MIME: Record<string, string> = { wav: 'audio/wav', mp3: 'audio/mp3' };
const IMAGE_MIME: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' };

/** A canonical user content part as a Gemini part. */
function userPart(p: Json): Json {
  if (p.type === 'text') return { text: String(p.text ?? '') };
  if (p.type === 'image_url') {
    const url = String(p.image_url?.url ?? '');
    const inline = dataUrl(url);
    if (inline) return { inlineData: { mimeType: inline.mediaType, data: inline.data } };
    const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase() ?? '';
    return { fileData: { mimeType: IMAGE_MIME[ext] ?? 'image/jpeg', fileUri: url } };
  }
  if (p.type === 'file') {
    const inline = dataUrl(String(p.file?.file_data ?? ''));
    if (inline) return { inlineData: { mimeType: inline.mediaType, data: inline.data } };
    throw new Untranslatable('a file part reaches a Gemini key only inline (file_data as a data URL)');
  }
  if (p.type === 'input_audio') {
    const mime = AUDIO_MIME[String(p.input_audio?.format ?? '')];
    if (mime) return { inlineData: { mimeType: mime, data: String(p.input_audio?.data ?? '') } };
  }
  throw new Untranslatable(`a ${String(p.type)} content part has no equivalent on a Gemini key`);
}

const partsOf = (content: ChatMessage['content']): Json[] =>
  typeof content === 'string' ? (content ? [{ text: content }] : []) : Array.isArray(content) ? content.map(userPart) : [];

/** An assistant message as a model turn: text, then its function calls, each with the signature its ID carries. */
function modelTurn(m: ChatMessage, names: Map<string, string>): Json {
  const parts: Json[] = [];
  const text = textOf(m.content);
  if (text) parts.push({ text });
  for (const tc of m.tool_calls ?? []) {
    names.set(tc.id, tc.function.name);
    const { id, signature } = signatureOfCallId(tc.id);
    const args = parseArguments(tc.function.arguments, tc.function.name);
    parts.push({ functionCall: { ...(id ? { id } : {}), name: tc.function.name, args }, ...(signature ? { thoughtSignature: signature } : {}) });
  }
  return { role: 'model', parts };
}

/** The canonical request as a generateContent body (the model and the stream are in the path, not here). */
export function geminiRequest(req: ChatRequest): Json {
  const system: string[] = [];
  const contents: Json[] = [];
  const names = new Map<string, string>();
  for (const m of req.messages) {
    if (m.role === 'system' || m.role === 'developer') {
      const t = textOf(m.content);
      if (t) system.push(t);
    } else if (m.role === 'assistant') contents.push(modelTurn(m, names));
    else if (m.role === 'tool') {
      const callId = String(m.tool_call_id ?? '');
      const name = names.get(callId);
      if (name === undefined) throw new Untranslatable(`the tool result for ${callId} answers no tool call of the conversation`);
      const { id } = signatureOfCallId(callId);
      const part = { functionResponse: { ...(id ? { id } : {}), name, response: { output: textOf(m.content) } } };
      // Parallel calls' results go back in one user turn, as Gemini wants them.
      const last = contents.at(-1);
      if (last?.role === 'user' && last.parts.every((p: Json) => p.functionResponse)) last.parts.push(part);
      else contents.push({ role: 'user', parts: [part] });
    } else contents.push({ role: 'user', parts: partsOf(m.content) });
  }
  const out: Json = { contents };
  if (system.length) out.systemInstruction = { parts: [{ text: system.join('\n\n') }] };
  tools(req, out);
  const g = generationConfig(req);
  if (Object.keys(g).length) out.generationConfig = g;
  return out;
}

function tools(req: ChatRequest, out: Json): void {
  const list = (Array.isArray(req.tools) ? req.tools : []) as Json[];
  const declarations = list.filter((t) => t?.type === 'function' && isObject(t.function)).map((t) => ({
    name: String(t.function.name),
    ...(t.function.description ? { description: t.function.description } : {}),
    // JSON Schema as it is: Gemini reads it in parametersJsonSchema (no case conversion to its OpenAPI subset).
    ...(t.function.parameters ? { parametersJsonSchema: t.function.parameters } : {}),
  }));
  if (!declarations.length) return;
  out.tools = [{ functionDeclarations: declarations }];
  const choice = req.tool_choice as unknown;
  if (choice === 'none') out.toolConfig = { functionCallingConfig: { mode: 'NONE' } };
  else if (choice === 'required') out.toolConfig = { functionCallingConfig: { mode: 'ANY' } };
  else if (isObject(choice) && isObject(choice.function)) out.toolConfig = { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [String(choice.function.name)] } };
  else if (choice === 'auto') out.toolConfig = { functionCallingConfig: { mode: 'AUTO' } };
}

const LEVELS: Record<string, string> = { minimal: 'MINIMAL', low: 'LOW', medium: 'MEDIUM', high: 'HIGH', xhigh: 'HIGH' };

function generationConfig(req: ChatRequest): Json {
  const g: Json = {};
  const max = req.max_completion_tokens ?? req.max_tokens;
  if (typeof max === 'number') g.maxOutputTokens = max;
  if (typeof req.temperature === 'number') g.temperature = req.temperature;
  if (typeof req.top_p === 'number') g.topP = req.top_p;
  if (typeof req.top_k === 'number') g.topK = req.top_k;
  if (typeof req.stop === 'string') g.stopSequences = [req.stop];
  else if (Array.isArray(req.stop) && req.stop.length) g.stopSequences = req.stop;
  if (typeof req.seed === 'number') g.seed = req.seed;
  if (typeof req.presence_penalty === 'number') g.presencePenalty = req.presence_penalty;
  if (typeof req.frequency_penalty === 'number') g.frequencyPenalty = req.frequency_penalty;
  if (typeof req.n === 'number' && req.n !== 1) throw new Untranslatable('n: a Gemini key answers one choice through this gateway');
  const rf = req.response_format as Json | undefined;
  if (rf?.type === 'json_object') g.responseMimeType = 'application/json';
  else if (rf?.type === 'json_schema') {
    g.responseMimeType = 'application/json';
    if (isObject(rf.json_schema?.schema)) g.responseJsonSchema = rf.json_schema.schema;
  }
  const effort = req.reasoning_effort;
  // `none` turns thinking off (a budget of 0); the others are Gemini 3's thinking levels.
  if (effort === 'none') g.thinkingConfig = { thinkingBudget: 0 };
  else if (typeof effort === 'string' && LEVELS[effort]) g.thinkingConfig = { thinkingLevel: LEVELS[effort], includeThoughts: true };
  return g;
}

// ---- answers ----------------------------------------------------------------------------------

/** A candidate's parts as the canonical assistant message's pieces. */
function readParts(parts: unknown): { text: string; thought: string; calls: ChatToolCall[] } {
  let text = '';
  let thought = '';
  const calls: ChatToolCall[] = [];
  for (const p of (Array.isArray(parts) ? parts : []) as Json[]) {
    if (!isObject(p)) continue;
    if (isObject(p.functionCall)) {
      const fc = p.functionCall;
      const base = typeof fc.id === 'string' && fc.id ? fc.id : madeId();
      const signature = typeof p.thoughtSignature === 'string' ? p.thoughtSignature : undefined;
      calls.push({ id: callIdWithSignature(base, signature), type: 'function', function: { name: String(fc.name ?? ''), arguments: JSON.stringify(fc.args ?? {}) } });
    } else if (typeof p.text === 'string') {
      if (p.thought === true) thought += p.text;
      else text += p.text;
    }
  }
  return { text, thought, calls };
}

/** Why a prompt was refused outright (`promptFeedback.blockReason`): no candidate comes. */
const blocked = (doc: Json): string | undefined => (typeof doc?.promptFeedback?.blockReason === 'string' ? doc.promptFeedback.blockReason : undefined);

export function geminiResponse(doc: Json): ChatResponse {
  const cand = Array.isArray(doc.candidates) ? doc.candidates[0] : undefined;
  const { text, thought, calls } = readParts(cand?.content?.parts);
  const message: ChatMessage = { role: 'assistant', content: text || (calls.length ? null : '') };
  if (calls.length) message.tool_calls = calls;
  if (thought) message.reasoning_content = thought;
  return {
    id: typeof doc.responseId === 'string' ? doc.responseId : `chatcmpl-${randomBytes(9).toString('hex')}`,
    object: 'chat.completion',
    created: nowSeconds(),
    model: String(doc.modelVersion ?? ''),
    choices: [{ index: 0, message, finish_reason: blocked(doc) ? 'content_filter' : finishOfGemini(cand?.finishReason, calls.length > 0) }],
    usage: usageOfMetadata(doc.usageMetadata),
  };
}

/**
 * Gemini's stream (`alt=sse`: one GenerateContentResponse per event) as canonical chunks. Its
 * `usageMetadata` are running totals: only the last chunk's (the one naming the finish reason)
 * becomes the usage chunk. A function call arrives whole in one part.
 */
class GeminiDecoder implements StreamDecoder {
  private id = '';
  private model = '';
  private started = false;
  private calls = 0;
  private finished = false;

  private chunk(delta: ChatChunk['choices'][0]['delta'], finish: string | null = null): ChatChunk {
    return { id: this.id, object: 'chat.completion.chunk', created: nowSeconds(), model: this.model, choices: [{ index: 0, delta, finish_reason: finish }] };
  }

  push(e: SseEvent): StreamItem[] {
    let v: Json;
    try { v = JSON.parse(e.data); } catch { return []; }
    if (isObject(v?.error)) return [{ error: { message: String(v.error.message ?? 'The upstream stream failed'), type: 'api_error', code: typeof v.error.status === 'string' ? v.error.status : undefined } }];
    if (this.finished) return [];
    if (!this.id) this.id = typeof v.responseId === 'string' ? v.responseId : `chatcmpl-${randomBytes(9).toString('hex')}`;
    if (typeof v.modelVersion === 'string') this.model = v.modelVersion;
    const out: StreamItem[] = [];
    if (!this.started) {
      this.started = true;
      out.push(this.chunk({ role: 'assistant', content: '' }));
    }
    const cand = Array.isArray(v.candidates) ? v.candidates[0] : undefined;
    const { text, thought, calls } = readParts(cand?.content?.parts);
    if (thought) out.push(this.chunk({ reasoning_content: thought }));
    if (text) out.push(this.chunk({ content: text }));
    if (calls.length) out.push(this.chunk({ tool_calls: calls.map((c) => ({ index: this.calls++, id: c.id, type: 'function' as const, function: c.function })) }));
    const reason = cand?.finishReason ?? blocked(v);
    if (reason) {
      this.finished = true;
      out.push(this.chunk({}, blocked(v) ? 'content_filter' : finishOfGemini(reason, this.calls > 0)));
      out.push({ id: this.id, object: 'chat.completion.chunk', created: nowSeconds(), model: this.model, choices: [], usage: usageOfMetadata(v.usageMetadata) });
    }
    return out;
  }
}

export const geminiProvider: ProviderFormat = {
  fromChat: geminiRequest,
  toChatResponse: geminiResponse,
  decoder: () => new GeminiDecoder(),
};

// ---- embeddings -------------------------------------------------------------------------------

/** OpenAI's `/v1/embeddings` as `:batchEmbedContents`: each input one request naming the model, as Google requires. */
export function batchEmbedRequest(doc: Json): Json {
  const inputs = typeof doc.input === 'string' ? [doc.input] : Array.isArray(doc.input) ? doc.input : null;
  if (!inputs || inputs.length === 0 || !inputs.every((i) => typeof i === 'string')) {
    throw new Untranslatable('input: a Gemini key embeds text only (a string or an array of strings), not token arrays');
  }
  const model = `models/${String(doc.model).replace(/^models\//, '')}`;
  const dims = typeof doc.dimensions === 'number' ? { outputDimensionality: doc.dimensions } : {};
  return { requests: (inputs as string[]).map((text) => ({ model, content: { parts: [{ text }] }, ...dims })) };
}

/** A vector as OpenAI writes it: numbers, or with `encoding_format: "base64"` (the openai SDK's default) little-endian float32 in base64. */
function vectorAs(values: number[], encoding: unknown): number[] | string {
  if (encoding !== 'base64') return values;
  const buf = Buffer.alloc(values.length * 4);
  values.forEach((x, i) => buf.writeFloatLE(Number(x) || 0, i * 4));
  return buf.toString('base64');
}

/** A batchEmbedContents answer as OpenAI's embeddings list; Gemini reports no tokens for it, so the usage is the gateway's estimate. */
export function embeddingsResponse(res: Json, request: Json): Json {
  const vectors = (Array.isArray(res.embeddings) ? res.embeddings : []) as Json[];
  const inputs = typeof request.input === 'string' ? [request.input] : (request.input as string[]);
  const prompt = inputs.reduce((n, t) => n + Math.ceil(String(t).length / 4), 0);
  return {
    object: 'list',
    data: vectors.map((v, index) => ({ object: 'embedding', index, embedding: vectorAs(Array.isArray(v.values) ? v.values : [], request.encoding_format) })),
    model: String(request.model ?? ''),
    usage: { prompt_tokens: prompt, total_tokens: prompt },
  };
}


export const embeddingsToGemini: Translation = {
  client: 'embeddings',
  upstream: 'gemini_embed',
  request: (doc) => batchEmbedRequest(doc),
  response: (body, ctx) => Buffer.from(JSON.stringify(embeddingsResponse(JSON.parse(body.toString('utf8')), ctx.request))),
  error: (status, body) => translatedErrorBody(errorFormatOf('embeddings'), status, body),
  stream: () => { throw new Error('embeddings do not stream'); },
};

// ---- a JSON-array stream from server-sent events ------------------------------------------------

/**
 * A Gemini client streaming without `alt=sse` (a JSON array) on a `gemini` key: the key is
 * asked for events, which is how the tap reads their usage, and each event's
 * GenerateContentResponse becomes one element of the client's array, unchanged.
 */
export const geminiEventsAsArray: Translation = {
  client: 'gemini',
  upstream: 'gemini',
  request: (doc) => doc,
  response: (body) => body,
  error: (_status, body) => body,
  stream: () => {
    const reader = new SseReader();
    let written = 0;
    const elements = (events: SseEvent[]) => {
      let out = '';
      for (const e of events) out += `${written++ === 0 ? '[' : ',\r\n'}${e.data}`;
      return out;
    };
    return {
      contentType: 'application/json; charset=UTF-8',
      push: (bytes) => Buffer.from(elements(reader.push(bytes))),
      end: () => {
        const out = elements(reader.end());
        return Buffer.from(out + (written === 0 ? '[]' : ']'));
      },
      interrupted: (message, requestId) => Buffer.from(`${written === 0 ? '[' : ',\r\n'}${proxyErrorBody('gemini', 500, message, 'stream_interrupted', requestId)}]`),
    };
  },
};
