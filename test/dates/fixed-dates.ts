/**
 * Finds the fixed calendar dates in test code: `Date.UTC(2026, …)`, `new Date(2026, …)` and any
 * string or template text holding a YYYY-MM-DD date (`new Date('2026-…')`, `Date.parse(…)`, ISO
 * times in fixtures, dates in query strings). Such a date turns into a failure on the day the
 * real clock passes it wherever it meets that clock (Redis TTLs, the database's now(), day
 * partitions, retention, card expiry, bill and cap periods), so test code derives its times from
 * Date.now() instead. A date that never meets a clock (a pure function given its own `now`, the
 * calendar's bounds) stays, with a `fixed-date: <why>` comment on its line or before the
 * statement holding it (a test, a describe, a declaration); the reason is required. Model names
 * (`gpt-4o-mini-2024-07-18`) and API versions are names, not times, and pass.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export interface FixedDate { file: string; line: number; text: string }

const MARKER = /fixed-date:\s*\S/;
/** Not after a word or a hyphen: `gpt-4o-mini-2024-07-18` is a model's name. */
const CALENDAR_DATE = /(?<![\w-])\d{4}-\d{2}-\d{2}/;
/** An API version (`anthropic-version: 2023-06-01`, Azure's `2025-01-01-preview`): a name, not a time. */
const API_VERSION = /^\d{4}-\d{2}-\d{2}(-preview)?$/;

/** The test code of the checkout: test files, their fixtures and support, the test folders. */
export function isTestSource(relative: string): boolean {
  const p = relative.split(path.sep).join('/');
  if (!/\.tsx?$/.test(p) || p.endsWith('.d.ts')) return false;
  return /\.test\.tsx?$/.test(p) || /(^|\/)(test-fixture|test-support)\.ts$/.test(p) || /\.contract\.ts$/.test(p)
    || p.startsWith('server/testing/') || p.startsWith('test/');
}

const ROOTS = ['server', 'console', 'contract', 'clients', 'scripts', 'test'];
const SKIP = new Set(['node_modules', 'dist', 'screenshots']);

export function testSources(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.join(dir, e.name);
      if (e.isDirectory()) { if (!SKIP.has(e.name)) walk(rel); } else if (isTestSource(rel)) out.push(rel);
    }
  };
  for (const r of ROOTS) walk(r);
  return out.sort();
}

const isYear = (n: ts.Node | undefined): boolean => n !== undefined && ts.isNumericLiteral(n) && /^\d{4}$/.test(n.text);

function lineOf(node: ts.Node): string {
  const sf = node.getSourceFile();
  const { line } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
  return sf.text.slice(sf.getPositionOfLineAndCharacter(line, 0), sf.getLineEndOfPosition(node.getStart(sf)));
}

function holdsFixedDate(node: ts.Node): boolean {
  if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)
    && node.expression.getText() === 'Date.UTC' && isYear(node.arguments[0])) return true;
  if (ts.isNewExpression(node) && node.expression.getText() === 'Date' && (node.arguments?.length ?? 0) >= 2 && isYear(node.arguments![0])) return true;
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
    if (API_VERSION.test(node.text) && /version/i.test(lineOf(node))) return false;
    return CALENDAR_DATE.test(node.text);
  }
  return false;
}

/** Every comment of a file: a token's leading and trailing comments, each once. */
function comments(sf: ts.SourceFile): { line: number; text: string }[] {
  const seen = new Set<number>();
  const out: { line: number; text: string }[] = [];
  const add = (ranges: ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) {
      if (seen.has(r.pos)) continue;
      seen.add(r.pos);
      out.push({ line: sf.getLineAndCharacterOfPosition(r.pos).line, text: sf.text.slice(r.pos, r.end) });
    }
  };
  const walk = (n: ts.Node) => {
    add(ts.getLeadingCommentRanges(sf.text, n.getFullStart()));
    add(ts.getTrailingCommentRanges(sf.text, n.getEnd()));
    for (const c of n.getChildren(sf)) walk(c);
  };
  walk(sf);
  return out;
}

/** The unmarked fixed dates of one source text, one per line. */
export function findFixedDates(file: string, source: string): FixedDate[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const lines = source.split('\n');
  let markedLines: Set<number> | undefined;
  const found = new Map<number, FixedDate>();
  const marked = (node: ts.Node, line: number): boolean => {
    markedLines ??= new Set(comments(sf).filter((c) => MARKER.test(c.text)).map((c) => c.line));
    if (markedLines.has(line)) return true;
    // Leading comments only: a comment ending the line before belongs to that line's statement.
    for (let n: ts.Node | undefined = node; n && n !== sf; n = n.parent) {
      if ((ts.getLeadingCommentRanges(source, n.getFullStart()) ?? []).some((c) => MARKER.test(source.slice(c.pos, c.end)))) return true;
    }
    return false;
  };
  const visit = (node: ts.Node) => {
    if (holdsFixedDate(node)) {
      const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      if (!found.has(line) && !marked(node, line)) found.set(line, { file, line: line + 1, text: lines[line].trim() });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return [...found.values()];
}

export function scanTestSources(root: string): FixedDate[] {
  return testSources(root).flatMap((f) => findFixedDates(f, readFileSync(path.join(root, f), 'utf8')));
}
