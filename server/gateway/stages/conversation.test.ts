import { describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log';
import type { StoredResponses } from '../../state/stored-responses/stored-responses';
import { continueConversation } from './conversation';
import { accountRow, callFor } from './test-support';

const ID = `resp_gw_${'a'.repeat(48)}`;
const kept = [{ type: 'message', role: 'user', content: 'Hi' }, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello.' }] }];

function store(recall: StoredResponses['recall']) {
  const looked: string[] = [];
  const kept: unknown[][] = [];
  const s: Pick<StoredResponses, 'keep' | 'recall'> = {
    keep: async (...args) => { kept.push(args); },
    recall: (who, id) => {
      looked.push(`${who.ownerId}/${who.accountId}/${id}`);
      return recall(who, id);
    },
  };
  return { s, looked, kept };
}
const responsesCall = (body: Record<string, unknown>) => callFor({ endpoint: 'responses', path: '/v1/responses', row: accountRow({ id: 42, ownerId: 1 }), body: { model: 'claude-test-1', ...body } });
const log = createLogger(() => {}, 'error');

describe('the conversation stage', () => {
  it('puts the kept items before the input, drops previous_response_id and re-serialises the body', async () => {
    const { s, looked, kept: keeps } = store(async () => kept);
    const c = responsesCall({ input: 'More', previous_response_id: ID, instructions: 'Be brief.' });
    expect(await continueConversation({ storedResponses: s, log }, c)).toBeNull();
    expect(looked).toEqual([`1/42/${ID}`]);
    const expanded = { model: 'claude-test-1', input: [...kept, { type: 'message', role: 'user', content: 'More' }], instructions: 'Be brief.' };
    expect(c.doc).toEqual(expanded);
    expect(JSON.parse(c.raw.toString())).toEqual(expanded);
    expect(c.keepAnswer).toBeTypeOf('function');
    // The completed answer is kept beside the conversation, for GET /v1/responses/{id}.
    const completed = { id: 'resp_gw_next', object: 'response', output: [{ type: 'message', role: 'assistant', content: 'Ok.' }] };
    await c.keepAnswer!(completed);
    expect(keeps).toEqual([[{ ownerId: 1, accountId: 42 }, 'resp_gw_next', [...expanded.input, ...completed.output], completed]]);
  });

  it('looks up no provider\'s ID, and marks no store:false call for keeping', () => {
    const { s, looked } = store(async () => kept);
    const native = responsesCall({ input: 'x', previous_response_id: 'resp_67ccd2bed1ec8190', store: false });
    expect(continueConversation({ storedResponses: s, log }, native)).toBeNull();
    expect(native.doc.previous_response_id).toBe('resp_67ccd2bed1ec8190');
    expect(native.keepAnswer).toBeUndefined();
    expect(continueConversation({ storedResponses: s, log }, callFor({ body: { model: 'gpt-4o', messages: [], previous_response_id: ID } }))).toBeNull();
    expect(looked).toEqual([]);
  });

  it('refuses an ID it does not keep with 400 previous_response_not_found, and an unreadable store with 503', async () => {
    expect(await continueConversation({ storedResponses: store(async () => null).s, log }, responsesCall({ input: 'x', previous_response_id: ID })))
      .toMatchObject({ status: 400, code: 'previous_response_not_found', message: expect.stringContaining(ID) });
    expect(await continueConversation({ storedResponses: store(async () => { throw new Error('down'); }).s, log }, responsesCall({ input: 'x', previous_response_id: ID })))
      .toMatchObject({ status: 503, code: 'stored_response_unavailable', headers: { 'retry-after': '1' } });
  });

  describe('item_reference', () => {
    const HEX = 'b'.repeat(48);
    const OTHER = 'c'.repeat(48);
    const message = { type: 'message', id: `msg_gw_${HEX}_1`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello.' }] };
    const reasoning = { type: 'reasoning', id: `rs_gw_${HEX}_0`, summary: [], content: [{ type: 'reasoning_text', text: 'Plan' }], encrypted_content: 'rs_gw_sig' };
    const call = { type: 'function_call', id: `fc_gw_${OTHER}_0`, call_id: 'call_1', name: 'shell', arguments: '{}', status: 'completed' };
    const conversations: Record<string, unknown[]> = {
      [`resp_gw_${HEX}`]: [{ type: 'message', role: 'user', content: 'Hi' }, reasoning, message],
      [`resp_gw_${OTHER}`]: [{ type: 'message', role: 'user', content: 'Go' }, call],
    };
    const ref = (id: string) => ({ type: 'item_reference', id });

    it('replaces each reference to a gateway item by the item, reading each conversation once, and leaves a provider\'s reference as it came', async () => {
      const { s, looked } = store(async (_, id) => conversations[id] ?? null);
      const input = [{ role: 'user', content: 'Hi' }, ref(reasoning.id), ref(message.id), ref(call.id), { type: 'function_call_output', call_id: 'call_1', output: 'ok' }, ref('msg_67ccd2bed1ec8190')];
      const c = responsesCall({ input });
      expect(await continueConversation({ storedResponses: s, log }, c)).toBeNull();
      const resolved = [input[0], reasoning, message, call, input[4], input[5]];
      expect(c.doc.input).toEqual(resolved);
      expect(JSON.parse(c.raw.toString()).input).toEqual(resolved);
      expect(looked.sort()).toEqual([`1/42/resp_gw_${HEX}`, `1/42/resp_gw_${OTHER}`]);
    });

    it('resolves references inside a continued conversation\'s new input, after its kept items', async () => {
      const { s } = store(async (_, id) => conversations[id] ?? null);
      const c = responsesCall({ input: [ref(call.id), { role: 'user', content: 'More' }], previous_response_id: `resp_gw_${HEX}` });
      expect(await continueConversation({ storedResponses: s, log }, c)).toBeNull();
      expect(c.doc.previous_response_id).toBeUndefined();
      expect(c.doc.input).toEqual([...conversations[`resp_gw_${HEX}`], call, { role: 'user', content: 'More' }]);
    });

    it('refuses a reference it does not find for this account with 400 naming it, and reads nothing without a gateway reference', async () => {
      const { s, looked } = store(async (_, id) => conversations[id] ?? null);
      const missing = `msg_gw_${HEX}_7`;
      expect(await continueConversation({ storedResponses: s, log }, responsesCall({ input: [ref(missing)] })))
        .toMatchObject({ status: 400, code: 'item_reference_not_found', message: expect.stringContaining(missing) });
      const unknown = `msg_gw_${'d'.repeat(48)}_0`;
      expect(await continueConversation({ storedResponses: s, log }, responsesCall({ input: [ref(unknown)] })))
        .toMatchObject({ status: 400, code: 'item_reference_not_found', message: expect.stringContaining(unknown) });
      looked.length = 0;
      const native = responsesCall({ input: [ref('msg_67ccd2bed1ec8190'), { role: 'user', content: 'item_reference msg_gw_x' }] });
      expect(continueConversation({ storedResponses: s, log }, native)).toBeNull();
      expect(looked).toEqual([]);
    });
  });
});
