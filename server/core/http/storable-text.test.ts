import { describe, expect, it } from 'vitest';
import { textProblem, unstorableField } from './storable-text';

describe('storable text', () => {
  it('finds NUL characters and unpaired surrogates, and nothing else', () => {
    expect(textProblem('a\0b')).toBe('must not contain NUL characters');
    for (const s of ['\uD800', 'x\uDBFFy', '\uDC00', 'a\uDFFF', '\uDE00\uD83D']) expect(textProblem(s)).toBe('must not contain unpaired UTF-16 surrogates');
    for (const s of ['', 'plain', '😀', 'é\u00FF\uFFFD', '\\u0000']) expect(textProblem(s)).toBeUndefined();
  });

  it('names the first field whose value or key cannot be stored', () => {
    expect(unstorableField({ a: 'x', b: [1, true, null, { c: 'y\0' }] })).toBe('b.3.c: must not contain NUL characters');
    expect(unstorableField({ deployments: { 'gpt\0x': 'd' } })).toBe('deployments.gpt\0x: must not contain NUL characters');
    expect(unstorableField({ a: 'fine', b: { c: 1 } })).toBeUndefined();
    expect(unstorableField('\0')).toBe('body: must not contain NUL characters');
    expect(unstorableField('\0', 'input')).toBe('input: must not contain NUL characters');
  });

  it('walks deeply nested values without recursion', () => {
    let deep: unknown = '\0';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(unstorableField({ d: deep })).toMatch(/^d(\.0)+: must not contain NUL characters$/);
  });
});
