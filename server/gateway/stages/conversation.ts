/**
 * The conversation stage (Responses calls only, just before admission): a call continuing a
 * response the gateway keeps (`previous_response_id` with the gateway's prefix) has the kept
 * items put before its own input, and goes on as a whole conversation any key can serve, native
 * or translated; admission then holds the cost of all of it. An ID of the gateway's form it does
 * not find for this account (never kept, `store: false`, expired, another account's) is refused
 * 400 `previous_response_not_found`, as OpenAI answers; any other ID goes on as before (to the
 * key that created it, or to the provider). A call not sent with `store: false` is marked to
 * be kept, should a key without the Responses API answer it.
 */
import type { ProxyCall } from '../call';
import type { Refusal, Verdict } from '../errors';
import { conversationItems, inputItems, isGatewayResponseId } from '../formats/responses';
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

export function continueConversation(d: ConversationDeps, c: ProxyCall): Verdict | Promise<Verdict> {
  const store = d.storedResponses;
  if (c.endpoint !== 'responses' || !store) return null;
  const who = { ownerId: c.row.ownerId, accountId: c.row.id };
  // The doc read when the answer completes: the expanded input, with what it continued; the
  // Response object as the client got it, for GET /v1/responses/{id} (stages/stored-response.ts).
  if (c.doc.store !== false) c.keepAnswer = (completed) => store.keep(who, completed.id, conversationItems(c.doc, completed), completed);
  const previous = c.doc.previous_response_id;
  if (!isGatewayResponseId(previous)) return null;
  return store.recall(who, previous).then((items) => {
    if (items === null) return notFound(previous);
    const { previous_response_id: _, ...doc } = c.doc;
    doc.input = [...items, ...inputItems(c.doc.input)];
    c.doc = doc;
    c.raw = Buffer.from(JSON.stringify(doc));
    return null;
  }, (err) => {
    d.log.warn('stored_response_unreadable', { request: c.id, owner: who.ownerId, ...errorFields(err) });
    return UNREADABLE;
  });
}
