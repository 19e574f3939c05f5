import { modelToEncodingMap } from 'gpt-tokenizer/mapping';
import { catalogueModel } from './catalogue';
import type { InputText } from './estimate';

/**
 * A tighter input bound than the bytes (estimate.ts), for a call the byte bound alone would
 * refuse: the request's text counted with its model family's tokenizer, plus a margin for what
 * the provider adds around it. Admission asks for it only then (stages/admission.ts), so the
 * tokenizers (about 70 MB and 0.2 s to load for o200k) are loaded on first need, never for a
 * call that fits by its bytes.
 *
 * Why it stays a bound: every string of the request is counted, keys included (the property
 * names of a tool's schema are rendered; `role` and `type` are not, so they only add), joined by
 * line breaks that stand for the template's separators; each object and array adds a token for
 * the punctuation around it; COUNT_BASE_TOKENS covers the reply's priming and the first
 * message's header, and a thirty-second more covers the tokens a provider's rendering may merge
 * differently than our joining. Images, audio and files keep the byte bound's charge.
 *
 * What it costs (`npm run bench:estimate`): Claude Code's first request, about 10 ms the first
 * time and 1.5 ms again (its long strings remembered, MEMO_MIN_CHARS), in slices that let other
 * calls through.
 */

/** The OpenAI encodings counted here; other names (gpt2, p50k…) keep the byte bound. */
export type EncodingName = 'o200k_base' | 'cl100k_base' | 'o200k_harmony';

/** Loaded only when a first call needs one; a literal import each, so a bundler can find them. */
const LOADERS: Record<EncodingName, () => Promise<{ countTokens: (text: string, options?: { disallowedSpecial?: Set<string> }) => number }>> = {
  o200k_base: () => import('gpt-tokenizer/encoding/o200k_base'),
  cl100k_base: () => import('gpt-tokenizer/encoding/cl100k_base'),
  o200k_harmony: () => import('gpt-tokenizer/encoding/o200k_harmony'),
};

/** The models of OpenAI's older families, dated or not, that gpt-tokenizer's table does not list by name. */
const CL100K = /^(?:gpt-3\.5|gpt-4(?:-|$)|text-embedding-(?:3|ada)|(?:babbage|davinci)-002)/;

/**
 * The tokenizer of `model`, or null when the model is not OpenAI's (its tokenizer may make more
 * tokens than o200k for the same text): gpt-tokenizer's table for the names it lists (older
 * families, gpt-oss), cl100k for GPT-3.5 and GPT-4 by prefix, and o200k, OpenAI's encoding
 * for every model since GPT-4o, for any other model the catalogue gives to OpenAI.
 */
export function encodingOf(model: string): EncodingName | null {
  const name = model.toLowerCase().replace(/^openai\//, '');
  // Names come from clients: only the table's own entries (not `constructor`).
  if (Object.hasOwn(modelToEncodingMap, name)) {
    const listed = (modelToEncodingMap as Record<string, string>)[name];
    return Object.hasOwn(LOADERS, listed) ? (listed as EncodingName) : null;
  }
  if (CL100K.test(name)) return 'cl100k_base';
  return catalogueModel(model)?.provider === 'openai' ? 'o200k_base' : null;
}

/** Tokens of one text. */
export type TextCounter = (text: string) => number;

const loaded = new Map<EncodingName, Promise<TextCounter>>();

/** The encoding's counter, loaded on first use (concurrent first uses share one load). */
export function loadTextCounter(name: EncodingName): Promise<TextCounter> {
  let p = loaded.get(name);
  if (!p) {
    // Special tokens' names (`<|endoftext|>`) in a prompt are text to the API: counted as such, not refused.
    const asText = { disallowedSpecial: new Set<string>() };
    p = LOADERS[name]().then((m) => (text: string) => m.countTokens(text, asText));
    p.catch(() => loaded.delete(name));
    loaded.set(name, p);
  }
  return p;
}

/** The encodings loaded so far in this process (bench:estimate shows the byte bound loads none). */
export const loadedEncodings = (): EncodingName[] => [...loaded.keys()];

/** The reply's priming (3 for OpenAI's chat) and a first message's header, with room to spare. */
export const COUNT_BASE_TOKENS = 16;

/** A counted bound with its margin (see the header): a thirty-second more and COUNT_BASE_TOKENS. */
export const withCountMargin = (tokens: number): number => tokens + Math.ceil(tokens / 32) + COUNT_BASE_TOKENS;

/**
 * The most characters counted: about a million tokens, more than any OpenAI model's context;
 * a larger request keeps its byte bound rather than hold the CPU that long.
 */
export const MAX_COUNTED_CHARS = 4 * 1024 * 1024;

/**
 * A run of one kind of character longer than this is cut: a BPE tokenizer's time grows with the
 * square of an unbroken run (16,384 repeated letters take a second, as many repeated CJK
 * characters eight), and a client chooses its runs. A cut adds one token (a space, or a dot
 * inside white space), which also covers what a cut may save by splitting a merge.
 */
export const LONGEST_RUN = 32;
const RUNS = new RegExp(`(\\S{${LONGEST_RUN}})(?=\\S)|(\\s{${LONGEST_RUN}})(?=\\s)`, 'g');

/** The text with every run longer than LONGEST_RUN cut (see there). */
export function cutRuns(text: string): string {
  return text.replace(RUNS, (_m, word: string | undefined, space: string | undefined) => (word !== undefined ? `${word} ` : `${space}.`));
}

/** Counted in slices this long, the event loop let through between them (a slice takes a few ms). */
const SLICE_CHARS = 64 * 1024;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Tokens of `text` by `count`, runs cut and counted a slice at a time so other calls go on
 * meanwhile; a slice ends at white space (cuts guarantee some within every LONGEST_RUN + 1
 * characters), so no character is split.
 */
export async function countText(text: string, count: TextCounter): Promise<number> {
  const cut = cutRuns(text);
  let total = 0;
  for (let at = 0; at < cut.length;) {
    let end = Math.min(at + SLICE_CHARS, cut.length);
    if (end < cut.length) {
      let space = end;
      while (space > at && cut.charCodeAt(space) > 32) space--;
      if (space > at) end = space;
    }
    total += count(cut.slice(at, end));
    at = end;
    if (at < cut.length) await nextTurn();
  }
  return total;
}

/** A counted input bound: the counted text and structure with their margin, the non-text parts as charged, at most the context window. */
export function countedBound(countedText: number, extra: number, context: number | null): number {
  const tokens = withCountMargin(countedText) + extra;
  return context !== null && tokens > context ? context : tokens;
}

/**
 * A string this long is counted alone and its count kept: an agent sends its system prompt, its
 * tools' descriptions and its history again with every call, so a call near its balance pays
 * for its new text only.
 */
export const MEMO_MIN_CHARS = 1024;
/** Characters of such strings kept per encoding (about 4 MB), the least recently used going first. */
const MEMO_CHARS = 4 * 1024 * 1024;

class LongTexts {
  private readonly counts = new Map<string, number>();
  private chars = 0;

  get(text: string): number | undefined {
    const n = this.counts.get(text);
    if (n !== undefined) {
      this.counts.delete(text);
      this.counts.set(text, n);
    }
    return n;
  }

  set(text: string, n: number): void {
    if (text.length > MEMO_CHARS / 8 || this.counts.has(text)) return;
    this.counts.set(text, n);
    this.chars += text.length;
    for (const old of this.counts.keys()) {
      if (this.chars <= MEMO_CHARS) break;
      this.counts.delete(old);
      this.chars -= old.length;
    }
  }
}

const memos = new WeakMap<TextCounter, LongTexts>();

/**
 * The input bound of a request's text (estimate.ts `inputText`) counted with `count`, or null when
 * the text is longer than MAX_COUNTED_CHARS. Strings of MEMO_MIN_CHARS or more are counted alone
 * (remembered per counter), each with a token for its separator; the rest joined by line breaks.
 */
export async function countInputTokens(input: InputText, count: TextCounter, context: number | null): Promise<number | null> {
  let chars = input.texts.length;
  for (const t of input.texts) chars += t.length;
  if (chars > MAX_COUNTED_CHARS) return null;
  let memo = memos.get(count);
  if (!memo) memos.set(count, (memo = new LongTexts()));
  const short: string[] = [];
  let counted = 0;
  let sinceTurn = 0;
  for (const t of input.texts) {
    if (t.length < MEMO_MIN_CHARS) {
      short.push(t);
      continue;
    }
    let n = memo.get(t);
    if (n === undefined) {
      n = await countText(t, count);
      memo.set(t, n);
      sinceTurn += t.length;
      if (sinceTurn >= SLICE_CHARS) {
        sinceTurn = 0;
        await nextTurn();
      }
    }
    counted += n + 1;
  }
  counted += await countText(short.join('\n'), count);
  return countedBound(counted + input.nodes, input.extra, context);
}
