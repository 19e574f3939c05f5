import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { OpenApiDocument } from '../../contract/openapi/types';
import { CLIENTS, DOCUMENT_FILE, generateAll, handOwned, listFiles, renderDocument } from './generate';

export interface Staleness {
  /** Repository-relative path of a committed file that is not what the contract generates. */
  file: string;
  problem: string;
}

/** Where two texts first part, as `line N: committed … / generated …`. */
export function firstDifference(committed: string, generated: string): string {
  const a = committed.split('\n');
  const b = generated.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) {
      const clip = (s: string | undefined) => (s === undefined ? '(end of file)' : JSON.stringify(s.trim().slice(0, 120)));
      return `line ${i + 1}: committed ${clip(a[i])}, generated ${clip(b[i])}`;
    }
  }
  return 'identical';
}

/**
 * Compares the committed document and clients under `root` with what `doc` generates.
 * Hand-owned files (each client's .openapi-generator-ignore and what it lists) are left out.
 */
export async function findStaleFiles(doc: OpenApiDocument, root: string): Promise<Staleness[]> {
  const stale: Staleness[] = [];
  const docPath = path.join(root, DOCUMENT_FILE);
  const expected = renderDocument(doc);
  if (!existsSync(docPath)) stale.push({ file: DOCUMENT_FILE, problem: 'missing' });
  else {
    const committed = await readFile(docPath, 'utf8');
    if (committed !== expected) stale.push({ file: DOCUMENT_FILE, problem: `differs from the contract (${firstDifference(committed, expected)})` });
  }

  const generated = await generateAll(doc, root);
  try {
    for (const target of CLIENTS) {
      const clientDir = path.join(root, target.dir);
      const outDir = generated.dirs.get(target)!;
      const ours = await handOwned(clientDir);
      const want = (await listFiles(outDir)).filter((f) => !ours(f));
      const have = (await listFiles(clientDir)).filter((f) => !ours(f));
      const haveSet = new Set(have);
      const wantSet = new Set(want);
      for (const f of want) {
        const rel = `${target.dir}/${f}`;
        if (!haveSet.has(f)) { stale.push({ file: rel, problem: 'missing (the generator makes it)' }); continue; }
        const [c, g] = await Promise.all([readFile(path.join(clientDir, f), 'utf8'), readFile(path.join(outDir, f), 'utf8')]);
        if (c !== g) stale.push({ file: rel, problem: `differs from the generated file (${firstDifference(c, g)})` });
      }
      for (const f of have) if (!wantSet.has(f)) stale.push({ file: `${target.dir}/${f}`, problem: 'no longer generated' });
    }
  } finally {
    await rm(generated.root, { recursive: true, force: true });
  }
  return stale;
}
