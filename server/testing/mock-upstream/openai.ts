import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import {
  answerText, contentText, estimateTokens, messagesText, mockId, nowSeconds, playStream, sendJson, splitText, stopAt, usageFor,
  type Behaviour, type Frame, type Usage,
} from './common';
import { openaiModelRefusal } from './model-fit';
import { chatToolProblem } from './server-tools';

/** What an endpoint handler gets: the parsed JSON body and the behaviour in force. */
export interface Call {
  req: IncomingMessage;
  res: ServerResponse;
  body: Record<string, unknown>;
  behaviour: Behaviour;
  /** The model to echo (Azure falls back to the deployment name). */
  model: string;
}

const OPENAI_ERROR_TYPES: Record<number, [type: string, code: string]> = {
  400: ['invalid_request_error', 'invalid_request'],
  401: ['invalid_request_error', 'invalid_api_key'],
  403: ['permission_error', 'unsupported_country_region_territory'],
  404: ['invalid_request_error', 'model_not_found'],
  429: ['requests', 'rate_limit_exceeded'],
};

/** An error in OpenAI's shape (also used by Azure and Vertex's OpenAI-compatible endpoint). */
export function openaiError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}, codeOverride?: string): void {
  const [type, statusCode] = OPENAI_ERROR_TYPES[status] ?? (status >= 500 ? ['server_error', 'server_error'] : ['invalid_request_error', `http_${status}`]);
  const code = codeOverride ?? statusCode;
  sendJson(res, status, { error: { message, type, param: null, code } }, headers);
}

function chatUsage(u: Usage) {
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.prompt_tokens + u.completion_tokens,
    prompt_tokens_details: { cached_tokens: u.cached_tokens ?? 0, audio_tokens: u.audio_tokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0, audio_tokens: u.audio_output_tokens ?? 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

type ChatMsg = { role?: string; content?: unknown; tool_calls?: { id?: string }[]; tool_call_id?: string };

const isObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
const typeName = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : `a ${typeof v}`);

/**
 * OpenAI checks the types of a request before anything else and names the place in these words
 * (its API's 400 invalid_type: "Invalid type for 'messages[0]': expected an object, but got null
 * instead.", param `messages[0]`): here the messages and their tool calls, which the mock reads.
 */
function chatShapeProblem(msgs: unknown[]): { param: string; expected: string; got: string } | null {
  for (const [i, m] of msgs.entries()) {
    if (!isObject(m)) return { param: `messages[${i}]`, expected: 'an object', got: typeName(m) };
    const calls = (m as ChatMsg).tool_calls as unknown;
    if (calls == null) continue;
    if (!Array.isArray(calls)) return { param: `messages[${i}].tool_calls`, expected: 'an array of objects', got: typeName(calls) };
    for (const [j, t] of calls.entries()) if (!isObject(t)) return { param: `messages[${i}].tool_calls[${j}]`, expected: 'an object', got: typeName(t) };
  }
  return null;
}

/** OpenAI refuses a tool message that answers no tool call of the assistant turn before it. */
function toolOrderProblem(messages: ChatMsg[]): string | null {
  let open = new Set<string>();
  for (const m of messages) {
    if (m.role === 'assistant') open = new Set((m.tool_calls ?? []).map((t) => String(t.id)));
    else if (m.role === 'tool') {
      if (!open.has(String(m.tool_call_id))) return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
    } else open = new Set();
  }
  return null;
}

/**
 * `POST /v1/chat/completions` (and the Azure and Vertex forms of it): the text cut at a `stop`
 * sequence, or the behaviour's tool call when tools are offered and the last message is not a
 * tool result; `reasoning_content` first when the request sets `reasoning_effort` and the
 * behaviour has thinking.
 */
export async function chatCompletions(c: Call): Promise<void> {
  const msgs = c.body.messages as ChatMsg[];
  const shape = chatShapeProblem(msgs);
  if (shape) return sendJson(c.res, 400, { error: { message: `Invalid type for '${shape.param}': expected ${shape.expected}, but got ${shape.got} instead.`, type: 'invalid_request_error', param: shape.param, code: 'invalid_type' } });
  const order = toolOrderProblem(msgs);
  if (order) return openaiError(c.res, 400, order);
  const toolType = chatToolProblem(c.body.tools);
  if (toolType) return sendJson(c.res, 400, { error: { message: toolType.message, type: 'invalid_request_error', param: toolType.param, code: 'invalid_value' } });
  const refusal = openaiModelRefusal(c.body, c.model);
  if (refusal) return sendJson(c.res, 400, { error: { message: refusal.message, type: 'invalid_request_error', param: refusal.param, code: refusal.code } });
  const text = stopAt(answerText(c.behaviour, c.model), c.body.stop).text;
  const usage = usageFor(c.behaviour, messagesText(c.body.messages), text);
  const id = mockId('chatcmpl-');
  const created = nowSeconds();
  const offered = Array.isArray(c.body.tools) && c.body.tools.length > 0;
  const call = c.behaviour.toolCall && offered && msgs.at(-1)?.role !== 'tool'
    ? { id: mockId('call_'), type: 'function', function: { name: c.behaviour.toolCall.name, arguments: JSON.stringify(c.behaviour.toolCall.arguments) } }
    : null;
  const reasoning = typeof c.body.reasoning_effort === 'string' && c.behaviour.thinking ? c.behaviour.thinking : null;
  const finish = call ? 'tool_calls' : 'stop';
  if (c.body.stream !== true) {
    const message = call
      ? { role: 'assistant', content: null, tool_calls: [call], refusal: null }
      : { role: 'assistant', content: text, refusal: null };
    sendJson(c.res, 200, {
      id, object: 'chat.completion', created, model: c.model, system_fingerprint: 'fp_mock',
      choices: [{ index: 0, message: reasoning ? { ...message, reasoning_content: reasoning } : message, logprobs: null, finish_reason: finish }],
      usage: chatUsage(usage),
    });
    return;
  }
  const opts = c.body.stream_options as { include_usage?: unknown } | undefined;
  const includeUsage = opts?.include_usage === true;
  // With include_usage, OpenAI sends `usage: null` on every chunk but the last.
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): Frame => ({
    data: { id, object: 'chat.completion.chunk', created, model: c.model, system_fingerprint: 'fp_mock', choices, ...(includeUsage ? { usage: null } : {}), ...extra },
  });
  const delta = (d: Record<string, unknown>) => chunk([{ index: 0, delta: d, logprobs: null, finish_reason: null }]);
  const head: Frame[] = reasoning ? [delta({ role: 'assistant', content: null, reasoning_content: reasoning })] : [];
  let content: Frame[];
  if (call) {
    head.push(delta({ ...(reasoning ? {} : { role: 'assistant', content: null }), tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }));
    content = splitText(call.function.arguments, c.behaviour.chunks ?? 2).map((a) => delta({ tool_calls: [{ index: 0, function: { arguments: a } }] }));
  } else {
    content = splitText(text, c.behaviour.chunks ?? 3).map((p, i) => delta(i === 0 && !reasoning ? { role: 'assistant', content: p } : { content: p }));
  }
  const tail: Frame[] = [chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: finish }])];
  if (includeUsage) tail.push(chunk([], { usage: chatUsage(usage) }));
  if (!c.behaviour.omitDone) tail.push({ data: '[DONE]' });
  await playStream(c.req, c.res, c.behaviour, { head, content, tail });
}

function responsesInputText(body: Record<string, unknown>): string {
  const input = body.input;
  const instructions = typeof body.instructions === 'string' ? body.instructions : '';
  const text = typeof input === 'string' ? input : Array.isArray(input)
    ? input.map((item) => (item && typeof item === 'object' ? contentText((item as { content?: unknown }).content) : '')).join('\n')
    : '';
  return instructions ? `${instructions}\n${text}` : text;
}

function responsesUsage(u: Usage) {
  return {
    input_tokens: u.prompt_tokens,
    input_tokens_details: { cached_tokens: u.cached_tokens ?? 0 },
    output_tokens: u.completion_tokens,
    output_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0 },
    total_tokens: u.prompt_tokens + u.completion_tokens,
  };
}

/** Stored responses per upstream credential: as at OpenAI, a response is known only to the organization (here: key) that created it. */
const storedResponses = new Map<string, Set<string>>();
/** Reasoning item IDs per credential (kept with their stored response), and the encrypted contents the mock made. */
const storedReasoning = new Map<string, Set<string>>();
const sealedReasoning = new Set<string>();

const remember = (map: Map<string, Set<string>>, credential: string, id: string) => {
  let set = map.get(credential);
  if (!set) map.set(credential, (set = new Set()));
  set.add(id);
};

type Item = Record<string, any>;

/**
 * As OpenAI refuses them: a reasoning item whose encrypted content it did not make, or given by
 * an ID it does not keep for this organization.
 */
function reasoningProblem(input: unknown, credential: string): [message: string, code: string | undefined] | null {
  for (const item of (Array.isArray(input) ? input : []) as Item[]) {
    if (item?.type !== 'reasoning') continue;
    if (typeof item.encrypted_content === 'string') {
      if (!sealedReasoning.has(item.encrypted_content)) return [`The encrypted content for item ${String(item.id)} could not be verified.`, 'invalid_encrypted_content'];
    } else if (!storedReasoning.get(credential)?.has(String(item.id))) {
      return [`Item with id '${String(item.id)}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`, undefined];
    }
  }
  return null;
}

/**
 * As OpenAI refuses it: an `item_reference` to an item this credential's stored responses do not
 * hold (API reference, "Item reference: an internal identifier for an item to reference"; the
 * answer is the one OpenAI gives an unknown item ID, "Item with id '…' not found.").
 */
function referenceProblem(input: unknown, credential: string): [message: string, code: string | undefined] | null {
  for (const item of (Array.isArray(input) ? input : []) as Item[]) {
    if (item?.type !== 'item_reference') continue;
    const held = [...(keptResponses.get(credential)?.values() ?? [])].some((k) => [...k.input, ...(k.response.output as Item[])].some((it) => it.id === item.id));
    if (!held) return [`Item with id '${String(item.id)}' not found.`, undefined];
  }
  return null;
}

/**
 * `POST /v1/responses`: the Responses API, whole or as its typed event stream: a reasoning item
 * first when the request sets `reasoning.effort` and the behaviour has thinking (its summary
 * with `reasoning.summary`, its encrypted content with `include`), then the text, or the
 * behaviour's function call when tools are offered and the input does not end with its output.
 * A `previous_response_id` or a reasoning item this credential did not create is refused as
 * OpenAI refuses it.
 */
export async function responses(c: Call): Promise<void> {
  const credential = /^Bearer\s+(\S+)$/i.exec(c.req.headers.authorization ?? '')?.[1] ?? '';
  const previous = c.body.previous_response_id;
  if (typeof previous === 'string' && !storedResponses.get(credential)?.has(previous)) {
    return sendJson(c.res, 400, { error: { message: `Previous response with id '${previous}' not found.`, type: 'invalid_request_error', param: 'previous_response_id', code: 'previous_response_not_found' } });
  }
  const problem = reasoningProblem(c.body.input, credential) ?? referenceProblem(c.body.input, credential);
  if (problem) return openaiError(c.res, 400, problem[0], {}, problem[1]);
  const text = answerText(c.behaviour, c.model);
  const usage = usageFor(c.behaviour, responsesInputText(c.body), text);
  const id = mockId('resp_');
  const stored = c.body.store !== false;
  if (stored) remember(storedResponses, credential, id);
  const reasoning = c.body.reasoning as { effort?: unknown; summary?: unknown } | undefined;
  const thinking = typeof reasoning?.effort === 'string' && reasoning.effort !== 'none' ? c.behaviour.thinking : undefined;
  const input = Array.isArray(c.body.input) ? (c.body.input as Item[]) : [];
  const callDue = c.behaviour.toolCall && Array.isArray(c.body.tools) && c.body.tools.length > 0 && input.at(-1)?.type !== 'function_call_output';
  const output: Item[] = [];
  if (thinking !== undefined) {
    const rs = { type: 'reasoning', id: mockId('rs_'), summary: reasoning?.summary ? [{ type: 'summary_text', text: thinking }] : [] } as Item;
    if (Array.isArray(c.body.include) && c.body.include.includes('reasoning.encrypted_content')) sealedReasoning.add((rs.encrypted_content = `gAAAAB${mockId('')}`));
    if (stored) remember(storedReasoning, credential, rs.id);
    output.push(rs);
  }
  const msgId = mockId('msg_');
  const part = (t: string) => ({ type: 'output_text', text: t, annotations: [], logprobs: [] });
  const message = (t: string, status: string) => ({ type: 'message', id: msgId, status, role: 'assistant', content: t === '' && status === 'in_progress' ? [] : [part(t)] });
  const call = callDue
    ? { type: 'function_call', id: mockId('fc_'), call_id: mockId('call_'), name: c.behaviour.toolCall!.name, arguments: JSON.stringify(c.behaviour.toolCall!.arguments), status: 'completed' }
    : null;
  output.push(call ?? message(text, 'completed'));
  const base = {
    id, object: 'response', created_at: nowSeconds(), model: c.model, error: null, incomplete_details: null,
    instructions: typeof c.body.instructions === 'string' ? c.body.instructions : null,
    metadata: {}, parallel_tool_calls: true, temperature: 1, tool_choice: 'auto', tools: [], top_p: 1,
  };
  const done = { ...base, status: 'completed', output, usage: responsesUsage(usage) };
  if (stored) keepResponse(credential, done, c.body);
  if (c.body.stream !== true) {
    sendJson(c.res, 200, done);
    return;
  }
  let seq = 0;
  const ev = (type: string, fields: Record<string, unknown>): Frame => ({ event: type, data: { type, sequence_number: seq++, ...fields } });
  const running = { ...base, status: 'in_progress', output: [], usage: null };
  const at = output.length - 1;
  const head = [ev('response.created', { response: running }), ev('response.in_progress', { response: running })];
  // The reasoning item whole, before the answer's deltas.
  if (at > 0) head.push(ev('response.output_item.added', { output_index: 0, item: output[0] }), ev('response.output_item.done', { output_index: 0, item: output[0] }));
  let content: Frame[];
  let tail: Frame[];
  if (call) {
    head.push(ev('response.output_item.added', { output_index: at, item: { ...call, arguments: '', status: 'in_progress' } }));
    content = splitText(call.arguments, c.behaviour.chunks ?? 2).map((delta) => ev('response.function_call_arguments.delta', { item_id: call.id, output_index: at, delta }));
    tail = [ev('response.function_call_arguments.done', { item_id: call.id, output_index: at, name: call.name, arguments: call.arguments })];
  } else {
    head.push(
      ev('response.output_item.added', { output_index: at, item: message('', 'in_progress') }),
      ev('response.content_part.added', { item_id: msgId, output_index: at, content_index: 0, part: part('') }),
    );
    content = splitText(text, c.behaviour.chunks ?? 3).map((delta) =>
      ev('response.output_text.delta', { item_id: msgId, output_index: at, content_index: 0, delta, logprobs: [] }));
    tail = [
      ev('response.output_text.done', { item_id: msgId, output_index: at, content_index: 0, text, logprobs: [] }),
      ev('response.content_part.done', { item_id: msgId, output_index: at, content_index: 0, part: part(text) }),
    ];
  }
  tail.push(ev('response.output_item.done', { output_index: at, item: output[at] }), ev('response.completed', { response: done }));
  await playStream(c.req, c.res, c.behaviour, { head, content, tail });
}

/** A deterministic unit-ish vector per input text, so equal inputs embed equally. */
function vectorOf(text: string, dims: number): number[] {
  const out: number[] = [];
  for (let i = 0; out.length < dims; i++) {
    const h = createHash('sha256').update(`${i}:${text}`).digest();
    for (let j = 0; j + 4 <= h.length && out.length < dims; j += 4) out.push(h.readInt32LE(j) / 2 ** 31);
  }
  return out;
}

/** `POST /v1/embeddings`; honours `encoding_format: "base64"`, which the openai SDK asks for by default. */
export function embeddings(c: Call): void {
  const raw = c.body.input;
  const inputs: unknown[] = Array.isArray(raw) && raw.length > 0 && typeof raw[0] !== 'number' ? raw : [raw];
  if (raw === undefined || inputs.some((i) => typeof i !== 'string' && !Array.isArray(i))) {
    openaiError(c.res, 400, "'input' must be a string, an array of strings or an array of token arrays");
    return;
  }
  const dims = typeof c.body.dimensions === 'number' && c.body.dimensions > 0 ? Math.min(c.body.dimensions, 4096) : 8;
  const texts = inputs.map((i) => (typeof i === 'string' ? i : JSON.stringify(i)));
  const base64 = c.body.encoding_format === 'base64';
  const data = texts.map((t, index) => {
    const v = vectorOf(t, dims);
    const embedding = base64 ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v;
    return { object: 'embedding', index, embedding };
  });
  const prompt = c.behaviour.usage?.prompt_tokens ?? texts.reduce((n, t) => n + estimateTokens(t), 0);
  sendJson(c.res, 200, { object: 'list', data, model: c.model, usage: { prompt_tokens: prompt, total_tokens: prompt } });
}

/** The stored responses themselves per credential, with their input items (a continuation's whole conversation, as OpenAI lists it). */
const keptResponses = new Map<string, Map<string, { response: Item; input: Item[] }>>();

function keepResponse(credential: string, response: Item, body: Record<string, unknown>): void {
  let kept = keptResponses.get(credential);
  if (!kept) keptResponses.set(credential, (kept = new Map()));
  const previous = typeof body.previous_response_id === 'string' ? kept.get(body.previous_response_id) : undefined;
  const given = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : Array.isArray(body.input) ? (body.input as Item[]) : [];
  const input = given.map((item): Item => {
    const it: Item = { ...item, id: item.id ?? mockId('msg_') };
    if (it.type === undefined || it.type === 'message') {
      it.type = 'message';
      it.status ??= 'completed';
      if (typeof it.content === 'string') it.content = [{ type: it.role === 'assistant' ? 'output_text' : 'input_text', text: it.content }];
    }
    return it;
  });
  kept.set(response.id, { response, input: [...(previous ? [...previous.input, ...previous.response.output] : []), ...input] });
}

/**
 * `GET /v1/responses/{id}`, `GET /v1/responses/{id}/input_items` (limit, order, after) and
 * `DELETE /v1/responses/{id}`: a response this credential stored, as OpenAI answers them; any
 * other ID (another key's, deleted, never made) is 404.
 */
export function storedResponse(res: ServerResponse, credential: string | null, method: string, id: string, items: boolean, query: URLSearchParams): void {
  const kept = keptResponses.get(credential ?? '')?.get(id);
  if (!credential) return openaiError(res, 401, 'No API key provided.');
  if (!kept || (items && method !== 'GET')) {
    return sendJson(res, 404, { error: { message: `Response with id '${id}' not found.`, type: 'invalid_request_error', param: null, code: null } });
  }
  if (method === 'DELETE') {
    keptResponses.get(credential)!.delete(id);
    storedResponses.get(credential)?.delete(id);
    return sendJson(res, 200, { id, object: 'response.deleted', deleted: true });
  }
  if (!items) return sendJson(res, 200, kept.response);
  const limit = Number(query.get('limit') ?? 20);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) return openaiError(res, 400, `Invalid 'limit': integer out of range (${String(query.get('limit'))}).`);
  const all = query.get('order') === 'asc' ? [...kept.input] : [...kept.input].reverse();
  const after = query.get('after');
  const start = after === null ? 0 : all.findIndex((it) => it.id === after) + 1;
  const data = after !== null && start === 0 ? [] : all.slice(start, start + limit);
  sendJson(res, 200, { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: start + data.length < all.length && data.length > 0 });
}
