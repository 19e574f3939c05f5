/**
 * `npm run conformance`: runs the agents' suite (test/agents) and writes docs/conformance.md from
 * its results. `npm run conformance:check`: the same, but fails when the committed document is not
 * what the results give (stale), instead of writing it.
 *
 *   --results <file>  read vitest's JSON report of test/agents from this file instead of running
 *                     the suite (CI runs the agents as a job of its own, then checks)
 *   --out <file>      the document (default docs/conformance.md)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installedVersion, renderMatrix, rowsOf, type VitestReport } from './matrix';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const args = process.argv.slice(2);
const option = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const check = args.includes('--check');
const out = path.resolve(ROOT, option('--out') ?? 'docs/conformance.md');

function runSuite(): { report: VitestReport; status: number } {
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-conformance-'));
  const file = path.join(dir, 'agents.json');
  try {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', 'test/agents', '--reporter=default', '--reporter=json', `--outputFile.json=${file}`], { cwd: ROOT, stdio: 'inherit' });
    if (!existsSync(file)) throw new Error(`conformance: the agents' suite wrote no results (vitest exited ${r.status})`);
    return { report: JSON.parse(readFileSync(file, 'utf8')) as VitestReport, status: r.status ?? 1 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const given = option('--results');
const { report, status } = given ? { report: JSON.parse(readFileSync(given, 'utf8')) as VitestReport, status: 0 } : runSuite();
const doc = renderMatrix(rowsOf(report, (pkg) => installedVersion(pkg, ROOT)));
const rel = path.relative(ROOT, out);

if (check) {
  const committed = existsSync(out) ? readFileSync(out, 'utf8') : '';
  if (committed !== doc) {
    console.error(`conformance:check: ${rel} is stale: the agents' results give another matrix. Run \`npm run conformance\` and commit ${rel}.`);
    const had = new Set(committed.split('\n'));
    for (const line of doc.split('\n')) if (!had.has(line)) console.error(`  expected: ${line}`);
    process.exit(1);
  }
  console.log(`conformance:check: ${rel} matches the agents' results`);
} else {
  writeFileSync(out, doc);
  console.log(`conformance: wrote ${rel}`);
}
// The suite's own failures are reported by vitest above; they fail the command too.
process.exit(status === 0 ? 0 : 1);
