import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import config from '../../server/adapters/storage/drizzle.config';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

async function dbCheck(...args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run('npx', ['--no-install', 'tsx', 'scripts/db/check.ts', ...args], { cwd: ROOT, timeout: 60_000 });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

// The copy sits inside the checkout: the schema imports drizzle-orm, and drizzle-kit reads paths relative to it.
mkdirSync(path.join(ROOT, 'node_modules/.cache'), { recursive: true });
const copy = path.relative(ROOT, mkdtempSync(path.join(ROOT, 'node_modules/.cache/db-check-test-')));
afterAll(() => rmSync(path.join(ROOT, copy), { recursive: true, force: true }));

function schemaCopy(edit: (source: string) => string): { schema: string; migrations: string } {
  const folder = path.relative(ROOT, mkdtempSync(path.join(ROOT, copy, 'case-')));
  const schema = path.join(folder, 'schema.ts');
  const migrations = path.join(folder, 'migrations');
  cpSync(path.join(ROOT, String(config.out)), path.join(ROOT, migrations), { recursive: true });
  const source = readFileSync(path.join(ROOT, String(config.schema)), 'utf8');
  const edited = edit(source);
  expect(edited).not.toBe(source);
  writeFileSync(path.join(ROOT, schema), edited);
  return { schema, migrations };
}

describe('npm run db:check', () => {
  it('passes on the committed schema and migrations', async () => {
    const result = await dbCheck();
    expect(result.output).toMatch(/agree/);
    expect(result.code).toBe(0);
  });

  it('fails on a schema column no migration creates, and shows the missing SQL', async () => {
    const { schema, migrations } = schemaCopy((source) =>
      source.replace("qrCode: text('qr_code')", "driftNote: text('drift_note'),\n  qrCode: text('qr_code')"));
    const result = await dbCheck(schema, migrations);
    expect(result.code).toBe(1);
    expect(result.output).toContain('ALTER TABLE "accounts" ADD COLUMN "drift_note" text');
    expect(result.output).toContain('npm run db:generate');
  });

  it('fails on a renamed column instead of waiting for an answer', async () => {
    const { schema, migrations } = schemaCopy((source) => source.replace("qrCode: text('qr_code')", "qrCode: text('qr_code_renamed')"));
    const result = await dbCheck(schema, migrations);
    expect(result.code).toBe(1);
    expect(result.output).toMatch(/renamed/);
  });
});
