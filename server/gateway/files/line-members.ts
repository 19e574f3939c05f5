/**
 * The four members of a batch line the line check reads (custom_id, method, url, body), found
 * in the line's bytes without JSON.parse building the whole line.
 *
 * Why: JSON.parse puts every string value of up to 10 characters (a custom_id such as
 * `req-17`) into V8's string table, in old space, where it stays until a full collection. Each
 * line's custom_id is new, so a 200 MB file of 176,000 lines left about 6 MB of such strings
 * behind, most of the gateway's growth under the upload (issue 32).
 *
 * The line is still checked exactly as JSON.parse checks it: the top-level object, its keys
 * and its scalar values here, and every nested value (the body, and any other object or array)
 * by JSON.parse itself, on that value's bytes. test/fuzz/batch-line-members.test.ts holds the
 * reader to JSON.parse on valid and broken lines.
 *
 * Bytes are read as they are: an ASCII byte is itself after UTF-8 decoding (a broken sequence
 * never swallows one), and any byte from 0x80 up decodes to characters a JSON string may hold.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;
const MINUS = 0x2d;

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
/** `"` `\` `/` b f n r t: the escapes besides \u. */
const isEscape = (c: number) => c === 0x22 || c === 0x5c || c === 0x2f || c === 0x62 || c === 0x66 || c === 0x6e || c === 0x72 || c === 0x74;

/** The first byte from `i` that is not JSON whitespace (space, tab, CR, LF). */
export function skipSpace(b: Uint8Array, i: number, end: number): number {
  while (i < end && isSpace(b[i])) i++;
  return i;
}

/** Where the string opening at `i` ends (after its closing quote); -1 when it is not a JSON string. */
function stringEnd(b: Uint8Array, i: number, end: number): number {
  for (i++; i < end; i++) {
    const c = b[i];
    if (c === QUOTE) return i + 1;
    if (c < 0x20) return -1;
    if (c !== BACKSLASH) continue;
    if (++i >= end) return -1;
    if (b[i] === 0x75) {
      for (let k = 0; k < 4; k++) if (++i >= end || !isHex(b[i])) return -1;
    } else if (!isEscape(b[i])) return -1;
  }
  return -1;
}

function numberEnd(b: Uint8Array, i: number, end: number): number {
  if (b[i] === MINUS) i++;
  if (i >= end) return -1;
  if (b[i] === 0x30) i++;
  else if (isDigit(b[i])) while (i < end && isDigit(b[i])) i++;
  else return -1;
  if (i < end && b[i] === 0x2e) {
    const from = ++i;
    while (i < end && isDigit(b[i])) i++;
    if (i === from) return -1;
  }
  if (i < end && (b[i] === 0x65 || b[i] === 0x45)) {
    i++;
    if (i < end && (b[i] === 0x2b || b[i] === MINUS)) i++;
    const from = i;
    while (i < end && isDigit(b[i])) i++;
    if (i === from) return -1;
  }
  return i;
}

const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');
const NULL = Buffer.from('null');

function wordEnd(b: Uint8Array, i: number, end: number, word: Uint8Array): number {
  if (i + word.length > end) return -1;
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word[k]) return -1;
  return i + word.length;
}

/** Where the string opening at `i` ends by its quotes alone (one escaped has an odd run of backslashes before it); -1 when it does not. */
function quotedEnd(b: Buffer, i: number, end: number): number {
  for (;;) {
    const q = b.indexOf(QUOTE, i + 1);
    if (q < 0 || q >= end) return -1;
    let k = q - 1;
    while (b[k] === BACKSLASH) k--;
    if ((q - k) % 2 === 1) return q + 1;
    i = q;
  }
}

/**
 * Where the object or array opening at `i` ends, by its brackets (strings skipped); -1 when it
 * does not close. Only the extent: JSON.parse checks what is inside.
 */
function nestedEnd(b: Buffer, i: number, end: number): number {
  let depth = 0;
  for (; i < end; i++) {
    const c = b[i];
    if (c === QUOTE) {
      const after = quotedEnd(b, i, end);
      if (after < 0) return -1;
      i = after - 1;
    } else if (c === OPEN || c === OPEN_ARRAY) depth++;
    else if ((c === CLOSE || c === CLOSE_ARRAY) && --depth === 0) return i + 1;
  }
  return -1;
}

/** Where the value starting at `i` ends; -1 when it is no JSON value (a nested one only by its brackets). */
function valueEnd(b: Buffer, i: number, end: number): number {
  if (i >= end) return -1;
  const c = b[i];
  if (c === QUOTE) return stringEnd(b, i, end);
  if (c === OPEN || c === OPEN_ARRAY) return nestedEnd(b, i, end);
  if (c === 0x74) return wordEnd(b, i, end, TRUE);
  if (c === 0x66) return wordEnd(b, i, end, FALSE);
  if (c === 0x6e) return wordEnd(b, i, end, NULL);
  if (c === MINUS || isDigit(c)) return numberEnd(b, i, end);
  return -1;
}

const parses = (b: Buffer, start: number, end: number): boolean => {
  try {
    JSON.parse(b.toString('utf8', start, end));
    return true;
  } catch {
    return false;
  }
};

const nested = (b: Uint8Array, i: number) => b[i] === OPEN || b[i] === OPEN_ARRAY;

/** The members read, by their index in LineMembers' starts and ends. */
export const MEMBER = { custom_id: 0, method: 1, url: 2, body: 3 } as const;
const NAMES = Object.keys(MEMBER).map((n) => Buffer.from(n));
const OTHER = -1;
const BODY = MEMBER.body;

/** Which of the four names the key between `start` and `end` (quotes included) is, as JSON.parse reads it; OTHER for any other. */
function memberOf(b: Buffer, start: number, end: number): number {
  for (let k = start + 1; k < end - 1; k++) {
    if (b[k] === BACKSLASH) return NAMES.findIndex((n) => n.toString() === JSON.parse(b.toString('utf8', start, end)));
  }
  const len = end - start - 2;
  names: for (let n = 0; n < NAMES.length; n++) {
    const name = NAMES[n];
    if (name.length !== len) continue;
    for (let k = 0; k < len; k++) if (b[start + 1 + k] !== name[k]) continue names;
    return n;
  }
  return OTHER;
}

/**
 * The members of one line, read again for each: where each of the four values lies in the
 * line's bytes (from its first byte to after its last; -1 when the line has no such member),
 * the last one where a name repeats, as JSON.parse keeps the last.
 */
export class LineMembers {
  /** Starts and ends, by member: custom_id, method, url, body. */
  readonly start = [-1, -1, -1, -1];
  readonly end = [-1, -1, -1, -1];
  /** How many times the body member is written (JSON.parse keeps the last). */
  bodies = 0;

  /**
   * Reads the object opening at `i` (the line's first byte that is not whitespace is `{`) up
   * to `end`: false when the line is not valid JSON. The body's value, when it is an object
   * or array, is left for the caller's JSON.parse, which it needs anyway.
   */
  read(b: Buffer, i: number, end: number): boolean {
    this.start.fill(-1);
    this.end.fill(-1);
    this.bodies = 0;
    i = skipSpace(b, i + 1, end);
    if (i < end && b[i] === CLOSE) return skipSpace(b, i + 1, end) === end;
    for (;;) {
      if (i >= end || b[i] !== QUOTE) return false;
      const keyStart = i;
      const keyEnd = stringEnd(b, i, end);
      if (keyEnd < 0) return false;
      i = skipSpace(b, keyEnd, end);
      if (i >= end || b[i] !== COLON) return false;
      i = skipSpace(b, i + 1, end);
      const from = i;
      const to = valueEnd(b, i, end);
      if (to < 0) return false;
      const member = memberOf(b, keyStart, keyEnd);
      if (member === BODY) {
        this.bodies++;
        // An earlier body, replaced by this one, must still be valid JSON.
        const before = this.start[BODY];
        if (before >= 0 && nested(b, before) && !parses(b, before, this.end[BODY])) return false;
      } else if (nested(b, from) && !parses(b, from, to)) return false;
      if (member !== OTHER) {
        this.start[member] = from;
        this.end[member] = to;
      }
      i = skipSpace(b, to, end);
      if (i < end && b[i] === COMMA) {
        i = skipSpace(b, i + 1, end);
        continue;
      }
      return i < end && b[i] === CLOSE && skipSpace(b, i + 1, end) === end;
    }
  }

  /** The member's value when it is a string, as JSON.parse reads it; undefined when it is absent or no string. */
  text(b: Buffer, member: number): string | undefined {
    const start = this.start[member];
    const end = this.end[member];
    if (start < 0 || b[start] !== QUOTE) return undefined;
    for (let k = start + 1; k < end - 1; k++) if (b[k] === BACKSLASH) return JSON.parse(b.toString('utf8', start, end)) as string;
    return b.toString('utf8', start + 1, end - 1);
  }

  /** The member's value as JSON.parse reads it (undefined when absent); throws as JSON.parse does. */
  value(b: Buffer, member: number): unknown {
    const start = this.start[member];
    return start < 0 ? undefined : JSON.parse(b.toString('utf8', start, this.end[member]));
  }
}
