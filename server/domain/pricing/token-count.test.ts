import { describe, expect, it } from 'vitest';
import { computeChatCompletionTokenCount } from 'gpt-tokenizer/functionCalling';
import { estimateInputTokens, IMAGE_TOKENS, inputText, TOOLS_TOKENS } from './estimate';
import {
  COUNT_BASE_TOKENS, countedBound, countInputTokens, countText, cutRuns, encodingOf, LONGEST_RUN, loadTextCounter, MAX_COUNTED_CHARS, MEMO_MIN_CHARS, withCountMargin,
} from './token-count';
import { claudeCodeChat } from '../../testing/claude-code-request';

const o200k = () => loadTextCounter('o200k_base');
const bytesOf = (doc: Record<string, unknown>) => estimateInputTokens(doc, Buffer.from(JSON.stringify(doc)));

describe('encodingOf', () => {
  it('gives OpenAI models their encoding, by gpt-tokenizer\'s table, the older families\' prefixes, or o200k', () => {
    for (const m of ['gpt-4o', 'gpt-4o-mini-2024-07-18', 'gpt-4.1', 'gpt-4.1-mini', 'gpt-5', 'o3', 'o4-mini', 'openai/gpt-4o', 'GPT-4o']) expect(encodingOf(m), m).toBe('o200k_base');
    for (const m of ['gpt-4', 'gpt-4-0613', 'gpt-4-turbo', 'gpt-3.5-turbo', 'gpt-3.5-turbo-0301', 'text-embedding-3-small', 'text-embedding-ada-002']) expect(encodingOf(m), m).toBe('cl100k_base');
    expect(encodingOf('gpt-oss-120b')).toBe('o200k_harmony');
  });

  it('gives no encoding to other makers\' models, legacy encodings or made-up names: their byte bound stands', () => {
    for (const m of ['claude-sonnet-4-5', 'gemini-2.5-pro', 'llama-3.3-70b-versatile', 'mistral-large-latest', 'davinci', 'text-davinci-003', 'constructor', '__proto__', 'my-own-model']) {
      expect(encodingOf(m), m).toBeNull();
    }
  });
});

describe('cutRuns', () => {
  it('leaves ordinary text alone and cuts every run longer than LONGEST_RUN, with one character per cut', () => {
    const prose = 'The gateway counts what a call may cost, then holds it.\n\tIndented: yes.';
    expect(cutRuns(prose)).toBe(prose);
    const cut = cutRuns(`${'x'.repeat(100)}${' '.repeat(70)}${'我'.repeat(40)}`);
    expect(cut).toBe(`${'x'.repeat(32)} ${'x'.repeat(32)} ${'x'.repeat(32)} xxxx${' '.repeat(32)}.${' '.repeat(32)}.      ${'我'.repeat(32)} ${'我'.repeat(8)}`);
    for (const run of cut.match(/\S+|\s+/g)!) expect(run.length).toBeLessThanOrEqual(LONGEST_RUN);
  });

  it('keeps a client\'s unbroken runs from holding the CPU: 200,000 of one letter or CJK character are counted in slices', async () => {
    const count = await o200k();
    // Whole, each of these takes minutes; cut, well under a second.
    const letters = await countText('x'.repeat(200_000), count);
    const cjk = await countText('我'.repeat(200_000), count);
    expect(letters).toBeGreaterThan(200_000 / LONGEST_RUN);
    expect(cjk).toBeGreaterThanOrEqual(200_000);
  });
});

describe('countInputTokens', () => {
  it('is the counted text and structure with the margin, at or above what OpenAI\'s rendering of the chat and its functions counts', async () => {
    const count = await o200k();
    const doc = claudeCodeChat('gpt-4.1');
    const counted = await countInputTokens(inputText(doc, 'gpt-4.1', null), count, null);
    // gpt-tokenizer's rendering of a chat with function definitions, as OpenAI counts it.
    const rendered = computeChatCompletionTokenCount({ messages: doc.messages, functions: doc.tools.map((t) => t.function) as never }, count);
    expect(counted).toBeGreaterThan(rendered);
    // The request: its byte bound is about four times what it can cost; the count, not a third more.
    expect(counted!).toBeLessThan(bytesOf(doc) / 3);
    expect(counted!).toBeLessThan(rendered * 1.4);
  });

  it('counts every string apart from payloads, keys included, plus a token per object and array', async () => {
    const chars: (t: string) => number = (t) => t.length;
    const doc = { model: 'm', messages: [{ role: 'user', content: 'hello' }], n: 2 };
    const t = inputText(doc);
    expect(t.texts.sort()).toEqual(['content', 'hello', 'm', 'messages', 'model', 'n', '2', 'role', 'user'].sort());
    expect(t.nodes).toBe(3);
    expect(t.extra).toBe(0);
    const joined = t.texts.join('\n').length;
    expect(await countInputTokens(t, chars, null)).toBe(withCountMargin(joined + 3));
    expect(withCountMargin(320)).toBe(320 + 10 + COUNT_BASE_TOKENS);
  });

  it('keeps the byte bound\'s charge for images, inline files and tools, and never counts their base64', async () => {
    const count = await o200k();
    const png = `data:image/png;base64,${'iVBORw0KGgo'.repeat(3000)}`;
    const pdf = 'JVBERi0xLjcK'.repeat(1000);
    const doc = {
      model: 'gpt-4.1',
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      messages: [{ role: 'user', content: [
        { type: 'text', text: 'Compare these.' },
        { type: 'image_url', image_url: { url: png } },
        { type: 'file', file: { filename: 'a.pdf', file_data: pdf } },
      ] }],
    };
    const t = inputText(doc, 'gpt-4.1', null);
    expect(t.extra).toBe(TOOLS_TOKENS + IMAGE_TOKENS + Math.ceil(pdf.length * 0.75));
    expect(t.texts.some((s) => s.length > 100)).toBe(false);
    const counted = (await countInputTokens(t, count, null))!;
    expect(counted - t.extra).toBeLessThan(100);
    expect(counted).toBeLessThan(bytesOf(doc));
  });

  it('counts a long string alone, once: an agent\'s next call pays for its new text only', async () => {
    const seen: string[] = [];
    const spy = (t: string) => { seen.push(t); return Math.ceil(t.length / 4); };
    const system = 'You are a careful assistant. '.repeat(MEMO_MIN_CHARS / 20);
    const first = inputText({ messages: [{ role: 'system', content: system }, { role: 'user', content: 'hi' }] });
    const next = inputText({ messages: [{ role: 'system', content: system }, { role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }] });
    const once = (await countInputTokens(first, spy, null))!;
    expect(seen.some((t) => t.includes(system))).toBe(true);
    seen.length = 0;
    expect(await countInputTokens(first, spy, null)).toBe(once);
    expect(await countInputTokens(next, spy, null)).toBeGreaterThan(once);
    expect(seen.some((t) => t.includes('careful'))).toBe(false);
  });

  it('counts special tokens\' names as the text they are, is held within the context window, and gives up past MAX_COUNTED_CHARS', async () => {
    const count = await o200k();
    const t = inputText({ messages: [{ role: 'user', content: 'Ignore <|endoftext|> and <|im_end|> here' }] });
    expect(await countInputTokens(t, count, null)).toBeGreaterThan(10);
    expect(await countInputTokens(t, count, 20)).toBe(20);
    expect(countedBound(1000, 500, 1200)).toBe(1200);
    const big = inputText({ messages: [{ role: 'user', content: 'word '.repeat(MAX_COUNTED_CHARS / 5 + 1) }] });
    expect(await countInputTokens(big, () => 1, null)).toBeNull();
  });
});
