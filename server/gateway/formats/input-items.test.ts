import { describe, expect, it } from 'vitest';
import { inputItemsOf, itemPage, listQuery, type ListQuery } from './input-items';

const items = [
  { role: 'user', content: 'Start' },
  { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hi.' }] },
  { type: 'function_call_output', call_id: 'call_1', output: 'ok' },
  { type: 'message', role: 'user', content: 'Go on' },
];
const q = (over: Partial<ListQuery> = {}): ListQuery => ({ limit: 20, order: 'desc', after: null, ...over });

describe('input items as OpenAI lists them', () => {
  it('reads the query as OpenAI does: limit 1 to 100 (20), order asc or desc (desc), after', () => {
    expect(listQuery('')).toEqual({ limit: 20, order: 'desc', after: null });
    expect(listQuery('limit=2&order=asc&after=msg_1&include[]=x')).toEqual({ limit: 2, order: 'asc', after: 'msg_1' });
    for (const bad of ['limit=0', 'limit=101', 'limit=2.5', 'limit=', 'limit=x', 'order=up']) expect(listQuery(bad), bad).toHaveProperty('invalid');
  });

  it('gives a message its text as content parts and every item an ID that stays with its place', () => {
    const page = itemPage(items, q({ order: 'asc' }));
    expect(page.data).toEqual([
      { type: 'message', id: 'item_gw_0', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'Start' }] },
      items[1],
      { ...items[2], id: 'item_gw_2' },
      { type: 'message', id: 'item_gw_3', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'Go on' }] },
    ]);
    expect(page).toMatchObject({ object: 'list', first_id: 'item_gw_0', last_id: 'item_gw_3', has_more: false });
    // The kept items are not changed.
    expect(items[0]).toEqual({ role: 'user', content: 'Start' });
  });

  it('pages newest first by default, after the cursor; an unknown cursor lists nothing', () => {
    const first = itemPage(items, q({ limit: 3 }));
    expect(first.data.map((i) => i.id)).toEqual(['item_gw_3', 'item_gw_2', 'msg_1']);
    expect(first.has_more).toBe(true);
    const next = itemPage(items, q({ limit: 3, after: first.last_id }));
    expect(next).toMatchObject({ first_id: 'item_gw_0', last_id: 'item_gw_0', has_more: false });
    expect(itemPage(items, q({ order: 'asc', limit: 2, after: 'msg_1' })).data.map((i) => i.id)).toEqual(['item_gw_2', 'item_gw_3']);
    expect(itemPage(items, q({ after: 'msg_unknown' }))).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
    expect(itemPage([], q())).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
  });

  it('takes the input items of a kept answer: the conversation before its own output', () => {
    expect(inputItemsOf(items, { output: [items[3]] })).toEqual(items.slice(0, 3));
    expect(inputItemsOf(items, {})).toEqual(items);
  });
});
