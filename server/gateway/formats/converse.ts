import { createHash, randomBytes } from 'node:crypto';
import {
  chatUsage, dataUrl, nowSeconds, parseArguments, textOf, Untranslatable,
  type ChatMessage, type ChatRequest, type ChatResponse, type ChatToolCall, type ChatUsage, type Json, type ThinkingBlock,
} from './types';
import type { ProviderFormat } from './format';
import { alternatingTurns, refuseChatOnly } from './turns';
import { ConverseDecoder } from './converse-stream';

/**
 * AWS Bedrock's Converse API as a provider format (every client format on a `bedrock` key
 * serving a model other than Claude: Nova, Llama, Mistral, DeepSeek, gpt-oss…), from the
 * Bedrock API reference's "Converse" and its data types (Message, ContentBlock, ToolConfiguration,
 * InferenceConfiguration, TokenUsage): the canonical request written as `messages` of content
 * blocks, `system`, `inferenceConfig` and `toolConfig`, the answer's `output.message`,
 * `stopReason` and `usage` read back. The model and the stream are in the path, never the body.
 */

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

// ---- stop reasons and usage -------------------------------------------------------------------

/**
 * Converse's stopReason ("StopReason", Bedrock API reference) as a finish reason. A cut answer
 * says so (`max_tokens` and a full context window are `length`), and an answer a guardrail or
 * content filter stopped is `content_filter`: an answer is never reported whole when it is not.
 */
const STOP_TO_FINISH: Record<string, string> = {
  end_turn: 'stop', stop_sequence: 'stop', tool_use: 'tool_calls',
  max_tokens: 'length', model_context_window_exceeded: 'length',
  guardrail_intervened: 'content_filter', content_filtered: 'content_filter',
  // The model's output could not be read as text or as a tool call: what came is all there is.
  malformed_model_output: 'stop', malformed_tool_use: 'stop',
};

export const finishOfConverse = (stop: unknown, calledTools: boolean): string =>
  typeof stop === 'string' ? STOP_TO_FINISH[stop] ?? 'stop' : calledTools ? 'tool_calls' : 'stop';

const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

/**
 * Converse's TokenUsage as the canonical usage: `inputTokens` leaves out the tokens read from
 * and written to the cache (`totalTokens` is input, output, cache reads and cache writes), so
 * the prompt is their sum; reasoning is part of `outputTokens`, which Converse does not split.
 */
export function usageOfConverse(u: unknown): ChatUsage {
  const o = isObject(u) ? u : {};
  const cached = count(o.cacheReadInputTokens);
  const cacheWrite = count(o.cacheWriteInputTokens);
  return chatUsage({ prompt: count(o.inputTokens) + cached + cacheWrite, cached, cacheWrite, completion: count(o.outputTokens), reasoning: 0 });
}

/** Of the cache writes, those kept an hour (`cacheDetails`, "TokenUsage"). */
export function hourCacheWrites(u: unknown): number {
  const details = isObject(u) && Array.isArray(u.cacheDetails) ? u.cacheDetails : [];
  return details.reduce((n: number, d: unknown) => n + (isObject(d) && d.ttl === '1h' ? count(d.inputTokens) : 0), 0);
}

// ---- requests ---------------------------------------------------------------------------------

/** Converse's image formats ("ImageBlock"): an image is sent as its bytes. */
const IMAGE_FORMATS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };
/** Converse's document formats ("DocumentBlock"). */
const DOCUMENT_FORMATS: Record<string, string> = {
  'application/pdf': 'pdf', 'text/csv': 'csv', 'text/plain': 'txt', 'text/markdown': 'md', 'text/html': 'html',
  'application/msword': 'doc', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
};

/** Converse's tool use IDs ("ToolUseBlock": `[a-zA-Z0-9_-]+`, at most 64 characters). */
const TOOL_USE_ID = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * A tool call's ID as Converse takes it: another provider's ID that it would refuse (a Gemini
 * thought signature riding in it, a longer one) becomes a hash of it, the same for the call
 * and its result, so the pair still matches.
 */
export const converseToolId = (id: string): string => (TOOL_USE_ID.test(id) ? id : `tooluse_${createHash('sha256').update(id).digest('base64url').slice(0, 43)}`);

/** A canonical content part as a Converse content block. */
function partBlock(p: Json, documents: { n: number }): Json | null {
  if (p?.type === 'text') return p.text ? { text: String(p.text) } : null;
  if (p?.type === 'image_url') {
    const url = String(p.image_url?.url ?? p.image_url ?? '');
    const d = dataUrl(url);
    const format = d && IMAGE_FORMATS[d.mediaType.toLowerCase()];
    if (!d) throw new Untranslatable('a Bedrock Converse model takes images as bytes only: send the image inline (a data URL), not its URL');
    if (!format) throw new Untranslatable(`a Bedrock Converse model takes png, jpeg, gif and webp images, not ${d.mediaType}`);
    return { image: { format, source: { bytes: d.data } } };
  }
  if (p?.type === 'file') {
    const d = typeof p.file?.file_data === 'string' ? dataUrl(p.file.file_data) : null;
    const format = d && DOCUMENT_FORMATS[d.mediaType.toLowerCase()];
    if (!d || !format) throw new Untranslatable('a Bedrock Converse model reads documents (pdf, csv, doc, docx, xls, xlsx, html, txt, md) given inline (file_data) only');
    // A document's name may hold letters, digits, spaces, hyphens, parentheses and brackets only ("DocumentBlock").
    const name = `document ${++documents.n}`;
    return { document: { format, name, source: { bytes: d.data } } };
  }
  throw new Untranslatable(`a Bedrock Converse model has no ${String(p?.type)} content part`);
}

function contentBlocks(content: ChatMessage['content'], documents: { n: number }): Json[] {
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  if (!Array.isArray(content)) return [];
  const out: Json[] = [];
  for (const p of content) {
    const b = partBlock(p, documents);
    if (b) out.push(b);
  }
  return out;
}

/** An assistant message's blocks: its signed reasoning (Converse takes back only what it signed), text, tool uses. */
function assistantBlocks(m: ChatMessage, documents: { n: number }): Json[] {
  const out: Json[] = [];
  for (const t of m.thinking_blocks ?? []) {
    if (t.type === 'redacted_thinking' && t.data) out.push({ reasoningContent: { redactedContent: t.data } });
    else if (t.type === 'thinking' && t.signature) out.push({ reasoningContent: { reasoningText: { text: t.thinking ?? '', signature: t.signature } } });
  }
  out.push(...contentBlocks(m.content, documents));
  for (const tc of m.tool_calls ?? []) {
    if (!tc.function) throw new Untranslatable(`a Bedrock Converse model has no ${String(tc.type)} tool calls`);
    out.push({ toolUse: { toolUseId: converseToolId(tc.id), name: tc.function.name, input: parseArguments(tc.function.arguments, tc.function.name) } });
  }
  return out;
}

/** A tool message as a toolResult block: its text, or its parts (a tool may answer with an image). */
function toolResult(m: ChatMessage, documents: { n: number }): Json {
  const content = typeof m.content === 'string' ? [{ text: m.content }] : contentBlocks(m.content, documents);
  // Converse refuses a toolResult without content; an empty answer is an empty text.
  return { toolResult: { toolUseId: converseToolId(String(m.tool_call_id ?? '')), content: content.length ? content : [{ text: '' }] } };
}

function toolConfig(req: ChatRequest, history: boolean): Json | undefined {
  const list = (Array.isArray(req.tools) ? req.tools : []) as Json[];
  const tools = list.map((t) => {
    if (t?.type !== 'function' || !t.function?.name) throw new Untranslatable(`a Bedrock Converse model has no ${String(t?.type)} tools`);
    return {
      toolSpec: {
        name: String(t.function.name),
        ...(t.function.description ? { description: String(t.function.description) } : {}),
        inputSchema: { json: isObject(t.function.parameters) ? t.function.parameters : { type: 'object', properties: {} } },
      },
    };
  });
  if (!tools.length) return undefined;
  const choice = req.tool_choice as unknown;
  // Converse has no "none": the tools are left out, unless the conversation holds tool uses or
  // results, which Bedrock refuses without a toolConfig ("Call a tool with the Converse API").
  if (choice === 'none') return history ? { tools } : undefined;
  const out: Json = { tools };
  if (choice === 'auto') out.toolChoice = { auto: {} };
  else if (choice === 'required') out.toolChoice = { any: {} };
  else if (isObject(choice) && isObject(choice.function) && choice.function.name) out.toolChoice = { tool: { name: String(choice.function.name) } };
  return out;
}

/** The effort words the models that reason on request take (gpt-oss's `reasoning_effort`, Nova 2's `maxReasoningEffort`). */
const EFFORTS: Record<string, string> = { minimal: 'low', low: 'low', medium: 'medium', high: 'high', xhigh: 'high' };

/**
 * Reasoning, for the models whose Bedrock request fields ask for it ("Inference request
 * parameters", Bedrock user guide): OpenAI's gpt-oss (`reasoning_effort`) and Amazon Nova 2
 * (`reasoningConfig`). Other models reason always (DeepSeek R1) or never: nothing to ask.
 */
function reasoningFields(model: string, effort: unknown): Json | undefined {
  const level = typeof effort === 'string' ? EFFORTS[effort] : undefined;
  if (!level) return undefined;
  if (/(^|[./])openai\.gpt-oss/.test(model)) return { reasoning_effort: level };
  if (/(^|[./])amazon\.nova-2/.test(model)) return { reasoningConfig: { type: 'enabled', maxReasoningEffort: level } };
  return undefined;
}

/** The canonical request as a Converse body. */
export function converseRequest(req: ChatRequest): Json {
  refuseChatOnly(req, 'a Bedrock Converse model');
  const system: Json[] = [];
  const { messages, add } = alternatingTurns();
  const documents = { n: 0 };
  let history = false;
  for (const m of req.messages ?? []) {
    if (m.role === 'system' || m.role === 'developer') {
      const t = textOf(m.content);
      if (t) system.push({ text: t });
    } else if (m.role === 'user') add('user', contentBlocks(m.content, documents));
    else if (m.role === 'assistant') {
      if (m.tool_calls?.length) history = true;
      add('assistant', assistantBlocks(m, documents));
    } else if (m.role === 'tool') {
      history = true;
      add('user', [toolResult(m, documents)]);
    } else throw new Untranslatable(`a Bedrock Converse model has no ${String(m.role)} messages`);
  }
  const out: Json = { messages };
  if (system.length) out.system = system;
  const inference: Json = {};
  const max = req.max_completion_tokens ?? req.max_tokens;
  if (typeof max === 'number') inference.maxTokens = max;
  // Converse's temperature runs 0–1 ("InferenceConfiguration"), OpenAI's and Gemini's 0–2.
  if (typeof req.temperature === 'number') inference.temperature = Math.min(1, Math.max(0, req.temperature));
  if (typeof req.top_p === 'number') inference.topP = req.top_p;
  if (typeof req.stop === 'string' && req.stop) inference.stopSequences = [req.stop];
  else if (Array.isArray(req.stop) && req.stop.length) inference.stopSequences = req.stop;
  if (Object.keys(inference).length) out.inferenceConfig = inference;
  const tools = toolConfig(req, history);
  if (tools) out.toolConfig = tools;
  const rf = req.response_format as Json | undefined;
  if (rf?.type === 'json_schema' && isObject(rf.json_schema?.schema)) {
    // Structured output ("OutputConfig"): the schema as JSON text.
    const name = typeof rf.json_schema.name === 'string' ? { name: rf.json_schema.name } : {};
    out.outputConfig = { textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: JSON.stringify(rf.json_schema.schema), ...name } } } };
  } else if (rf && rf.type !== 'text') throw new Untranslatable('response_format json_object has no Bedrock Converse equivalent: use json_schema');
  const extra = reasoningFields(String(req.model ?? ''), req.reasoning_effort);
  if (extra) out.additionalModelRequestFields = extra;
  return out;
}

// ---- answers ----------------------------------------------------------------------------------

/** A Converse message's content blocks as the canonical assistant message. */
function readBlocks(content: unknown): ChatMessage {
  let text = '';
  let sawText = false;
  const calls: ChatToolCall[] = [];
  const thinking: ThinkingBlock[] = [];
  for (const b of (Array.isArray(content) ? content : []) as Json[]) {
    if (!isObject(b)) continue;
    if (typeof b.text === 'string') { text += b.text; sawText = true; }
    else if (isObject(b.toolUse)) {
      const u = b.toolUse;
      calls.push({ id: String(u.toolUseId ?? `tooluse_${randomBytes(9).toString('hex')}`), type: 'function', function: { name: String(u.name ?? ''), arguments: JSON.stringify(u.input ?? {}) } });
    } else if (isObject(b.reasoningContent)) {
      const r = b.reasoningContent;
      if (isObject(r.reasoningText)) thinking.push({ type: 'thinking', thinking: String(r.reasoningText.text ?? ''), signature: typeof r.reasoningText.signature === 'string' ? r.reasoningText.signature : '' });
      else if (typeof r.redactedContent === 'string') thinking.push({ type: 'redacted_thinking', data: r.redactedContent });
    }
  }
  const message: ChatMessage = { role: 'assistant', content: sawText ? text : calls.length ? null : '' };
  if (calls.length) message.tool_calls = calls;
  if (thinking.length) {
    message.reasoning_content = thinking.map((t) => t.thinking ?? '').join('');
    message.thinking_blocks = thinking;
  }
  return message;
}

/** A Converse answer as a canonical chat completion (Converse names neither the answer nor the model: the gateway's ID, the client's model). */
export function converseResponse(doc: Json): ChatResponse {
  if (!isObject(doc) || !isObject(doc.output)) throw new Error('not a Converse answer');
  const message = readBlocks(doc.output.message?.content);
  return {
    id: `chatcmpl-${randomBytes(12).toString('hex')}`,
    object: 'chat.completion',
    created: nowSeconds(),
    model: '',
    choices: [{ index: 0, message, finish_reason: finishOfConverse(doc.stopReason, (message.tool_calls?.length ?? 0) > 0) }],
    usage: usageOfConverse(doc.usage),
  };
}

export const converseProvider: ProviderFormat = {
  fromChat: converseRequest,
  toChatResponse: converseResponse,
  decoder: () => new ConverseDecoder(),
};
