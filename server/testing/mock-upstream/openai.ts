import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import {
  answerText, contentText, estimateTokens, messagesText, mockId, nowSeconds, playStream, sendJson, splitText, stopAt, usageFor,
  type Behaviour, type Frame, type Usage,
} from './common';

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
    prompt_tokens_details: { cached_tokens: u.cached_tokens ?? 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

type ChatMsg = { role?: string; content?: unknown; tool_calls?: { id?: string }[]; tool_call_id?: string };

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
  const order = toolOrderProblem(msgs);
  if (order) return openaiError(c.res, 400, order);
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

/**
 * `POST /v1/responses`: the Responses API, whole or as its typed event stream. A
 * `previous_response_id` this credential did not create is refused as OpenAI refuses it.
 */
export async function responses(c: Call): Promise<void> {
  const credential = /^Bearer\s+(\S+)$/i.exec(c.req.headers.authorization ?? '')?.[1] ?? '';
  const previous = c.body.previous_response_id;
  if (typeof previous === 'string' && !storedResponses.get(credential)?.has(previous)) {
    return sendJson(c.res, 400, { error: { message: `Previous response with id '${previous}' not found.`, type: 'invalid_request_error', param: 'previous_response_id', code: 'previous_response_not_found' } });
  }
  const text = answerText(c.behaviour, c.model);
  const usage = usageFor(c.behaviour, responsesInputText(c.body), text);
  const id = mockId('resp_');
  if (c.body.store !== false) {
    let set = storedResponses.get(credential);
    if (!set) storedResponses.set(credential, (set = new Set()));
    set.add(id);
  }
  const msgId = mockId('msg_');
  const base = {
    id, object: 'response', created_at: nowSeconds(), model: c.model, error: null, incomplete_details: null,
    instructions: typeof c.body.instructions === 'string' ? c.body.instructions : null,
    metadata: {}, parallel_tool_calls: true, temperature: 1, tool_choice: 'auto', tools: [], top_p: 1,
  };
  const part = (t: string) => ({ type: 'output_text', text: t, annotations: [], logprobs: [] });
  const message = (t: string, status: string) => ({ type: 'message', id: msgId, status, role: 'assistant', content: t === '' && status === 'in_progress' ? [] : [part(t)] });
  const done = { ...base, status: 'completed', output: [message(text, 'completed')], usage: responsesUsage(usage) };
  if (c.body.stream !== true) {
    sendJson(c.res, 200, done);
    return;
  }
  let seq = 0;
  const ev = (type: string, fields: Record<string, unknown>): Frame => ({ event: type, data: { type, sequence_number: seq++, ...fields } });
  const running = { ...base, status: 'in_progress', output: [], usage: null };
  const head = [
    ev('response.created', { response: running }),
    ev('response.in_progress', { response: running }),
    ev('response.output_item.added', { output_index: 0, item: message('', 'in_progress') }),
    ev('response.content_part.added', { item_id: msgId, output_index: 0, content_index: 0, part: part('') }),
  ];
  const content = splitText(text, c.behaviour.chunks ?? 3).map((delta) =>
    ev('response.output_text.delta', { item_id: msgId, output_index: 0, content_index: 0, delta, logprobs: [] }));
  const tail = [
    ev('response.output_text.done', { item_id: msgId, output_index: 0, content_index: 0, text, logprobs: [] }),
    ev('response.content_part.done', { item_id: msgId, output_index: 0, content_index: 0, part: part(text) }),
    ev('response.output_item.done', { output_index: 0, item: message(text, 'completed') }),
    ev('response.completed', { response: done }),
  ];
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
