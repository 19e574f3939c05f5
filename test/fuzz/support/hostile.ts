import fc from 'fast-check';

/** Names that are properties of every JavaScript object: as keys or parameter names they reach `obj[name]`. */
export const PROTOTYPE_NAMES = [
  '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf',
  'propertyIsEnumerable', 'toLocaleString', '__defineGetter__', '__lookupSetter__', 'then',
] as const;

export const HUGE = 100_000;

/** Strings that have broken parsers, databases and path handling somewhere before. */
export const HOSTILE_STRINGS: readonly string[] = [
  '', ' ', '\t', '\u0000', 'a\u0000b', '\u0000'.repeat(8), '\ud800', 'x\udfffy', '\udc00\ud800', '\ufeff', '\u202e', '\u2028', '🤖',
  '\r\n', 'a\r\nX-Injected: 1', '\u001b[31m', '\u007f',
  "' OR '1'='1", "'; DROP TABLE accounts; --", '" OR ""="', '1; SELECT pg_sleep(10)', '$1', '%', '%%', '\\', '\\\\x00',
  '../../etc/passwd', '..\\..\\windows\\win.ini', '/etc/passwd', '....//....//', '%2e%2e%2f', '..', '.', './', '.1.', '.1..', '..1.',
  'NaN', 'Infinity', '-Infinity', '1e309', '-1e309', '0x1f', '1_000', '9'.repeat(400), '-0', '0.0000001', '1e-400',
  'null', 'undefined', 'true', 'false', '[]', '{}', '{"a":1}', '<script>alert(1)</script>', '${7*7}', '{{7*7}}',
  ...PROTOTYPE_NAMES,
];

/** Numbers at and past every boundary a column or a parser has. */
export const HOSTILE_NUMBERS: readonly number[] = [
  0, -0, 1, -1, 0.5, -0.5, 1.5, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), -(2 ** 31) - 1, 2 ** 32, 2 ** 53 - 1, 2 ** 53 + 2, -(2 ** 53),
  1e15, 1e21, 1e300, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE, 1e-7, 123456789.123456789,
];

export const hostileString = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 1, arbitrary: fc.constantFrom('a'.repeat(HUGE), '\u0000'.repeat(1000), 'é'.repeat(HUGE / 2), '🤖'.repeat(HUGE / 4)) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
);

export const hostileNumber = fc.oneof(fc.constantFrom(...HOSTILE_NUMBERS), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer());

/** A JSON value of any type: what "the wrong type" for a field looks like. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: hostileString },
  { weight: 3, arbitrary: hostileNumber },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constant([]) },
  { weight: 1, arbitrary: fc.constant({}) },
  { weight: 1, arbitrary: fc.array(hostileString, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.constantFrom(...PROTOTYPE_NAMES, 'a', 'rpm'), fc.oneof(hostileNumber, hostileString), { maxKeys: 3 }) },
);

/**
 * Raw JSON text of a deeply nested value: JSON.parse copes, recursive code after it
 * (validation, logging, cloning) may not.
 */
export function deepJson(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** An object with an own enumerable `__proto__` key, which JSON.stringify then writes out. */
export function withOwnKey(obj: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const k of Object.keys(obj)) Object.defineProperty(copy, k, { value: obj[k], enumerable: true, writable: true, configurable: true });
  Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

/**
 * Percent-encodes every byte outside the unreserved set. Unlike encodeURIComponent it does
 * not throw on a lone surrogate: it writes the surrogate's three UTF-8-style bytes
 * (`%ED%A0%80`), which are invalid UTF-8, as a hostile client would.
 */
export function percentEncode(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (/[A-Za-z0-9\-_.~]/.test(s[i])) {
      out += s[i];
      continue;
    }
    let cp = c;
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    for (const b of utf8(cp)) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function utf8(cp: number): number[] {
  if (cp < 0x80) return [cp];
  if (cp < 0x800) return [0xc0 | (cp >> 6), 0x80 | (cp & 63)];
  if (cp < 0x10000) return [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)];
  return [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)];
}

/** Broken percent-encodings, used verbatim in a path or query. */
export const BROKEN_ENCODINGS = ['%', '%2', '%zz', '%00', '%C0%AF', '%FF', '%ED%A0%80', '%E2%82', '%25%30%30', '%u0000', '%2F', '%5C'] as const;
