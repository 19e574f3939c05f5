import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { LineMembers, MEMBER, skipSpace } from '../../server/gateway/files/line-members';
import { fuzzPasses, replayHint, scaled } from './support/seeds';
import { hostileString } from './support/hostile';

/**
 * The batch line reader (server/gateway/files/line-members.ts) against JSON.parse, the reader
 * it stands in for: on valid lines of every shape (members in any order, repeated, escaped
 * names, nested values, whitespace) and on the same lines broken a byte at a time (deleted,
 * inserted, replaced, cut; control bytes and broken UTF-8 among them), a line the reader
 * accepts is one JSON.parse accepts and the reverse, and each of the four members reads as
 * JSON.parse reads it.
 */
const CASES = scaled(6000);
const FILE = 'test/fuzz/batch-line-members.test.ts';
const NAMES = Object.keys(MEMBER) as (keyof typeof MEMBER)[];

/** A member's name as written: plain, or with escapes JSON.parse reads as the same name. */
const nameArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...NAMES).map((n) => JSON.stringify(n)) },
  { weight: 2, arbitrary: fc.constantFrom('"b\\u006fdy"', '"custom\\u005fid"', '"\\u0075rl"', '"method\\u0000"', '"bod\\y"', '"url\\/"', '"\\/url"') },
  { weight: 2, arbitrary: fc.oneof(hostileString, fc.constantFrom('model', 'Body', 'url ', '__proto__')).map((n) => JSON.stringify(n)) },
);

/** A value as written: any JSON, the values the check reads, and tokens that are almost JSON. */
const valueArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.json({ maxDepth: 3 }) },
  { weight: 3, arbitrary: fc.oneof(hostileString, fc.constantFrom('POST', '/v1/chat/completions', 'req-1', '')).map((s) => JSON.stringify(s)) },
  { weight: 2, arbitrary: fc.record({ model: fc.constantFrom('gpt-4o-mini', 'gpt-4o'), messages: fc.constant([{ role: 'user', content: 'hi' }]), max_tokens: fc.integer() }, { requiredKeys: [] }).map((o) => JSON.stringify(o)) },
  { weight: 2, arbitrary: fc.constantFrom('01', '1.', '.5', '-', '-0', '1e', '1e+', '2E-3', 'tru', 'nul', 'falsey', '"\\x"', '"\\u12G4"', '"a\u0001"', '"\\ud800"', '[1,]', '{"a":}', '{"a" 1}', '[}', '{]', '""', '"\\"}"', '{"x":"}"}', '[[[]]]', '1 2') },
);

/** Whitespace between tokens: what JSON allows, and what it does not. */
const spaceArb = fc.oneof({ weight: 8, arbitrary: fc.constant('') }, { weight: 3, arbitrary: fc.constantFrom(' ', '\t', '\r', '\n', ' \r\n ') }, { weight: 1, arbitrary: fc.constantFrom('\v', '\f', '\u00a0', '\ufeff') });

/** A line built member by member, so that names repeat and come in any order. */
const builtLine = fc.record({
  members: fc.array(fc.tuple(nameArb, valueArb, spaceArb, spaceArb), { maxLength: 7 }),
  lead: spaceArb,
  tail: spaceArb,
}).map(({ members, lead, tail }) => `${lead}{${members.map(([k, v, a, b]) => `${a}${k}${b}:${a}${v}${b}`).join(',')}}${tail}`);

/** A line as a client's serializer writes it. */
const writtenLine = fc.record({
  line: fc.record({ custom_id: hostileString, method: fc.constantFrom('POST', 'GET'), url: fc.constantFrom('/v1/chat/completions', '/v1/embeddings', 'x'), body: fc.oneof(fc.object({ maxDepth: 2 }), fc.jsonValue({ maxDepth: 2 })), extra: fc.jsonValue({ maxDepth: 2 }) }, { requiredKeys: [] }),
  indent: fc.constantFrom(undefined, 1, '\t', ' \r\n'),
}).map(({ line, indent }) => JSON.stringify(line, null, indent as string | number | undefined));

/** Bytes that break JSON, or that look as if they belong. */
const BREAKERS = [...'{}[]":,\\/ \t\r\n0123456789-+.eEtrufalsn'].map((c) => c.charCodeAt(0)).concat([0x00, 0x01, 0x0b, 0x0c, 0x1f, 0x7f, 0x80, 0xa0, 0xbf, 0xc3, 0xe2, 0xed, 0xef, 0xf0, 0xff]);

type Edit = { at: number; kind: 'delete' | 'insert' | 'replace' | 'cut'; byte: number };
const editArb: fc.Arbitrary<Edit> = fc.record({ at: fc.nat(), kind: fc.constantFrom('delete', 'insert', 'replace', 'cut'), byte: fc.constantFrom(...BREAKERS) });

function edited(text: string, edits: Edit[]): Buffer {
  let b = Buffer.from(text);
  for (const e of edits) {
    const at = b.length === 0 ? 0 : e.at % (b.length + 1);
    if (e.kind === 'delete') b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1)]);
    else if (e.kind === 'insert') b = Buffer.concat([b.subarray(0, at), Buffer.from([e.byte]), b.subarray(at)]);
    else if (e.kind === 'replace' && at < b.length) b = Buffer.concat([b.subarray(0, at), Buffer.from([e.byte]), b.subarray(at + 1)]);
    else if (e.kind === 'cut') b = b.subarray(0, at);
  }
  return b;
}

const lineArb: fc.Arbitrary<Buffer> = fc.record({
  text: fc.oneof(builtLine, writtenLine, fc.json({ maxDepth: 3 })),
  edits: fc.oneof({ weight: 1, arbitrary: fc.constant([] as Edit[]) }, { weight: 2, arbitrary: fc.array(editArb, { minLength: 1, maxLength: 3 }) }),
}).map(({ text, edits }) => edited(text, edits));

/** What differs between the reader and JSON.parse on one line; null when they agree. */
function disagreement(b: Buffer, m: LineMembers): string | null {
  let parsed: unknown;
  let valid = true;
  try {
    parsed = JSON.parse(b.toString('utf8'));
  } catch {
    valid = false;
  }
  const at = skipSpace(b, 0, b.length);
  // A line that opens no object never reaches the reader: the line check parses it whole.
  if (at === b.length || b[at] !== 0x7b) return null;
  let read: boolean;
  try {
    read = m.read(b, at, b.length) && (m.value(b, MEMBER.body), true);
  } catch {
    read = false;
  }
  if (read !== valid) return `reader ${read ? 'accepts' : 'refuses'}, JSON.parse ${valid ? 'accepts' : 'refuses'}`;
  if (!valid) return null;
  const o = parsed as Record<string, unknown>;
  for (const name of NAMES) {
    const want = Object.hasOwn(o, name) ? o[name] : undefined;
    const got = m.value(b, MEMBER[name]);
    if (JSON.stringify(got) !== JSON.stringify(want)) return `${name}: reader ${JSON.stringify(got)}, JSON.parse ${JSON.stringify(want)}`;
    const text = m.text(b, MEMBER[name]);
    if (text !== (typeof want === 'string' ? want : undefined)) return `${name} as text: reader ${JSON.stringify(text)}, JSON.parse ${JSON.stringify(want)}`;
  }
  return null;
}

describe('the batch line reader agrees with JSON.parse', () => {
  it('on lines written by hand: names repeated, escaped, nested values, broken tokens', () => {
    const m = new LineMembers();
    const lines = [
      '{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o-mini"}}',
      '{"body":[1],"body":{"model":"x"}}', '{"body":{"model":"x"},"body":[1,}', '{"body":[1,],"body":{"model":"x"}}',
      '{"b\\u006fdy":{"a":1},"url":"\\/v1\\/embeddings","method":"P\\u004FST"}', '{"custom_id":""}', '{"custom_id":"é\\n"}',
      '{"x":{"y":"}"},"body":{}}', '{"x":[1,2}],"body":{}}', '{"a":1,}', '{,}', '{}', ' {} ', '{} x', '{"a":01}', '{"a":-}', '{"a":1e5,"b":-0.5E-3}',
      '{"a":"\u0001"}', '{"a":"\\u00e9\\ud800"}', '{"a":tru}', '{"a":true,"b":false,"c":null}', '{"a" : 1 , "body" : { } }', '{"a":1}}', '{"a":{"b":1}',
      '\ufeff{}', '{"a":"\\x"}', '{"x":{"y":"a\\\\"},"body":{}}', '{"x":{"y":"a\\"}"},"body":{}}', '{"x":["\\\\\\"]"],"body":{}}',
    ].map((l) => Buffer.from(l));
    lines.push(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xc3, 0x22, 0x7d]), Buffer.from([0x7b, 0x22, 0xe2, 0x22, 0x3a, 0x31, 0x7d]), Buffer.from([0x7b, 0xc3, 0x7d]));
    const problems = lines.map((b) => [b.toString('latin1'), disagreement(b, m)]).filter(([, p]) => p !== null);
    expect(problems).toEqual([]);
  });

  describe.each(fuzzPasses())('fuzzed ($label seed $seed)', ({ seed }) => {
    it(`on ${CASES} lines, valid and broken`, () => {
      const m = new LineMembers();
      const problems: string[] = [];
      let opened = 0;
      let validOpened = 0;
      for (const b of fc.sample(lineArb, { seed, numRuns: CASES })) {
        const p = disagreement(b, m);
        if (p) problems.push(`${JSON.stringify(b.toString('latin1')).slice(0, 300)}: ${p}`);
        const at = skipSpace(b, 0, b.length);
        if (at < b.length && b[at] === 0x7b) {
          opened++;
          try {
            JSON.parse(b.toString('utf8'));
            validOpened++;
          } catch { /* a broken line */ }
        }
      }
      expect(problems.slice(0, 20), replayHint(seed, FILE)).toEqual([]);
      // The sample must reach the reader with both kinds of line, or the agreement proves little.
      expect(validOpened).toBeGreaterThan(CASES / 5);
      expect(opened - validOpened).toBeGreaterThan(CASES / 5);
    });
  });
});
