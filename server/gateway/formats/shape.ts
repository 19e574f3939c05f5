import { z } from 'zod';
import type { Endpoint } from '../providers/types';
import type { Json } from './types';

/**
 * The shapes the translators read, checked before a client's request is translated: a body
 * whose messages, content parts, tool calls or tools are not what its format documents is the
 * client's mistake, refused at once with 400 naming the JSON path (`messages.0: expected an
 * object, got null`), never a TypeError deep in a converter. Only what the converters rely on
 * is checked; every other field goes on as it came, and a field a provider cannot express is
 * the converter's own refusal (Untranslatable). A call the key serves in its own format is
 * never checked here: its bytes go to the provider, which refuses a bad body itself.
 */

/**
 * A request that does not have its format's shape: refused with 400 invalid_request whatever
 * the key, unlike Untranslatable, which only makes that key be skipped.
 */
export class MalformedRequest extends Error {}

type Issue = z.core.$ZodIssue;
type Check = (v: Json, ctx: z.RefinementCtx) => void;

const text = z.string();
const anyObject = z.looseObject({});
const typedObject = z.looseObject({ type: text });
const strings = z.array(text);

/** Fields a member of a typed list must have, per its `type`: other types pass, for the converter to translate or refuse. */
function byType(fields: Record<string, z.ZodType>): Check {
  return (v, ctx) => {
    const s = fields[v.type];
    if (!s) return;
    const r = s.safeParse(v, { reportInput: true });
    if (r.success) return;
    for (const i of r.error.issues) {
      const { path, message } = innermost(i);
      ctx.addIssue({ code: 'custom', message, path, input: v });
    }
  };
}

// ---- OpenAI Chat Completions (and the canonical form) -----------------------------------------

const chatContent = z.union([text, z.array(typedObject)], { error: 'expected a string or an array of content parts' }).nullish();

const functionCall = byType({ function: z.looseObject({ function: z.looseObject({ name: text, arguments: text.optional() }) }) });

// A tool call without a `type` is a function call.
const chatToolCall = z.looseObject({ id: text, type: text.optional() }).superRefine((v, ctx) => functionCall(v.type === undefined ? { ...v, type: 'function' } : v, ctx));

const chatMessage = z.looseObject({
  role: text,
  content: chatContent,
  tool_calls: z.array(chatToolCall).nullish(),
  tool_call_id: text.nullish(),
  reasoning_content: text.nullish(),
  thinking_blocks: z.array(typedObject).nullish(),
});

const chatRequest = z.looseObject({
  messages: z.array(chatMessage),
  tools: z.array(typedObject.superRefine(byType({ function: z.looseObject({ function: z.looseObject({ name: text }) }) }))).nullish(),
  response_format: typedObject.nullish(),
  stop: z.union([text, strings], { error: 'expected a string or an array of strings' }).nullish(),
});

// ---- Anthropic Messages -----------------------------------------------------------------------

const anthropicLeaf = typedObject.superRefine(byType({ text: z.looseObject({ text }) }));

const anthropicBlock = typedObject.superRefine(byType({
  text: z.looseObject({ text }),
  tool_use: z.looseObject({ id: text, name: text, input: anyObject.optional() }),
  tool_result: z.looseObject({
    tool_use_id: text,
    content: z.union([text, z.array(anthropicLeaf)], { error: 'expected a string or an array of content blocks' }).nullish(),
  }),
}));

const anthropicContent = z.union([text, z.array(anthropicBlock)], { error: 'expected a string or an array of content blocks' });

// A custom tool (its type may be left out) has a name; server tools are the converter's to translate or refuse.
const customTool = byType({ custom: z.looseObject({ name: text }) });

const anthropicRequest = z.looseObject({
  system: z.union([text, z.array(anthropicLeaf)], { error: 'expected a string or an array of text blocks' }).nullish(),
  // A system message may stand anywhere in the conversation, applying from there on (Claude Code 2.1 sends its environment so).
  messages: z.array(z.looseObject({ role: z.enum(['user', 'assistant', 'system']), content: anthropicContent })),
  tools: z.array(z.looseObject({ type: text.nullish() }).superRefine((v, ctx) => customTool(v.type == null ? { ...v, type: 'custom' } : v, ctx))).nullish(),
  tool_choice: typedObject.nullish(),
  stop_sequences: strings.nullish(),
});

// ---- OpenAI Responses -------------------------------------------------------------------------

const responsesContent = z.union([text, z.array(typedObject)], { error: 'expected a string or an array of content parts' });

const itemFields = byType({
  message: z.looseObject({ role: text, content: responsesContent }),
  function_call: z.looseObject({ call_id: text, name: text, arguments: text.optional() }),
  function_call_output: z.looseObject({ call_id: text, output: responsesContent }),
  reasoning: z.looseObject({ summary: z.array(anyObject).optional() }),
});

const inputItem = anyObject.superRefine((v, ctx) => {
  // A message may leave out its type; any other item names it.
  if (v.type === undefined && typeof v.role === 'string') return itemFields({ ...v, type: 'message' }, ctx);
  if (typeof v.type === 'string') return itemFields(v, ctx);
  ctx.addIssue({ code: 'custom', message: v.type === undefined ? 'expected a "type" or a "role"' : `expected a string, got ${describe(v.type)}`, path: v.type === undefined ? [] : ['type'], input: v });
});

const responsesFunction = typedObject.superRefine(byType({ function: z.looseObject({ name: text }) }));

const responsesRequest = z.looseObject({
  input: z.union([text, z.array(inputItem)], { error: 'expected a string or an array of input items' }).nullish(),
  // A namespace groups functions under its name (formats/tools.ts): both are named.
  tools: z.array(responsesFunction.superRefine(byType({ namespace: z.looseObject({ name: text, tools: z.array(responsesFunction) }) }))).nullish(),
});

const SHAPES: Partial<Record<Endpoint, z.ZodType>> = { chat: chatRequest, messages: anthropicRequest, responses: responsesRequest };

/** Throws MalformedRequest when `doc`, a request in the `client` format, has not the shape its translation reads. */
export function checkShape(client: Endpoint, doc: Json): void {
  const r = SHAPES[client]?.safeParse(doc, { reportInput: true });
  if (r && !r.success) {
    const [first] = r.error.issues;
    const { path, message } = innermost(first);
    throw new MalformedRequest(`${path.length ? path.join('.') : 'body'}: ${message}`);
  }
}

// ---- messages ---------------------------------------------------------------------------------

/** Of a union that failed, the alternative that got furthest (its issue deepest), so `[null]` is reported at its element. */
function innermost(i: Issue): { path: PropertyKey[]; message: string } {
  if (i.code === 'invalid_union') {
    let best: Issue | undefined;
    for (const branch of i.errors) for (const b of branch) if (b.path.length > (best?.path.length ?? 0)) best = b;
    if (best) {
      const inner = innermost(best);
      return { path: [...i.path, ...inner.path], message: inner.message };
    }
  }
  return { path: i.path, message: explain(i) };
}

const ARTICLE: Record<string, string> = { object: 'an object', array: 'an array', string: 'a string', number: 'a number', boolean: 'a boolean' };

function explain(i: Issue): string {
  if (i.code === 'invalid_type') return i.input === undefined ? `required (${ARTICLE[i.expected] ?? i.expected})` : `expected ${ARTICLE[i.expected] ?? i.expected}, got ${describe(i.input)}`;
  if (i.code === 'invalid_value') return `expected ${i.values.map((v) => JSON.stringify(v)).join(' or ')}, got ${describe(i.input)}`;
  return i.message;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return ARTICLE[typeof v] ?? typeof v;
}
