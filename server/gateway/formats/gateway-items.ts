import { randomBytes } from 'node:crypto';
import type { Json } from './types';

/**
 * The Responses API's IDs and items that the gateway itself makes, for calls it answers through
 * translation and the conversations it keeps: response IDs (`resp_gw_`), output item IDs that
 * name their response (an `item_reference` finds its conversation by them), and reasoning items
 * marked as the gateway's. A native key never sees them: they are resolved or removed first.
 */
/**
 * The prefix of the response IDs the gateway makes (OpenAI's are `resp_` and hex, so no native
 * ID has it): a `previous_response_id` without it is never looked up in the gateway's store.
 */
export const GATEWAY_RESPONSE_PREFIX = 'resp_gw_';

export const isGatewayResponseId = (id: unknown): id is string => typeof id === 'string' && id.startsWith(GATEWAY_RESPONSE_PREFIX);

// As long as OpenAI's own, and unguessable: the ID alone names a kept conversation within its account.
export const newResponseId = () => `${GATEWAY_RESPONSE_PREFIX}${randomBytes(24).toString('hex')}`;

/**
 * The ID of an output item the gateway writes: its kind (`msg`, `fc`, `rs`, `ws`), `_gw_`, the hex of
 * the response it belongs to, and its place in that response's output. An `item_reference` to it
 * (the AI SDK sends one for each earlier assistant message) so names the kept conversation that
 * holds it: no index of items is needed, and it is unique as the response ID is.
 */
export const gatewayItemId = (kind: 'msg' | 'fc' | 'rs' | 'ws', responseId: string, index: number) =>
  `${kind}_gw_${responseId.slice(GATEWAY_RESPONSE_PREFIX.length)}_${index}`;

const GATEWAY_ITEM_ID = /^(?:msg|fc|rs|ws)_gw_([0-9a-f]{48})_\d+$/;

/** The response whose kept conversation holds the item of this ID, when the gateway made it; else null. */
export function responseOfItem(id: unknown): string | null {
  const m = typeof id === 'string' ? GATEWAY_ITEM_ID.exec(id) : null;
  return m ? `${GATEWAY_RESPONSE_PREFIX}${m[1]}` : null;
}

/**
 * What starts both the ID and the `encrypted_content` of every reasoning item the gateway writes
 * (OpenAI's are `rs_` and hex, and its own blob): the content too, since Codex sends reasoning
 * items back without their ID. One byte search of a request finds them.
 */
export const GATEWAY_REASONING_PREFIX = 'rs_gw_';

const gatewayMarked = (v: unknown): v is string => typeof v === 'string' && v.startsWith(GATEWAY_REASONING_PREFIX);

/** A reasoning item the gateway wrote (from an Anthropic key's thinking or a chat provider's reasoning). */
export const isGatewayReasoning = (item: unknown): boolean =>
  (item as Json)?.type === 'reasoning' && (gatewayMarked((item as Json).id) || gatewayMarked((item as Json).encrypted_content));

/** The Anthropic signature a reasoning item carries: only the gateway's items have one. */
export function signatureOf(item: Json): string {
  return gatewayMarked(item.encrypted_content) ? item.encrypted_content.slice(GATEWAY_REASONING_PREFIX.length) : '';
}

/**
 * A Responses request for a key with the Responses API itself, without the gateway's reasoning
 * items, which mean nothing to that provider (it refuses an ID or an encrypted content it did
 * not make); null when there is none to remove, so the client's bytes go as they came. Only a
 * body holding the prefix is parsed through.
 */
export function withoutGatewayReasoning(raw: Buffer, doc: Json): Json | null {
  if (!raw.includes(GATEWAY_REASONING_PREFIX) || !Array.isArray(doc.input)) return null;
  const input = doc.input.filter((item: unknown) => !isGatewayReasoning(item));
  return input.length === doc.input.length ? null : { ...doc, input };
}

/** A request's `input` as a list of items: a string is one user message. */
export function inputItems(input: unknown): Json[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  return Array.isArray(input) ? input : [];
}

/**
 * The IDs of the gateway's own items that a request's input refers to (`item_reference`), each
 * once; none without parsing when the body never says `item_reference`. A reference to a
 * provider's own item is not among them: it goes to that provider as it came.
 */
export function gatewayItemReferences(raw: Buffer, doc: Json): string[] {
  if (!raw.includes('item_reference') || !Array.isArray(doc.input)) return [];
  const ids = new Set<string>();
  for (const item of doc.input as Json[]) {
    if (item?.type === 'item_reference' && responseOfItem(item.id) !== null) ids.add(item.id);
  }
  return [...ids];
}

/** The input with each reference to one of the gateway's items replaced by that item, as it was kept. */
export function withReferencedItems(input: Json[], found: ReadonlyMap<string, Json>): Json[] {
  return input.map((item) => (item?.type === 'item_reference' && found.has(item.id) ? found.get(item.id)! : item));
}

/**
 * What a continuation of a completed answer starts from, as OpenAI keeps it: the request's
 * input items (already holding those it continued) and the answer's output items; never the
 * instructions, which each request gives anew.
 */
export function conversationItems(request: Json, response: Json): Json[] {
  return [...inputItems(request.input), ...(Array.isArray(response.output) ? response.output : [])];
}
