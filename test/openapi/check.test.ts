/**
 * openapi:check's failure mode, proven on a copy: files generated from the contract pass; a
 * changed field, a hand edit, a deleted or a stray generated file each fail, by name.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument, type OpenApiDocument } from '../../contract/openapi/index';
import { CLIENTS, DOCUMENT_FILE, FIX_HINT, ROOT, writeClients, writeDocument } from '../../scripts/openapi/generate';
import { findStaleFiles } from '../../scripts/openapi/compare';
import { needs } from '../../server/testing/requirements';

let copy: string;
let doc: OpenApiDocument;

beforeAll(async () => {
  doc = buildOpenApiDocument();
  copy = await mkdtemp(path.join(os.tmpdir(), 'switchyard-openapi-check-'));
  for (const t of CLIENTS) {
    for (const own of ['.openapi-generator-ignore', 'README.md']) {
      const src = path.join(ROOT, t.dir, own);
      if (existsSync(src)) await cp(src, path.join(copy, t.dir, own));
    }
  }
  await writeDocument(doc, copy);
  await writeClients(doc, copy);
}, 180_000);
afterAll(async () => { if (copy) await rm(copy, { recursive: true, force: true }); });

describe('openapi:check', needs('java'), () => {
  it('passes when the files were generated from the same contract', async () => {
    expect(await findStaleFiles(doc, copy)).toEqual([]);
  }, 120_000);

  it('exits 1 naming the stale document and the fix when a field of it changed', async () => {
    const file = path.join(copy, DOCUMENT_FILE);
    const original = await readFile(file, 'utf8');
    await writeFile(file, original.replace('"SecretHint"', '"SecretTail"'));
    try {
      const run = await promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts/openapi/check.ts'), copy], { cwd: ROOT })
        .then(() => ({ code: 0, stderr: '' }), (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }));
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`${DOCUMENT_FILE}: differs from the contract`);
      expect(run.stderr).toContain('SecretTail');
      expect(run.stderr).toContain(FIX_HINT);
      expect(run.stderr).toContain('1 generated file(s) out of date'); // the clients were not touched
    } finally {
      await writeFile(file, original);
    }
  }, 120_000);

  it('names every file a contract change, a hand edit, a deletion or a stray file leaves stale', async () => {
    // The contract grew a renamed field the committed files do not know about.
    const changed = structuredClone(doc);
    const key = changed.components!.schemas!.ProviderKey;
    key.properties = Object.fromEntries(Object.entries(key.properties as object).map(([k, v]) => [k === 'SecretHint' ? 'SecretTail' : k, v]));
    key.required = (key.required as string[]).map((k) => (k === 'SecretHint' ? 'SecretTail' : k));
    await appendFile(path.join(copy, 'clients/typescript/runtime.ts'), '\n// hand edit\n');
    await rm(path.join(copy, 'clients/python/switchyard_client/models/error_detail.py'));
    await writeFile(path.join(copy, 'clients/typescript/models/Stray.ts'), 'export {};\n');
    await writeFile(path.join(copy, 'clients/typescript/README.md'), '# ours, edited by hand\n');

    const stale = await findStaleFiles(changed, copy);
    const problems = Object.fromEntries(stale.map((s) => [s.file, s.problem]));
    expect(problems[DOCUMENT_FILE]).toMatch(/differs from the contract \(line \d+: committed "\\"SecretHint\\": \{", generated "\\"SecretTail\\": \{"\)/);
    expect(problems['clients/typescript/models/ProviderKey.ts']).toMatch(/^differs from the generated file/);
    expect(problems['clients/python/switchyard_client/models/provider_key.py']).toMatch(/^differs from the generated file/);
    expect(problems['clients/typescript/runtime.ts']).toMatch(/^differs from the generated file/);
    expect(problems['clients/python/switchyard_client/models/error_detail.py']).toBe('missing (the generator makes it)');
    expect(problems['clients/typescript/models/Stray.ts']).toBe('no longer generated');
    expect(Object.keys(problems).filter((f) => f.endsWith('README.md') || f.endsWith('.openapi-generator-ignore'))).toEqual([]);
  }, 120_000);
});
