/**
 * `npm run db:check`: fails when the Drizzle schema and the committed migrations disagree.
 * `drizzle-kit check` alone only proves the migration history is consistent (no colliding
 * snapshots); it passes a schema edit nobody generated a migration for. So the schema is also
 * diffed against the last snapshot: `drizzle-kit generate` runs into a scratch copy of the
 * migrations folder and any file it would add is drift.
 * Optional arguments `<schema.ts> <migrations folder>` check another pair (its self-test uses a copy).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import config from '../../server/adapters/storage/drizzle.config';

const SCRATCH_ROOT = 'node_modules/.cache/db-check';
const FIX_HINT = 'npm run db:generate, review the new migration and commit it with the schema change';
const dialect = config.dialect;
const schema = process.argv[2] ?? String(config.schema);
const migrations = process.argv[3] ?? String(config.out);

function drizzleKit(args: string[]): { ok: boolean; output: string } {
  // stdin closed: a question (renamed or new column?) cannot wait for an answer that never comes.
  const run = spawnSync('npx', ['--no-install', 'drizzle-kit', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  const output = `${run.stdout ?? ''}${run.stderr ?? ''}`.split('\n').filter((line) => !line.startsWith('npm warn')).join('\n').trim();
  return { ok: run.status === 0, output };
}

function fail(lines: string[]): never {
  for (const line of lines) console.error(line);
  console.error(`Fix: ${FIX_HINT}`);
  process.exit(1);
}

const started = Date.now();

const history = drizzleKit(['check', `--dialect=${dialect}`, `--out=${migrations}`]);
if (!history.ok) fail(['db:check: the migration history is inconsistent:', history.output]);

// drizzle-kit reads --out relative to the working directory, so the scratch copy lives in it.
mkdirSync(SCRATCH_ROOT, { recursive: true });
const scratch = path.relative(process.cwd(), mkdtempSync(path.join(SCRATCH_ROOT, 'migrations-')));
let problem: string[] | null = null;
try {
  cpSync(migrations, scratch, { recursive: true });
  const before = new Set(readdirSync(scratch));
  const diff = drizzleKit(['generate', `--dialect=${dialect}`, `--schema=${schema}`, `--out=${scratch}`, '--name=drift']);
  const added = readdirSync(scratch).filter((file) => !before.has(file) && file.endsWith('.sql'));
  if (added.length > 0) {
    const sql = added.map((file) => readFileSync(path.join(scratch, file), 'utf8').trim()).join('\n');
    problem = [`db:check: ${schema} differs from the migrations in ${migrations}; a new migration would be:`, sql];
  } else if (/Interactive prompts/.test(diff.output)) {
    problem = [`db:check: ${schema} differs from the migrations in ${migrations}: drizzle-kit asks whether a table or column was renamed`];
  } else if (!diff.ok || !/No schema changes/.test(diff.output)) {
    // drizzle-kit reports some failures (an unreadable folder) with exit status 0: only its own
    // "nothing to migrate" line means the comparison ran and found nothing.
    problem = [`db:check: drizzle-kit could not compare ${schema} with ${migrations}:`, diff.output];
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
if (problem) fail(problem);

console.log(`db:check: ${schema} and ${migrations} agree (${((Date.now() - started) / 1000).toFixed(1)} s)`);
