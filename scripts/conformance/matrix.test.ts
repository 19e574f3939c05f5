import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { packagesOf, renderMatrix, rowsOf, type VitestReport } from './matrix';

const result = (row: string, title: string, status: string) => ({ ancestorTitles: [row], title, status });
const report = (...tests: ReturnType<typeof result>[]): VitestReport => ({ testResults: [{ name: 'x.test.ts', assertionResults: tests }] });
const version = (pkg: string) => `1.0.0-${pkg.length}`;

describe('the conformance matrix', () => {
  it('names each row\'s packages from its name', () => {
    expect(packagesOf('Claude Code')).toEqual(['@anthropic-ai/claude-code']);
    expect(packagesOf('AI SDK (@ai-sdk/openai responses)')).toEqual(['ai', '@ai-sdk/openai']);
    expect(packagesOf('OpenAI Agents SDK')).toEqual(['@openai/agents']);
    expect(packagesOf('Gemini CLI')).toEqual(['@google/gemini-cli']);
    expect(() => rowsOf(report(result('Mystery agent', 'standard: x', 'passed')), version)).toThrow(/names no package/);
  });

  it('passes a cell only when all its tests passed, and marks kinds without tests', () => {
    const rows = rowsOf(report(
      result('Codex CLI', 'standard: tool task', 'passed'),
      result('Codex CLI', 'standard: second turn', 'failed'),
      result('Codex CLI', 'anthropic: tool task', 'passed'),
      result('Codex CLI', 'azure: tool task', 'skipped'),
      result('Claude Code', 'chat-only: tool task', 'passed'),
    ), version);
    expect(rows.map((r) => r.name)).toEqual(['Claude Code', 'Codex CLI']);
    expect(rows[1].cells).toEqual({ standard: 'fail', 'chat-only': 'none', anthropic: 'pass', 'vertex-claude': 'none', azure: 'skipped', gemini: 'none', bedrock: 'none' });
    const doc = renderMatrix(rows);
    expect(doc).toContain('| Codex CLI | `@openai/codex` 1.0.0-13 | **fail** | – | pass | – | skipped | – | – |');
    expect(doc).toContain('| Claude Code | `@anthropic-ai/claude-code` 1.0.0-25 | – | pass | – | – | – | – | – |');
    // The same results give the same document (nothing of the day or the machine in it).
    expect(renderMatrix(rowsOf(report(result('Claude Code', 'chat-only: tool task', 'passed')), version))).toBe(renderMatrix(rowsOf(report(result('Claude Code', 'chat-only: tool task', 'passed')), version)));
  });

  it('refuses results of a test file that did not load', () => {
    expect(() => rowsOf({ testResults: [{ name: '/x/test/agents/codex.test.ts', status: 'failed', message: 'createRequire is not defined', assertionResults: [] }] }, version))
      .toThrow('codex.test.ts ran no tests: createRequire is not defined');
  });

  it('refuses a test whose title does not start with a key kind', () => {
    expect(() => renderMatrix(rowsOf(report(result('Claude Code', 'vertex: tool task', 'passed')), version))).toThrow(/does not start with a key kind/);
  });

  it('is the committed docs/conformance.md for its own rows and kinds (the header and the kinds legend)', () => {
    const committed = readFileSync(new URL('../../docs/conformance.md', import.meta.url), 'utf8');
    const doc = renderMatrix([]);
    // Everything but the table's rows is the script's text: a hand edit of it shows here.
    for (const line of doc.split('\n').filter((l) => l !== '')) expect(committed.split('\n')).toContain(line);
  });
});
