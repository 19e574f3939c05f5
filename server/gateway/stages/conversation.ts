/**
 * The conversation stage (Responses calls only, just before admission): a call continuing a
 * response the gateway keeps (`previous_response_id` with the gateway's prefix) has the kept
 * items put before its own input, and goes on as a whole conversation any key can serve, native
 * or translated; admission then holds the cost of all of it. An ID of the gateway's form it does
 * not find for this account (never kept, `store: false`, expired, another account's) is refused
 * 400 `previous_response_not_found`, as OpenAI answers; any other ID goes on as before (to the
 * key that created it, or to the provider). Likewise an `item_reference` to an item the gateway
 * wrote (its ID names its response, `formats/responses.ts`) is replaced by that item as kept, on
 * every key, since no provider ever saw it; one not found for this account is refused 400
 * `item_reference_not_found` naming it. A reference to a provider's own item goes on as it came.
 * A call not sent with `store: false` is marked to be kept, should a key without the Responses
 * API answer it.
 */
import type { ProxyCall } from '../call';
import type { Refusal, Verdict } from '../errors';
import { conversationItems, gatewayItemReferences, inputItems, isGatewayResponseId, responseOfItem, withReferencedItems } from '../formats/gateway-items';
import type { Json } from '../formats/types';
import type { StoredResponses } from '../../state/stored-responses/stored-responses';
import type { Logger } from '../../core/log';
import { errorFields } from '../../core/log';

export interface ConversationDeps {
  storedResponses?: Pick<StoredResponses, 'keep' | 'recall'>;
  log: Pick<Logger, 'warn'>;
}

const notFound = (id: string): Refusal => ({
  status: 400,
  code: 'previous_response_not_found',
  message: `Previous response with id '${id}' not found: it expired, was created with store: false, or belongs to another account; send the whole conversation as input instead`,
});

const UNREADABLE: Refusal = {
  status: 503,
  code: 'stored_response_unavailable',
  message: 'The stored conversation cannot be read right now; retry shortly',
  headers: { 'retry-after': '1' },
};

const referenceNotFound = (id: string): Refusal => ({
  status: 400,
  code: 'item_reference_not_found',
  message: `item_reference ${id} was not found: it expired, its response was created with store: false, or it belongs to another account; send the item itself instead`,
});

export function continueConversation(d: ConversationDeps, c: ProxyCall): Verdict | Promise<Verdict> {
  const store = d.storedResponses;
  if (c.endpoint !== 'responses' || !store) return null;
  const who = { ownerId: c.row.ownerId, accountId: c.row.id };
  // The doc read when the answer completes: the expanded input, with what it continued; the
  // Response object as the client got it, for GET /v1/responses/{id} (stages/stored-response.ts).
  if (c.doc.store !== false) c.keepAnswer = (completed) => store.keep(who, completed.id, conversationItems(c.doc, completed), completed);
  const previous = c.doc.previous_response_id;
  const references = gatewayItemReferences(c.raw, c.doc);
  const continues = isGatewayResponseId(previous);
  if (!continues && references.length === 0) return null;
  // Each conversation read once: the one continued, and those holding the items referred to.
  const responses = new Set(references.map((id) => responseOfItem(id)!));
  if (continues) responses.add(previous);
  const reads = [...responses].map((id) => store.recall(who, id).then((items) => [id, items] as const));
  return Promise.all(reads).then((kept) => {
    const conversations = new Map(kept);
    let input = inputItems(c.doc.input);
    if (references.length) {
      const found = new Map<string, Json>();
      for (const id of references) {
        const item = conversations.get(responseOfItem(id)!)?.find((it) => (it as Json)?.id === id);
        if (item === undefined) return referenceNotFound(id);
        found.set(id, item as Json);
      }
      input = withReferencedItems(input, found);
    }
    const doc: Record<string, unknown> = { ...c.doc, input };
    if (continues) {
      const items = conversations.get(previous);
      if (!items) return notFound(previous);
      delete doc.previous_response_id;
      doc.input = [...items, ...input];
    }
    c.doc = doc;
    c.raw = Buffer.from(JSON.stringify(doc));
    return null;
  }, (err) => {
    d.log.warn('stored_response_unreadable', { request: c.id, owner: who.ownerId, ...errorFields(err) });
    return UNREADABLE;
  });
}
