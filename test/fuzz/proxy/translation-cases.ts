import fc from 'fast-check';
import { thoughtSignatureOf } from '../../../server/testing/mock-upstream/gemini';

/**
 * Bodies for the translation fuzzer: per client format a valid conversation that uses every
 * part the translators read (system text, content parts, an image, a tool call and its result,
 * tools, stop sequences, sampling), then broken by a few mutations: a value at any place
 * replaced by one of another type, an odd element put into a list, a field left out, a `type`
 * or `role` swapped for another the formats know. What comes out is sent as it is.
 */

export type ClientFormat = 'chat' | 'messages' | 'responses';

export const CLIENT_PATHS: Record<ClientFormat, string> = { chat: '/v1/chat/completions', messages: '/v1/messages', responses: '/v1/responses' };

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
/**
 * The tool call's ID as a `gemini` key's answer gives it (docs/proxy.md, "Thought signatures": the
 * signature rides in the ID), so the conversation is one a client got back through the gateway and
 * a `gemini` key, which refuses a function call without its signature, serves it too.
 */
const CALL_ID = (prefix: string) => `${prefix}_1__thought__${Buffer.from(thoughtSignatureOf('get_weather', { city: 'Paris' })).toString('base64url')}`;
const CALL = CALL_ID('call');
const TOOLU = CALL_ID('toolu');

/** A valid request of each format, served (200) on every key kind: the mutations start from here. */
export function validBody(client: ClientFormat, model: string): Record<string, unknown> {
  switch (client) {
    case 'chat': return {
      model, max_tokens: 64, temperature: 0.5, stop: ['END'], user: 'fuzz-user', tool_choice: 'auto',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'What is the weather?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: CALL, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: CALL, content: '18°C' },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Current weather', parameters: SCHEMA } }],
    };
    case 'messages': return {
      model, max_tokens: 64, temperature: 0.5, stop_sequences: ['END'], metadata: { user_id: 'fuzz-user' }, tool_choice: { type: 'auto' },
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'What is the weather?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }, { type: 'tool_use', id: TOOLU, name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: TOOLU, content: [{ type: 'text', text: '18°C' }] }, { type: 'text', text: 'Thanks' }] },
      ],
      tools: [{ name: 'get_weather', description: 'Current weather', input_schema: SCHEMA }],
    };
    case 'responses': return {
      model, max_output_tokens: 64, temperature: 0.5, instructions: 'Be brief.', tool_choice: 'auto', store: false, text: { format: { type: 'text' } },
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'What is the weather?' }, { type: 'input_image', image_url: `data:image/png;base64,${PNG}` }] },
        { type: 'function_call', call_id: CALL, name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: CALL, output: '18°C' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'It is 18°C.' }] },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [{ type: 'function', name: 'get_weather', description: 'Current weather', parameters: SCHEMA }],
    };
  }
}

/** Values of every JSON type, and the shapes converters trip on. */
const ODD: readonly unknown[] = [null, 0, -1, 1.5, '', 'x', true, false, [], {}, [null], [1], ['x'], { type: 'text' }, { type: null }, { a: 1 }, '\u0000', 1e308];
/** `type` values the three formats know, so a part or an item goes down another converter's branch. */
const TYPES = [
  'text', 'image', 'image_url', 'document', 'file', 'input_audio', 'refusal', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking',
  'input_text', 'input_image', 'input_file', 'output_text', 'message', 'function_call', 'function_call_output', 'reasoning', 'item_reference',
  'function', 'custom', 'web_search', 'namespace', 'json_schema', 'json_object', 'auto', 'any', 'tool', 'none', 'base64', 'url', 'nonsense',
];
const ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function', 'model', ''];

export type Mutation =
  | { kind: 'set'; at: number; value: unknown }
  | { kind: 'element'; at: number; index: number; value: unknown; replace: boolean }
  | { kind: 'delete'; at: number }
  | { kind: 'type'; at: number; value: string };

export const mutations: fc.Arbitrary<Mutation[]> = fc.array(fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('set' as const), at: fc.nat(), value: fc.constantFrom(...ODD) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('element' as const), at: fc.nat(), index: fc.nat(), value: fc.constantFrom(...ODD), replace: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('type' as const), at: fc.nat(), value: fc.constantFrom(...TYPES, ...ROLES) }) },
), { minLength: 1, maxLength: 3 });

type Path = (string | number)[];

/** The list a Responses request holds its conversation in; the other formats' is `messages`. */
const CONVERSATION = 'input';

/** Every place in `v` below its root, parents first. */
function places(v: unknown, at: Path = [], out: Path[] = []): Path[] {
  if (Array.isArray(v)) v.forEach((x, i) => { out.push([...at, i]); places(x, [...at, i], out); });
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) { out.push([...at, k]); places(x, [...at, k], out); }
  return out;
}

const parentOf = (doc: any, p: Path) => p.slice(0, -1).reduce((o, k) => o?.[k], doc);
const valueAt = (doc: any, p: Path) => p.reduce((o, k) => o?.[k], doc);

/** `doc` with the mutations made (on a copy), and what each did, for the report. */
export function mutate(doc: Record<string, unknown>, ms: readonly Mutation[]): { doc: Record<string, unknown>; note: string } {
  const out = structuredClone(doc);
  const notes: string[] = [];
  for (const m of ms) {
    const all = places(out);
    // Never the model: the proxy's own model checks are the other fuzzer's (proxy.test.ts).
    const paths = all.filter((p) => p[0] !== 'model');
    if (!paths.length) continue;
    if (m.kind === 'set') {
      const p = m.at === -1 ? [CONVERSATION in out ? CONVERSATION : 'messages'] : m.at === -2 ? ['tools'] : paths[m.at % paths.length];
      parentOf(out, p)[p.at(-1)!] = structuredClone(m.value);
      notes.push(`${p.join('.')} = ${JSON.stringify(m.value)}`);
    } else if (m.kind === 'element') {
      // The conversation's list first, so a pinned element lands in it.
      const lists = [[CONVERSATION in out ? CONVERSATION : 'messages'], ...paths].filter((p) => Array.isArray(valueAt(out, p)));
      const p = lists[m.at % lists.length];
      const list = valueAt(out, p) as unknown[];
      if (!Array.isArray(list)) continue;
      const i = list.length ? m.index % (list.length + (m.replace ? 0 : 1)) : 0;
      list.splice(i, m.replace && list.length ? 1 : 0, structuredClone(m.value));
      notes.push(`${[...p, i].join('.')} ${m.replace ? '=' : '+='} ${JSON.stringify(m.value)}`);
    } else if (m.kind === 'delete') {
      const keyed = paths.filter((p) => typeof p.at(-1) === 'string');
      const p = keyed[m.at % keyed.length];
      if (!p) continue;
      delete parentOf(out, p)[p.at(-1)!];
      notes.push(`${p.join('.')} deleted`);
    } else {
      const typed = paths.filter((p) => p.at(-1) === 'type' || p.at(-1) === 'role');
      const p = typed[m.at % typed.length];
      if (!p) continue;
      parentOf(out, p)[p.at(-1)!] = m.value;
      notes.push(`${p.join('.')} = ${JSON.stringify(m.value)}`);
    }
  }
  return { doc: out, note: notes.join('; ') };
}

/**
 * Breakages every pass sends on every pair besides the generated ones, so a run never misses
 * them by chance: the conversation's list holding a null (`"messages": [null]` found a 500
 * once), an element of another type, and a tool that is not an object.
 */
export const PINNED: readonly Mutation[][] = [
  [{ kind: 'set', at: -1, value: [null] }],
  [{ kind: 'element', at: 0, index: 0, value: null, replace: false }],
  [{ kind: 'element', at: 0, index: 0, value: 'x', replace: true }],
  [{ kind: 'set', at: -2, value: [null] }],
];

/** A note's paths with their list indices as `N`, to group findings by the place broken, not the instance. */
export const generalized = (note: string) => note.replace(/\.\d+(?=[.\s]|$)/g, '.N');
