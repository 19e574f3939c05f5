import type { Endpoint } from '../providers/types';
import { effortOfBudget } from './anthropic';
import { GeminiEncoder } from './gemini-stream';
import { embedBodyProblem } from './gemini-embed';
import { MalformedRequest } from './shape';
import {
  chatUsage, parseArguments, textOf, Untranslatable, usageParts,
  type ChatMessage, type ChatRequest, type ChatResponse, type ChatToolCall, type ChatUsage, type Json, type ThinkingBlock,
} from './types';
import type { ClientFormat } from './format';

/**
 * Gemini's generateContent ⇄ the canonical Chat Completions form, as a client format (the
 * `@google/genai` SDK and Gemini CLI on any key): `contents`/`parts` ⇄ messages, function
 * declarations ⇄ tools, `generationConfig` ⇄ the sampling fields, and the answer's candidates,
 * finish reason and `usageMetadata` written from the canonical answer.
 */

// ---- the body's shape -------------------------------------------------------------------------

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What is wrong with a Gemini body, as the 400 says it (the read-body stage refuses it before
 * anything is reserved): `contents` a list of contents whose `parts` are objects, one candidate;
 * an embed body its requests' contents (gemini-embed.ts).
 * A countTokens body may wrap the request in `generateContentRequest`.
 */
export function geminiBodyProblem(endpoint: Endpoint, body: Json): string | null {
  if (endpoint === 'gemini_embed') return embedBodyProblem(body);
  const req = endpoint === 'gemini_count' && isObject(body.generateContentRequest) ? body.generateContentRequest : body;
  const contents = req.contents;
  if (!Array.isArray(contents)) return endpoint === 'gemini' || contents !== undefined ? 'contents: required (an array of Content objects)' : null;
  for (let i = 0; i < contents.length; i++) {
    const c = contents[i];
    if (!isObject(c)) return `contents[${i}]: expected a Content object`;
    if (c.role != null && c.role !== 'user' && c.role !== 'model' && c.role !== 'function') return `contents[${i}].role: expected "user" or "model"`;
    if (!Array.isArray(c.parts)) return `contents[${i}].parts: required (an array of Part objects)`;
    for (let j = 0; j < c.parts.length; j++) if (!isObject(c.parts[j])) return `contents[${i}].parts[${j}]: expected a Part object`;
  }
  const config = req.generationConfig;
  if (config != null && !isObject(config)) return 'generationConfig: expected an object';
  const n = config?.candidateCount;
  if (n != null && n !== 1) return 'generationConfig.candidateCount: only 1 is supported through this gateway';
  if (req.tools != null && !Array.isArray(req.tools)) return 'tools: expected an array of Tool objects';
  return null;
}

// ---- schemas ----------------------------------------------------------------------------------

/** OpenAPI Schema fields JSON Schema reads the same way; the others (`propertyOrdering`, `example`) say nothing a model needs. */
const SCHEMA_KEEP = new Set([
  'description', 'format', 'enum', 'title', 'default', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern',
  'minItems', 'maxItems', 'minProperties', 'maxProperties', 'required',
]);

/** Gemini's Schema (upper-case `OBJECT`, `STRING`, `nullable`) as JSON Schema. */
export function jsonSchemaOf(s: unknown): Json {
  if (!isObject(s)) return {};
  const out: Json = {};
  if (typeof s.type === 'string' && s.type !== 'TYPE_UNSPECIFIED') {
    const type = s.type.toLowerCase();
    out.type = s.nullable === true ? [type, 'null'] : type;
  }
  for (const k of Object.keys(s)) if (SCHEMA_KEEP.has(k)) out[k] = s[k];
  if (isObject(s.properties)) out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, jsonSchemaOf(v)]));
  if (s.items !== undefined) out.items = jsonSchemaOf(s.items);
  if (Array.isArray(s.anyOf)) out.anyOf = s.anyOf.map(jsonSchemaOf);
  return out;
}

// ---- requests ---------------------------------------------------------------------------------

/** Tools Gemini runs itself: no other provider kind has them. */
const GOOGLE_TOOLS = ['googleSearch', 'googleSearchRetrieval', 'codeExecution', 'urlContext', 'retrieval', 'fileSearch', 'googleMaps', 'computerUse', 'enterpriseWebSearch'];

/** Request fields that ask for what only Google's own API keeps. */
const GOOGLE_ONLY = ['cachedContent'];

const AUDIO_FORMATS: Record<string, string> = { 'audio/wav': 'wav', 'audio/x-wav': 'wav', 'audio/mp3': 'mp3', 'audio/mpeg': 'mp3' };

/** A user part (text, inline or linked image, inline PDF or audio) as a canonical content part. */
function partOf(p: Json, where: string): Json {
  if (typeof p.text === 'string') return { type: 'text', text: p.text };
  if (isObject(p.inlineData)) {
    const mime = String(p.inlineData.mimeType ?? '');
    const data = String(p.inlineData.data ?? '');
    if (mime.startsWith('image/')) return { type: 'image_url', image_url: { url: `data:${mime};base64,${data}` } };
    if (mime === 'application/pdf') return { type: 'file', file: { filename: 'document.pdf', file_data: `data:${mime};base64,${data}` } };
    const audio = AUDIO_FORMATS[mime];
    if (audio) return { type: 'input_audio', input_audio: { data, format: audio } };
    throw new Untranslatable(`${where}: inlineData of type ${mime || '(none)'} has no equivalent on this key (images, PDFs, WAV and MP3 audio do)`);
  }
  if (isObject(p.fileData)) {
    const mime = String(p.fileData.mimeType ?? '');
    const uri = String(p.fileData.fileUri ?? '');
    // An image by URL is one every provider fetches; a file by URL (or a Files API name) only Google reads.
    if (mime.startsWith('image/') && /^https?:\/\//.test(uri)) return { type: 'image_url', image_url: { url: uri } };
    throw new Untranslatable(`${where}: fileData (${mime || 'no mimeType'}) can reach this key only as an image by https URL; send other files inline (inlineData)`);
  }
  const kind = Object.keys(p).find((k) => k !== 'thought' && k !== 'thoughtSignature' && k !== 'videoMetadata' && k !== 'mediaResolution') ?? 'empty';
  throw new Untranslatable(`${where}: a ${kind} part has no equivalent on this key`);
}

/** Parts as a canonical content: the plain string when they are only text. */
function contentOf(parts: Json[]): string | Json[] {
  return parts.every((p) => p.type === 'text') ? parts.map((p) => p.text).join('') : parts;
}

/** The call ID of a model turn's function call that has none (Gemini's are optional): the same for the same conversation, every time. */
export const callIdOf = (turn: number, index: number) => `call_gemini_${turn}_${index}`;

/** A `functionResponse.response` as the tool message's text. */
function resultText(response: unknown): string {
  if (isObject(response) && Object.keys(response).length === 1 && typeof response.output === 'string') return response.output;
  return JSON.stringify(response ?? {});
}

/** A Gemini generateContent request as the canonical (Chat Completions) request. */
export function requestToChat(doc: Json): ChatRequest {
  for (const f of GOOGLE_ONLY) if (doc[f] != null) throw new Untranslatable(`${f} is Google's own (a Gemini key's context cache) and has no equivalent on this key`);
  const messages: ChatMessage[] = [];
  const sys = doc.systemInstruction;
  if (typeof sys === 'string' && sys) messages.push({ role: 'system', content: sys });
  else if (isObject(sys)) {
    const text = textOf(Array.isArray(sys.parts) ? sys.parts : []);
    if (text) messages.push({ role: 'system', content: text });
  }
  // The calls of the last model turn not answered yet, in order: a functionResponse without an ID answers the first of its name.
  let open: ChatToolCall[] = [];
  const contents = (Array.isArray(doc.contents) ? doc.contents : []) as Json[];
  contents.forEach((c, turn) => {
    const parts = c.parts as Json[];
    if (c.role === 'model') {
      const msg: ChatMessage = { role: 'assistant', content: null };
      let text = '';
      let sawText = false;
      let thought = '';
      let signature: string | undefined;
      const calls: ChatToolCall[] = [];
      parts.forEach((p, i) => {
        if (p.thought === true) {
          thought += typeof p.text === 'string' ? p.text : '';
          if (typeof p.thoughtSignature === 'string') signature = p.thoughtSignature;
        } else if (isObject(p.functionCall)) {
          const name = String(p.functionCall.name ?? '');
          const id = typeof p.functionCall.id === 'string' && p.functionCall.id ? p.functionCall.id : callIdOf(turn, i);
          calls.push({ id, type: 'function', function: { name, arguments: JSON.stringify(p.functionCall.args ?? {}) } });
        } else if (typeof p.text === 'string') {
          text += p.text;
          sawText = true;
        } else throw new Untranslatable(`contents[${turn}].parts[${i}]: a model ${Object.keys(p)[0] ?? 'empty'} part has no equivalent on this key`);
      });
      if (sawText) msg.content = text;
      if (calls.length) msg.tool_calls = calls;
      if (thought || signature) {
        msg.reasoning_content = thought;
        // Signed thinking (an Anthropic key's, carried in thoughtSignature) goes back as it came.
        if (signature) msg.thinking_blocks = [{ type: 'thinking', thinking: thought, signature } satisfies ThinkingBlock];
      }
      messages.push(msg);
      open = [...calls];
      return;
    }
    const rest: Json[] = [];
    parts.forEach((p, i) => {
      if (isObject(p.functionResponse)) {
        const r = p.functionResponse;
        const name = String(r.name ?? '');
        const at = typeof r.id === 'string' && r.id ? open.findIndex((x) => x.id === r.id) : open.findIndex((x) => x.function.name === name);
        if (at === -1) throw new MalformedRequest(`contents[${turn}].parts[${i}].functionResponse: answers no functionCall ${r.id ? `with id ${String(r.id)}` : `named ${name}`} of the model turn before it that is still unanswered (each call is answered once)`);
        const [call] = open.splice(at, 1);
        messages.push({ role: 'tool', tool_call_id: call.id, content: resultText(r.response) });
      } else if (p.thought !== true) rest.push(partOf(p, `contents[${turn}].parts[${i}]`));
    });
    if (rest.length) messages.push({ role: 'user', content: contentOf(rest) });
  });
  const out: ChatRequest = { model: doc.model, messages };
  tools(doc, out);
  generation(isObject(doc.generationConfig) ? doc.generationConfig : {}, out);
  if (doc.stream === true) out.stream = true;
  return out;
}

function tools(doc: Json, out: ChatRequest): void {
  const functions: Json[] = [];
  for (const t of (Array.isArray(doc.tools) ? doc.tools : []) as Json[]) {
    const google = GOOGLE_TOOLS.find((k) => t?.[k] != null);
    if (google) throw new Untranslatable(`tools: ${google} is a tool Google runs itself and has no equivalent on this key`);
    for (const f of (Array.isArray(t?.functionDeclarations) ? t.functionDeclarations : []) as Json[]) {
      const parameters = f.parametersJsonSchema ?? (f.parameters ? jsonSchemaOf(f.parameters) : { type: 'object', properties: {} });
      functions.push({ type: 'function', function: { name: String(f.name ?? ''), ...(f.description ? { description: f.description } : {}), parameters } });
    }
  }
  const fc = doc.toolConfig?.functionCallingConfig as Json | undefined;
  const mode = typeof fc?.mode === 'string' ? fc.mode.toUpperCase() : 'AUTO';
  const allowed = Array.isArray(fc?.allowedFunctionNames) ? (fc.allowedFunctionNames as unknown[]).map(String) : [];
  let offered = functions;
  // ANY with allowedFunctionNames: the model must call one of those, so only those are offered.
  if (mode === 'ANY' && allowed.length) offered = functions.filter((f) => allowed.includes(f.function.name));
  if (offered.length) out.tools = offered;
  if (!out.tools) return;
  if (mode === 'NONE') out.tool_choice = 'none';
  else if (mode === 'ANY') out.tool_choice = offered.length === 1 && allowed.length === 1 ? { type: 'function', function: { name: allowed[0] } } : 'required';
  // AUTO, and VALIDATED (AUTO whose calls follow their schemas, which every provider here does by default).
  else out.tool_choice = 'auto';
}

const LEVELS: Record<string, string> = { MINIMAL: 'minimal', LOW: 'low', MEDIUM: 'medium', HIGH: 'high' };

function generation(g: Json, out: ChatRequest): void {
  if (typeof g.maxOutputTokens === 'number') out.max_tokens = g.maxOutputTokens;
  if (typeof g.temperature === 'number') out.temperature = g.temperature;
  if (typeof g.topP === 'number') out.top_p = g.topP;
  // Anthropic's top_k; a Chat Completions key has none, and it is left out there (docs/proxy.md).
  if (typeof g.topK === 'number') out.top_k = g.topK;
  if (Array.isArray(g.stopSequences) && g.stopSequences.length) out.stop = g.stopSequences;
  if (typeof g.seed === 'number') out.seed = g.seed;
  if (typeof g.presencePenalty === 'number') out.presence_penalty = g.presencePenalty;
  if (typeof g.frequencyPenalty === 'number') out.frequency_penalty = g.frequencyPenalty;
  const modalities = Array.isArray(g.responseModalities) ? g.responseModalities.map((m: unknown) => String(m).toUpperCase()) : [];
  const other = modalities.find((m: string) => m !== 'TEXT');
  if (other) throw new Untranslatable(`generationConfig.responseModalities: ${other} output has no equivalent on this key`);
  if (g.speechConfig != null) throw new Untranslatable('generationConfig.speechConfig has no equivalent on this key');
  const mime = g.responseMimeType;
  const schema = g.responseJsonSchema ?? g._responseJsonSchema ?? (g.responseSchema != null ? jsonSchemaOf(g.responseSchema) : undefined);
  if (mime === 'application/json' || schema !== undefined) {
    out.response_format = schema !== undefined ? { type: 'json_schema', json_schema: { name: 'output', schema } } : { type: 'json_object' };
  } else if (typeof mime === 'string' && mime !== 'text/plain') throw new Untranslatable(`generationConfig.responseMimeType ${mime} has no equivalent on this key`);
  const t = g.thinkingConfig;
  if (isObject(t)) {
    const level = typeof t.thinkingLevel === 'string' ? LEVELS[t.thinkingLevel.toUpperCase()] : undefined;
    const budget = t.thinkingBudget;
    // A budget of 0 turns thinking off; -1 lets the model choose (the middle effort).
    if (level) out.reasoning_effort = level;
    else if (budget === -1) out.reasoning_effort = 'medium';
    else if (typeof budget === 'number' && budget > 0) out.reasoning_effort = effortOfBudget(budget);
  }
}

// ---- answers ----------------------------------------------------------------------------------

const FINISH_TO_GEMINI: Record<string, string> = {
  stop: 'STOP', length: 'MAX_TOKENS', tool_calls: 'STOP', function_call: 'STOP', content_filter: 'SAFETY',
};

/** A canonical finish reason as Gemini's (a call of functions ends with STOP there). */
export const geminiFinish = (finish: string | null | undefined): string => (finish ? FINISH_TO_GEMINI[finish] ?? 'OTHER' : 'STOP');

/** Gemini's reasons a candidate was blocked or cut short by its filters. */
const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'LANGUAGE']);

/** Gemini's finish reason as a canonical one: a turn that called functions says STOP there, `tool_calls` here. */
export function finishOfGemini(reason: unknown, calledFunctions: boolean): string {
  if (reason === 'MAX_TOKENS') return 'length';
  if (typeof reason === 'string' && FILTERED.has(reason)) return 'content_filter';
  return calledFunctions ? 'tool_calls' : 'stop';
}

/**
 * Canonical usage as Gemini's `usageMetadata`: the prompt holds the cached tokens (as
 * `promptTokenCount` does), the thoughts are counted apart from the candidates.
 */
export function usageMetadataOf(u: ChatUsage | null | undefined): Json {
  const p = usageParts(u);
  const out: Json = { promptTokenCount: p.prompt, candidatesTokenCount: p.completion - p.reasoning, totalTokenCount: p.prompt + p.completion };
  if (p.cached) out.cachedContentTokenCount = p.cached;
  if (p.reasoning) out.thoughtsTokenCount = p.reasoning;
  return out;
}

/** Gemini's `usageMetadata` as canonical usage: completion is candidates and thoughts, reasoning the thoughts. */
export function usageOfMetadata(m: Json | undefined): ChatUsage {
  const thoughts = Number(m?.thoughtsTokenCount) || 0;
  return chatUsage({
    prompt: Number(m?.promptTokenCount) || 0,
    cached: Number(m?.cachedContentTokenCount) || 0,
    cacheWrite: 0,
    completion: (Number(m?.candidatesTokenCount) || 0) + thoughts,
    reasoning: thoughts,
  });
}

/** Function call parts of canonical tool calls (their IDs kept, so the client's functionResponse can name them). */
export function functionCallParts(calls: readonly ChatToolCall[]): Json[] {
  return calls.map((tc) => ({ functionCall: { id: tc.id, name: tc.function.name, args: parseArgs(tc.function.arguments, tc.function.name) } }));
}

function parseArgs(text: string, name: string): Json {
  try {
    return parseArguments(text, name);
  } catch {
    // A model's malformed arguments reach the client as empty ones.
    return {};
  }
}

/** Thought parts: shown only when the client asked for them (`thinkingConfig.includeThoughts`), as Gemini does; a signature rides on the last. */
function thoughtParts(m: ChatMessage, include: boolean): Json[] {
  const blocks = m.thinking_blocks ?? [];
  const signature = blocks.findLast((b) => b.type === 'thinking' && b.signature)?.signature;
  const text = m.reasoning_content ?? blocks.map((b) => b.thinking ?? '').join('');
  if (!include || (!text && !signature)) return [];
  return [{ text, thought: true, ...(signature ? { thoughtSignature: signature } : {}) }];
}

export const includesThoughts = (request: Json): boolean => request?.generationConfig?.thinkingConfig?.includeThoughts === true;

/** A canonical chat completion as a generateContent answer. */
export function responseFromChat(res: ChatResponse, request: Json): Json {
  const choice = res.choices?.[0];
  const m = choice?.message ?? { role: 'assistant' };
  const parts: Json[] = thoughtParts(m, includesThoughts(request));
  const text = textOf(m.content);
  if (text) parts.push({ text });
  parts.push(...functionCallParts(m.tool_calls ?? []));
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: geminiFinish(choice?.finish_reason), index: 0 }],
    usageMetadata: usageMetadataOf(res.usage),
    modelVersion: res.model,
    responseId: res.id,
  };
}

export const geminiClient: ClientFormat = {
  toChat: requestToChat,
  fromChatResponse: (res, ctx) => responseFromChat(res, ctx.request),
  encoder: (ctx) => new GeminiEncoder(ctx),
};

// ---- models -----------------------------------------------------------------------------------

const GENERATION_METHODS = ['generateContent', 'streamGenerateContent', 'countTokens'];
const EMBEDDING_METHODS = ['embedContent', 'batchEmbedContents'];

/** A model the caller may name (the model list's entry) as Gemini's Model resource; limits from the model catalogue where it knows them. */
export function geminiModelOf(id: string, limits: { output: number; context: number | null }): Json {
  return {
    name: `models/${id}`,
    baseModelId: id,
    version: '',
    displayName: id,
    description: '',
    ...(limits.context !== null ? { inputTokenLimit: limits.context } : {}),
    outputTokenLimit: limits.output,
    // The catalogue does not say which models embed: their names do (text-embedding-3-small, gemini-embedding-001).
    supportedGenerationMethods: id.includes('embed') ? EMBEDDING_METHODS : GENERATION_METHODS,
  };
}
