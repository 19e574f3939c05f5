import type { ServerResponse } from 'node:http';
import { answerText, estimateTokens, mockId, sendJson, sleep, splitText, stopAt, type Behaviour } from './common';

/**
 * Bedrock's Converse and ConverseStream (`POST /model/{modelId}/converse`, `/converse-stream`),
 * as strict as AWS's: what the Bedrock API reference ("Converse", and the data types it names:
 * Message, ContentBlock, ToolConfiguration, InferenceConfiguration) says a request must be is
 * checked, and a request that is not gets AWS's 400 ValidationException with AWS's wording.
 * The answer is the behaviour's text (cut at a stop sequence or at `maxTokens`, with the stop
 * reason that says so), or its tool call when the request offers tools and its last turn is
 * not a tool result; usage as Converse's TokenUsage. Streams are AWS event-stream frames.
 */

type Json = Record<string, any>;
export type AwsFail = (status: number, name: string, message: string) => void;
export type Framer = (eventType: string, payload: unknown, messageType?: 'event' | 'exception') => Uint8Array;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The members of a Converse request body ("Converse", Request Syntax); the model is in the path.
 * Any other member (`model`, `max_tokens`, `stream`…) is refused, stricter than the service may
 * be, so the gateway never counts on a field it sends being ignored.
 */
const REQUEST_FIELDS = new Set([
  'messages', 'system', 'inferenceConfig', 'toolConfig', 'guardrailConfig', 'additionalModelRequestFields', 'promptVariables',
  'additionalModelResponseFieldPaths', 'requestMetadata', 'performanceConfig', 'serviceTier', 'outputConfig',
]);
/** "InferenceConfiguration": its four members. */
const INFERENCE_FIELDS = new Set(['maxTokens', 'temperature', 'topP', 'stopSequences']);
/** "ContentBlock" is a union: exactly one of these members. */
const BLOCK_MEMBERS = new Set(['text', 'image', 'document', 'video', 'audio', 'toolUse', 'toolResult', 'guardContent', 'reasoningContent', 'cachePoint', 'citationsContent', 'searchResult']);
/** "ImageBlock" formats. */
const IMAGE_FORMATS = new Set(['png', 'jpeg', 'gif', 'webp']);
/** "ToolUseBlock" / "ToolResultBlock": toolUseId pattern `[a-zA-Z0-9_-]+`, 1 to 64 characters. */
const TOOL_USE_ID = /^[a-zA-Z0-9_-]{1,64}$/;
/** "ToolSpecification": name pattern `[a-zA-Z0-9_-]+`, 1 to 64 characters. */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** What Bedrock refuses in a Converse body, as its ValidationException says it; null when it takes it. */
export function converseProblem(body: Json): string | null {
  for (const k of Object.keys(body)) if (!REQUEST_FIELDS.has(k)) return `Malformed input request: extraneous key [${k}] is not permitted, please reformat your input and try again.`;
  const msgs = body.messages;
  if (!Array.isArray(msgs) || msgs.length === 0) return 'A conversation must start with a user message. Try again with a conversation that starts with a user message.';
  if (body.system !== undefined) {
    if (!Array.isArray(body.system)) return "1 validation error detected: Value at 'system' failed to satisfy constraint: Member must be a list";
    for (let i = 0; i < body.system.length; i++) {
      const b = body.system[i];
      if (!isObject(b) || Object.keys(b).length !== 1) return `The system content block at system.${i} must have exactly one member.`;
      if ('text' in b && (typeof b.text !== 'string' || !b.text.trim())) return `The text field in the SystemContentBlock object at system.${i} is blank. Add text to the text field, and try again.`;
    }
  }
  const inference = body.inferenceConfig;
  if (inference !== undefined) {
    if (!isObject(inference)) return "1 validation error detected: Value at 'inferenceConfig' failed to satisfy constraint: Member must be an object";
    for (const k of Object.keys(inference)) if (!INFERENCE_FIELDS.has(k)) return `Malformed input request: extraneous key [${k}] is not permitted in inferenceConfig.`;
    if (inference.maxTokens !== undefined && (!Number.isInteger(inference.maxTokens) || inference.maxTokens < 1)) return "1 validation error detected: Value at 'inferenceConfig.maxTokens' failed to satisfy constraint: Member must have value greater than or equal to 1";
    for (const k of ['temperature', 'topP'] as const) {
      const v = inference[k];
      if (v !== undefined && (typeof v !== 'number' || v < 0 || v > 1)) return `1 validation error detected: Value '${v}' at 'inferenceConfig.${k}' failed to satisfy constraint: Member must have value less than or equal to 1`;
    }
    const stops = inference.stopSequences;
    if (stops !== undefined && (!Array.isArray(stops) || stops.some((s: unknown) => typeof s !== 'string' || !s))) return "1 validation error detected: Value at 'inferenceConfig.stopSequences' failed to satisfy constraint: Member must satisfy constraint: [Member must have length greater than or equal to 1]";
  }
  const tools = body.toolConfig;
  if (tools !== undefined) {
    const problem = toolConfigProblem(tools);
    if (problem) return problem;
  }
  if (body.additionalModelRequestFields !== undefined && !isObject(body.additionalModelRequestFields)) return 'The format of the value at additionalModelRequestFields is invalid. Provide a JSON object for the field and try again.';
  return messagesProblem(msgs, tools !== undefined);
}

function toolConfigProblem(tc: unknown): string | null {
  if (!isObject(tc) || !Array.isArray(tc.tools) || tc.tools.length === 0) return "1 validation error detected: Value at 'toolConfig.tools' failed to satisfy constraint: Member must have length greater than or equal to 1";
  for (let i = 0; i < tc.tools.length; i++) {
    const t = tc.tools[i];
    if (!isObject(t) || Object.keys(t).length !== 1) return `The tool at toolConfig.tools.${i} must have exactly one member.`;
    if (t.cachePoint !== undefined) continue;
    const spec = t.toolSpec;
    if (!isObject(spec)) return `The tool at toolConfig.tools.${i} is not a toolSpec.`;
    if (typeof spec.name !== 'string' || !TOOL_NAME.test(spec.name)) return `1 validation error detected: Value at 'toolConfig.tools.${i + 1}.member.toolSpec.name' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+`;
    if (!isObject(spec.inputSchema) || !isObject(spec.inputSchema.json)) return `The value at toolConfig.tools.${i}.toolSpec.inputSchema.json is invalid. Provide a JSON object for the field and try again.`;
  }
  const choice = tc.toolChoice;
  if (choice !== undefined) {
    if (!isObject(choice) || Object.keys(choice).length !== 1 || !['auto', 'any', 'tool'].includes(Object.keys(choice)[0])) return 'The value at toolConfig.toolChoice is invalid: provide exactly one of auto, any or tool.';
    if ('tool' in choice && (!isObject(choice.tool) || typeof choice.tool.name !== 'string')) return "1 validation error detected: Value at 'toolConfig.toolChoice.tool.name' failed to satisfy constraint: Member must not be null";
  }
  return null;
}

/**
 * The conversation's rules ("Message", "Call a tool with the Converse API"): it starts with a
 * user message and alternates; content is a non-empty list of blocks with one member each, no
 * blank text, a document only beside a text block; images and documents only in user turns, toolUse only in assistant turns,
 * toolResult only in user turns, each toolUse answered by a toolResult in the next turn and no
 * toolResult without its toolUse; tool blocks need a toolConfig.
 */
function messagesProblem(msgs: unknown[], hasTools: boolean): string | null {
  let open: string[] = [];
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i];
    if (!isObject(m)) return `The message at messages.${i} is not an object.`;
    if (m.role !== 'user' && m.role !== 'assistant') return `1 validation error detected: Value '${String(m.role)}' at 'messages.${i + 1}.member.role' failed to satisfy constraint: Member must satisfy enum value set: [user, assistant]`;
    if (i === 0 && m.role !== 'user') return 'A conversation must start with a user message. Try again with a conversation that starts with a user message.';
    if (i > 0 && (msgs[i - 1] as Json).role === m.role) return 'A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.';
    if (!Array.isArray(m.content) || m.content.length === 0) return `The content field in the Message object at messages.${i} is empty. Add a ContentBlock object to the content field and try again.`;
    const uses: string[] = [];
    const results: string[] = [];
    for (let j = 0; j < m.content.length; j++) {
      const b = m.content[j];
      const at = `messages.${i}.content.${j}`;
      if (!isObject(b)) return `The content block at ${at} is not an object.`;
      const keys = Object.keys(b);
      if (keys.length !== 1 || !BLOCK_MEMBERS.has(keys[0])) return `The content block at ${at} must have exactly one member of ContentBlock (it has ${keys.join(', ') || 'none'}).`;
      const problem = blockProblem(keys[0], b[keys[0]], m.role, at);
      if (problem) return problem;
      if (keys[0] === 'toolUse') uses.push(b.toolUse.toolUseId);
      if (keys[0] === 'toolResult') results.push(b.toolResult.toolUseId);
    }
    // "Message": a content list with a document must also hold a text block.
    if (m.content.some((c: Json) => isObject(c) && c.document) && !m.content.some((c: Json) => isObject(c) && typeof c.text === 'string')) return `The model returned the following errors: A document block at messages.${i}.content must come with a text block.`;
    if ((uses.length || results.length) && !hasTools) return 'The toolConfig field must be defined when using toolUse and toolResult content blocks.';
    if (m.role === 'user') {
      const unmatched = results.filter((id) => !open.includes(id));
      if (unmatched.length) return `The number of toolResult blocks at messages.${i}.content exceeds the number of toolUse blocks of previous turn.`;
      const missing = open.filter((id) => !results.includes(id));
      if (missing.length) return `Expected toolResult blocks at messages.${i}.content for the following Ids: ${missing.join(', ')}`;
      open = [];
    } else open = uses;
  }
  return null;
}

function blockProblem(member: string, v: unknown, role: string, at: string): string | null {
  if (member === 'text') return typeof v === 'string' && v.trim() ? null : `The text field in the ContentBlock object at ${at} is blank. Add text to the text field, and try again.`;
  if (!isObject(v)) return `The ${member} field in the ContentBlock object at ${at} is invalid.`;
  if (member === 'image' || member === 'document' || member === 'video') {
    if (role !== 'user') return `The model returned the following errors: ${member} content is only supported in user messages (${at}).`;
    if (member === 'image' && !IMAGE_FORMATS.has(v.format)) return `1 validation error detected: Value '${String(v.format)}' at '${at}.image.format' failed to satisfy constraint: Member must satisfy enum value set: [png, jpeg, gif, webp]`;
    const bytes = v.source?.bytes;
    if (typeof bytes !== 'string' || !bytes || !BASE64.test(bytes)) return `The ${member} source at ${at} must carry its bytes (base64).`;
    return null;
  }
  if (member === 'toolUse') {
    if (role !== 'assistant') return `The toolUse block at ${at} can only be in an assistant message.`;
    if (typeof v.toolUseId !== 'string' || !TOOL_USE_ID.test(v.toolUseId)) return `1 validation error detected: Value at '${at}.toolUse.toolUseId' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+`;
    if (typeof v.name !== 'string' || !v.name) return `1 validation error detected: Value null at '${at}.toolUse.name' failed to satisfy constraint: Member must not be null`;
    if (!isObject(v.input)) return `The value at ${at}.toolUse.input is invalid. Provide a JSON object for the field and try again.`;
    return null;
  }
  if (member === 'toolResult') {
    if (role !== 'user') return `The toolResult block at ${at} can only be in a user message.`;
    if (typeof v.toolUseId !== 'string' || !TOOL_USE_ID.test(v.toolUseId)) return `1 validation error detected: Value at '${at}.toolResult.toolUseId' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+`;
    if (!Array.isArray(v.content)) return `1 validation error detected: Value null at '${at}.toolResult.content' failed to satisfy constraint: Member must not be null`;
    if (v.status !== undefined && v.status !== 'success' && v.status !== 'error') return `1 validation error detected: Value '${String(v.status)}' at '${at}.toolResult.status' failed to satisfy constraint: Member must satisfy enum value set: [success, error]`;
    return null;
  }
  if (member === 'reasoningContent' && role !== 'assistant') return `The reasoningContent block at ${at} can only be in an assistant message.`;
  return null;
}

const blocksText = (content: unknown): string => (Array.isArray(content) ? content.map((c): string => (typeof c?.text === 'string' ? c.text : typeof c?.toolResult === 'object' ? blocksText(c.toolResult.content) : '')).join('') : '');

/** The reasoning the request asks for, in the fields of the models that take it (gpt-oss, Nova 2). */
const asksReasoning = (extra: unknown) => isObject(extra) && (typeof extra.reasoning_effort === 'string' || extra.reasoningConfig?.type === 'enabled');

/** The input tokens of a Converse request, as the mock counts them (its answers' usage counts the same way). */
export function converseInputTokens(body: Json): number {
  const system = Array.isArray(body.system) ? blocksText(body.system) : '';
  const msgs = Array.isArray(body.messages) ? body.messages as Json[] : [];
  return estimateTokens([system, msgs.map((m) => blocksText(m?.content)).join('\n')].filter(Boolean).join('\n'));
}

interface Answer {
  blocks: Json[];
  stopReason: string;
  usage: Json;
}

function answer(body: Json, modelId: string, b: Behaviour): Answer {
  const msgs = body.messages as Json[];
  const last = msgs.at(-1)!;
  const answersTool = last.role === 'user' && last.content.some((c: Json) => c.toolResult);
  const blocks: Json[] = [];
  let stopReason = 'end_turn';
  if (b.thinking && asksReasoning(body.additionalModelRequestFields)) blocks.push({ reasoningContent: { reasoningText: { text: b.thinking } } });
  let outText = '';
  if (b.toolCall && body.toolConfig && !answersTool) {
    blocks.push({ toolUse: { toolUseId: `tooluse_${mockId('')}`, name: b.toolCall.name, input: b.toolCall.arguments } });
    stopReason = 'tool_use';
    outText = JSON.stringify(b.toolCall.arguments);
  } else {
    const cut = stopAt(answerText(b, modelId), body.inferenceConfig?.stopSequences);
    let text = cut.text;
    if (cut.stop !== null) stopReason = 'stop_sequence';
    const max = body.inferenceConfig?.maxTokens;
    if (typeof max === 'number' && estimateTokens(text) > max) {
      text = text.slice(0, max * 4);
      stopReason = 'max_tokens';
    }
    blocks.push({ text });
    outText = text;
  }
  const u = b.usage ?? { prompt_tokens: converseInputTokens(body), completion_tokens: estimateTokens(outText + (b.thinking ?? '')) };
  const cached = u.cached_tokens ?? 0;
  const written = u.cache_write_tokens ?? 0;
  const usage = {
    inputTokens: u.prompt_tokens - cached - written, outputTokens: u.completion_tokens, totalTokens: u.prompt_tokens + u.completion_tokens,
    cacheReadInputTokens: cached, cacheWriteInputTokens: written,
  };
  return { blocks, stopReason, usage };
}

/** `/converse` and `/converse-stream`. */
export async function converse(res: ServerResponse, modelId: string, body: Json, b: Behaviour, stream: boolean, fail: AwsFail, frame: Framer, streamType: string): Promise<void> {
  const problem = converseProblem(body);
  if (problem) return fail(400, 'ValidationException', problem);
  const a = answer(body, modelId, b);
  if (!stream) {
    sendJson(res, 200, { metrics: { latencyMs: 1 }, output: { message: { role: 'assistant', content: a.blocks } }, stopReason: a.stopReason, usage: a.usage });
    return;
  }
  res.writeHead(200, { 'content-type': streamType, 'x-amzn-requestid': mockId('req-') });
  // The content frames, which the behaviour's cut, stall and error count.
  const content: Uint8Array[] = [];
  const closing: Uint8Array[] = [];
  a.blocks.forEach((block, index) => {
    if (block.toolUse) {
      content.push(frame('contentBlockStart', { contentBlockIndex: index, start: { toolUse: { toolUseId: block.toolUse.toolUseId, name: block.toolUse.name } } }));
      for (const piece of splitText(JSON.stringify(block.toolUse.input), b.chunks ?? 3)) content.push(frame('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: piece } } }));
    } else if (block.reasoningContent) {
      for (const piece of splitText(block.reasoningContent.reasoningText.text, b.chunks ?? 3)) content.push(frame('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { text: piece } } }));
    } else {
      for (const piece of splitText(block.text, b.chunks ?? 3)) content.push(frame('contentBlockDelta', { contentBlockIndex: index, delta: { text: piece } }));
    }
    content.push(frame('contentBlockStop', { contentBlockIndex: index }));
  });
  closing.push(frame('messageStop', { stopReason: a.stopReason }), frame('metadata', { usage: a.usage, metrics: { latencyMs: 1 } }));
  res.write(frame('messageStart', { role: 'assistant' }));
  for (let i = 0; i < content.length; i++) {
    if (res.destroyed) return;
    if (b.cutAfterChunks !== undefined && i === b.cutAfterChunks) return void res.destroy();
    if (b.streamError && i === b.streamError.afterChunks) {
      // ConverseStream's exceptions arrive as exception events ("ConverseStreamOutput": modelStreamErrorException and the others).
      res.end(frame('modelStreamErrorException', { message: 'The model stream failed', originalStatusCode: 500 }, 'exception'));
      return;
    }
    res.write(content[i]);
    if (b.chunkDelayMs) await sleep(b.chunkDelayMs);
  }
  for (const f of closing) res.write(f);
  res.end();
}
