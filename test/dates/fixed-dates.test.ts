/**
 * No test depends on the day it runs: test code holds no fixed calendar date unless a
 * `fixed-date: <why>` comment says why it never meets a clock (fixed-dates.ts). `.ci/year-ahead`
 * proves the rest by running the suite with every clock a year ahead.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findFixedDates, isTestSource, scanTestSources } from './fixed-dates';

const ROOT = path.resolve(import.meta.dirname, '../..');
const lines = (source: string) => findFixedDates('sample.test.ts', source).map((f) => f.line);

describe('fixed calendar dates in test code', () => {
  it('none is left without a reason', () => {
    const found = scanTestSources(ROOT).map((f) => `${f.file}:${f.line}: ${f.text}`);
    expect(found, 'derive the time from Date.now() (e.g. the start of the current UTC day), or say why it never meets a clock with a `// fixed-date: <why>` comment on the line or before the statement').toEqual([]);
  });

  // fixed-date: sample sources for the scanner, never run.
  it('finds Date.UTC and new Date with a literal year, and dates in strings and templates', () => {
    expect(lines([
      'const T0 = Date.UTC(2026, 10, 23, 12);',
      "const at = new Date('2026-03-04T05:06:07.890Z');",
      'const d = new Date(2026, 0, 1);',
      "const p = Date.parse('2026-11-23');",
      'const q = `/bill?start=2026-11-01&end=${end}`;',
      'const r = `${x}?since=2026-11-01T00:00:00Z`;',
      "const s = { created: '2026-11-01' };",
    ].join('\n'))).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  // fixed-date: sample sources for the scanner, never run.
  it('leaves derived times, comments, model names and API versions alone', () => {
    expect(lines([
      'const a = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);',
      'const b = new Date(Date.now() - 86_400_000);',
      'const c = `${addDays(today(), -3)}T12:00:00Z`;',
      '// 2026-11-23 was the day this broke',
      "const d = defaultPrice('gpt-4o-mini-2024-07-18');",
      "const e = { headers: { 'anthropic-version': '2023-06-01' }, apiVersion: '2025-01-01-preview' };",
      'const f = new Date(0);',
    ].join('\n'))).toEqual([]);
  });

  // fixed-date: sample sources for the scanner, never run.
  it('accepts a reason on the line or before the statement holding the date, and only a reason', () => {
    expect(lines([
      "const a = new Date('2024-03-01T23:59:59Z'); // fixed-date: resolvePeriod is given it",
      '// fixed-date: pure function, no clock',
      "it('counts days', () => {",
      "  expect(eachDay({ start: '2024-02-28', end: '2024-03-01' })).toHaveLength(3);",
      '});',
      "const b = Date.UTC(2026, 0, 1); // fixed-date:",
      "const c = Date.UTC(2026, 0, 1); const note = '// fixed-date: not a comment';",
      "g(); // fixed-date: this line's own",
      'const d = Date.UTC(2026, 0, 1);',
    ].join('\n'))).toEqual([6, 7, 9]);
  });

  it('reads test files, fixtures and test support, not production code', () => {
    for (const p of ['server/admin/billing/billing.test.ts', 'server/gateway/admission/store.contract.ts', 'server/gateway/admission/test-fixture.ts', 'console/test-support.ts', 'server/testing/accounts.ts', 'test/fuzz/proxy/cases.ts', 'console/accounts.test.tsx']) {
      expect(isTestSource(p), p).toBe(true);
    }
    for (const p of ['server/admin/billing/period.ts', 'console/src/ui/format.ts', 'contract/common.ts', 'server/testing/mock-upstream/openai.d.ts']) {
      expect(isTestSource(p), p).toBe(false);
    }
  });
});
