/**
 * The conformance matrix (docs/conformance.md) from the agents' suite results (vitest's JSON
 * reporter over test/agents): rows are the agents and SDKs (each test file's `describe`), columns
 * the key kinds (each test's `it('<kind>: …')`), a cell passes when every test of it passed.
 * Nothing in it depends on the day or the machine: the same results give the same document.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { KEY_KINDS, KIND_CONFIG, type KeyKind } from '../../test/agents/kinds';

/** The part of vitest's JSON report the matrix reads. */
export interface VitestReport {
  testResults: { name: string; status?: string; message?: string; assertionResults: { ancestorTitles: string[]; title: string; status: string }[] }[];
}

/** The npm packages a row runs, by the row name's start; packages named in the row (`@scope/name`) are added. */
const ROW_PACKAGES: [prefix: string, packages: string[]][] = [
  ['Claude Code', ['@anthropic-ai/claude-code']],
  ['Codex CLI', ['@openai/codex']],
  ['Gemini CLI', ['@google/gemini-cli']],
  ['OpenAI Agents SDK', ['@openai/agents']],
  ['AI SDK', ['ai']],
];

export function packagesOf(row: string): string[] {
  const named = row.match(/@[a-z0-9-]+\/[a-z0-9.-]+/g) ?? [];
  const known = ROW_PACKAGES.find(([prefix]) => row.startsWith(prefix))?.[1] ?? [];
  return [...new Set([...known, ...named])];
}

export type Cell = 'pass' | 'fail' | 'skipped' | 'none';

export interface Row {
  name: string;
  packages: { name: string; version: string }[];
  cells: Record<KeyKind, Cell>;
  /** Tests of the row whose title does not start with a key kind: the suite's convention is broken. */
  stray: string[];
}

/** The installed version of a package: its own package.json in `root`'s node_modules (read as a file: not every package exports it). */
export function installedVersion(pkg: string, root: string): string {
  return (JSON.parse(readFileSync(path.join(root, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
}

const KIND_OF = new RegExp(`^(${KEY_KINDS.join('|')}): `);

/** The matrix's rows, in the order of their names. */
export function rowsOf(report: VitestReport, version: (pkg: string) => string): Row[] {
  const rows = new Map<string, Row>();
  for (const file of report.testResults) {
    // A file that did not load has no tests to show: its rows would silently vanish from the matrix.
    if (file.assertionResults.length === 0) throw new Error(`conformance: ${path.basename(file.name)} ran no tests${file.message ? `: ${file.message.split('\n')[0]}` : ''}`);
    for (const t of file.assertionResults) {
      const name = t.ancestorTitles[0];
      if (!name) continue;
      let row = rows.get(name);
      if (!row) {
        const pkgs = packagesOf(name);
        if (pkgs.length === 0) throw new Error(`conformance: the row "${name}" names no package: add its prefix to ROW_PACKAGES in scripts/conformance/matrix.ts`);
        row = { name, packages: pkgs.map((p) => ({ name: p, version: version(p) })), cells: Object.fromEntries(KEY_KINDS.map((k) => [k, 'none'])) as Record<KeyKind, Cell>, stray: [] };
        rows.set(name, row);
      }
      const kind = KIND_OF.exec(t.title)?.[1] as KeyKind | undefined;
      if (!kind) { row.stray.push(t.title); continue; }
      row.cells[kind] = merge(row.cells[kind], t.status === 'passed' ? 'pass' : t.status === 'failed' ? 'fail' : 'skipped');
    }
  }
  return [...rows.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** A cell passes only when all its tests passed; one failure fails it. */
function merge(a: Cell, b: Cell): Cell {
  if (a === 'fail' || b === 'fail') return 'fail';
  if (a === 'none') return b;
  if (a === 'skipped' || b === 'skipped') return 'skipped';
  return 'pass';
}

const MARK: Record<Cell, string> = { pass: 'pass', fail: '**fail**', skipped: 'skipped', none: '–' };

/** docs/conformance.md. */
export function renderMatrix(rows: Row[]): string {
  const stray = rows.flatMap((r) => r.stray.map((t) => `${r.name} › ${t}`));
  if (stray.length > 0) throw new Error(`conformance: tests whose title does not start with a key kind (${KEY_KINDS.join(', ')}):\n  ${stray.join('\n  ')}`);
  const head = ['Agent or SDK', 'Version', ...KEY_KINDS.map((k) => `\`${k}\``)];
  const lines = [
    '# Conformance: agents and SDKs on every key kind',
    '',
    '<!-- Written by `npm run conformance` from the results of test/agents (scripts/conformance/write.ts); never edit by hand.',
    '     `npm run conformance:check` (run by CI after the agents) fails when this file is stale. -->',
    '',
    'Each agent or SDK, at the version installed from package.json, runs through Switchyard against',
    'the mock upstream on one provider key of each kind: a two-step tool task (the model asks for one',
    'of the agent\'s own tools, the agent runs it, the model answers with text) and a second turn of',
    'the conversation. A cell passes when the agent finished with the expected text, every request it',
    'sent was answered 2xx, and the bill equals the provider\'s usage (and the agent\'s own token or',
    'cost figure, where it prints one). The suite is test/agents/; a failing test names the agent\'s',
    'version and the failing request\'s body shape.',
    '',
    `| ${head.join(' | ')} |`,
    `| ${head.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.name} | ${r.packages.map((p) => `\`${p.name}\` ${p.version}`).join(', ')} | ${KEY_KINDS.map((k) => MARK[r.cells[k]]).join(' | ')} |`),
    '',
    'Key kinds (the `config` of the provider key, `POST /x-keys`):',
    '',
    ...KEY_KINDS.map((k) => `- \`${k}\`: ${KIND_CONFIG[k]}`),
    '',
  ];
  return lines.join('\n');
}
