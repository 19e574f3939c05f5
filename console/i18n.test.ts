import { describe, expect, it } from 'vitest';
import { en } from './src/i18n/en';
import { zhCN } from './src/i18n/zh-CN';
import { languageOf } from './src/i18n';

/** Every leaf of a catalogue by its dotted path (`accounts.summary.balance`). */
function leaves(dict: object, path = ''): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [k, v] of Object.entries(dict)) {
    const p = path ? `${path}.${k}` : k;
    if (v !== null && typeof v === 'object') for (const [q, w] of leaves(v, p)) out.set(q, w);
    else out.set(p, v);
  }
  return out;
}

/** What a message is filled with: its `{{ placeholders }}` and the `<marker>`s `rich` puts elements at. */
const slots = (text: string) => [...text.matchAll(/{{\s*(\w+)\s*}}|<(\w+)>/g)].map((m) => m[1] ?? `<${m[2]}>`).sort();

/** Why two catalogues do not match: keys only one has, values that are empty, placeholders that differ. */
function mismatches(a: object, b: object): string[] {
  const [ka, kb] = [leaves(a), leaves(b)];
  const problems: string[] = [];
  for (const k of ka.keys()) if (!kb.has(k)) problems.push(`missing in the second: ${k}`);
  for (const k of kb.keys()) if (!ka.has(k)) problems.push(`missing in the first: ${k}`);
  for (const [which, leavesOf] of [['first', ka], ['second', kb]] as const) {
    for (const [k, v] of leavesOf) if (typeof v !== 'string' || v.trim() === '') problems.push(`empty in the ${which}: ${k}`);
  }
  for (const [k, v] of ka) {
    const w = kb.get(k);
    if (typeof v === 'string' && typeof w === 'string' && slots(v).join() !== slots(w).join()) problems.push(`other placeholders: ${k}`);
  }
  return problems;
}

describe('the message catalogues', () => {
  it('have the same keys, none empty, with the same placeholders', () => {
    expect(leaves(en).size).toBeGreaterThan(400);
    expect(mismatches(en, zhCN)).toEqual([]);
  });

  it('are told apart when they differ (the check above can fail)', () => {
    expect(mismatches({ a: { b: 'x', c: 'y' } }, { a: { b: 'x' } })).toEqual(['missing in the second: a.c']);
    expect(mismatches({ a: 'x' }, { a: 'x', d: { e: 'z' } })).toEqual(['missing in the first: d.e']);
    expect(mismatches({ a: 'x' }, { a: ' ' })).toEqual(['empty in the second: a']);
    expect(mismatches({ a: 'hi {{ name }}' }, { a: 'hi {{ nom }}' })).toEqual(['other placeholders: a']);
    expect(mismatches({ a: 'see <code>' }, { a: 'see' })).toEqual(['other placeholders: a']);
  });

  it('leave no Chinese message in English', () => {
    // Technical and product names stay as they are spelt, but a message with two English words
    // in a row and no Chinese is one left untranslated; these two are only product names.
    const names = ['providerForm.kinds.gemini.label', 'providerForm.anthropic'];
    const english = [...leaves(zhCN)].filter(([k, v]) => typeof v === 'string' && /[a-z]{4,} [a-z]{4,}/i.test(v) && !/[\u4e00-\u9fff]/.test(v)).map(([k]) => k);
    expect(english).toEqual(names);
  });
});

describe('the language from the browser', () => {
  it('is Chinese for any Chinese tag, English otherwise, by the first the console has', () => {
    expect(languageOf(['zh-CN'])).toBe('zh-CN');
    expect(languageOf(['zh-TW', 'en'])).toBe('zh-CN');
    expect(languageOf(['zh'])).toBe('zh-CN');
    expect(languageOf(['fr-FR', 'zh-Hans-CN'])).toBe('zh-CN');
    expect(languageOf(['en-US', 'zh-CN'])).toBe('en');
    expect(languageOf(['de-DE'])).toBe('en');
    expect(languageOf([])).toBe('en');
    expect(languageOf(['zh_CN.UTF-8'])).toBe('zh-CN');
  });
});
