/**
 * `GET /v1/responses/{id}/input_items` for a response the gateway keeps: the items the answer
 * started from (a continuation's whole conversation, as OpenAI lists it), each in the form
 * OpenAI lists it (a message's text as content parts, every item with an ID), a page at a time
 * in OpenAI's list shape.
 */
import type { Json } from './types';

/** The derived ID of an item the client sent without one: its place in the conversation, which never changes. */
export const GATEWAY_ITEM_PREFIX = 'item_gw_';

export interface ListQuery {
  limit: number;
  order: 'asc' | 'desc';
  after: string | null;
}

export interface ItemPage {
  object: 'list';
  data: Json[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/** The query as OpenAI reads it (limit 1–100, default 20; order asc or desc, default desc; after an item ID), or why not. */
export function listQuery(query: string): ListQuery | { invalid: string } {
  const q = new URLSearchParams(query);
  const rawLimit = q.get('limit');
  const limit = rawLimit === null ? 20 : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    return { invalid: `Invalid 'limit': expected an integer from 1 to 100, got '${String(rawLimit)}'` };
  }
  const order = q.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') return { invalid: `Invalid 'order': expected 'asc' or 'desc', got '${order}'` };
  return { limit, order, after: q.get('after') };
}

/** The input items of a kept answer: the conversation items before its own output. */
export function inputItemsOf(items: readonly unknown[], response: Json): unknown[] {
  const output = Array.isArray(response.output) ? response.output.length : 0;
  return items.slice(0, Math.max(0, items.length - output));
}

/** One item as OpenAI lists it: a message with its text as content parts; an ID for every item. */
function listed(item: unknown, index: number): Json {
  const it: Json = typeof item === 'object' && item !== null ? { ...item } : { type: 'message', role: 'user', content: String(item) };
  const message = it.type === undefined || it.type === 'message';
  if (message) {
    it.type = 'message';
    if (typeof it.content === 'string') it.content = [{ type: it.role === 'assistant' ? 'output_text' : 'input_text', text: it.content }];
    it.status ??= 'completed';
  }
  if (typeof it.id !== 'string') it.id = `${GATEWAY_ITEM_PREFIX}${index}`;
  return it;
}

/** A page of `items` (oldest first) as `q` asks; an `after` that names no item lists nothing. */
export function itemPage(items: readonly unknown[], q: ListQuery): ItemPage {
  const all = items.map(listed);
  if (q.order === 'desc') all.reverse();
  const start = q.after === null ? 0 : all.findIndex((it) => it.id === q.after) + 1;
  const data = q.after !== null && start === 0 ? [] : all.slice(start, start + q.limit);
  return {
    object: 'list',
    data,
    first_id: data.length ? data[0].id : null,
    last_id: data.length ? data[data.length - 1].id : null,
    has_more: data.length > 0 && start + data.length < all.length,
  };
}
