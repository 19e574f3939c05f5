import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { OpenApiDocument } from '../../contract/openapi/types';
import { forGenerator } from './generator-input';

const run = promisify(execFile);

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DOCUMENT_FILE = 'openapi/openapi.json';
export const FIX_HINT = 'npm run openapi && npm run clients';
const JAR = path.join(ROOT, 'node_modules/@openapitools/openapi-generator-cli/bin/openapi-generator.jar');

export interface ClientTarget {
  /** Folder under the repository root. */
  dir: string;
  generator: string;
  properties: (doc: OpenApiDocument) => string;
}

export const CLIENTS: ClientTarget[] = [
  {
    dir: 'clients/typescript',
    generator: 'typescript-fetch',
    properties: () => 'modelPropertyNaming=original,supportsES6=true,typescriptThreePlus=true',
  },
  {
    dir: 'clients/python',
    generator: 'python',
    properties: (doc) => `packageName=switchyard_client,packageVersion=${doc.info.version}`,
  },
];

/** The committed form: 2-space indent and a final newline; key order is the builder's. */
export const renderDocument = (doc: OpenApiDocument) => `${JSON.stringify(doc, null, 2)}\n`;

export async function listFiles(dir: string, base = dir): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...await listFiles(full, base));
    else out.push(path.relative(base, full).split(path.sep).join('/'));
  }
  return out.sort();
}

const IGNORE_FILE = '.openapi-generator-ignore';

/**
 * Files of a client folder that are ours, not the generator's: the ignore list itself and
 * whatever it names (README.md, examples). Patterns are anchored, `*` within a segment,
 * `**` across segments — the subset of .gitignore syntax the lists here use.
 */
export async function handOwned(clientDir: string): Promise<(file: string) => boolean> {
  const file = path.join(clientDir, IGNORE_FILE);
  const text = existsSync(file) ? await readFile(file, 'utf8') : '';
  const patterns = text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#') && !l.startsWith('!'));
  const regexes = patterns.map((p) => new RegExp(`^${p.replace(/^\//, '').replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*\*/g, '\u0000').replace(/\*/g, '[^/]*').replace(/\u0000/g, '.*').replace(/\?/g, '[^/]')}$`));
  return (f) => f === IGNORE_FILE || regexes.some((r) => r.test(f));
}

/**
 * Runs openapi-generator (offline, from the npm package's bundled JAR) for one client into
 * `outDir`, honouring the client's committed ignore list.
 */
export async function generateClient(doc: OpenApiDocument, target: ClientTarget, outDir: string, clientDir: string): Promise<void> {
  await mkdir(outDir, { recursive: true });
  const ignore = path.join(clientDir, IGNORE_FILE);
  if (existsSync(ignore)) await cp(ignore, path.join(outDir, IGNORE_FILE));
  const input = path.join(outDir, '..', `${path.basename(outDir)}.openapi.json`);
  await writeFile(input, JSON.stringify(forGenerator(doc)));
  try {
    await run('java', ['-jar', JAR, 'generate', '-i', input, '-g', target.generator, '-o', outDir,
      `--additional-properties=${target.properties(doc)}`], { maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`openapi-generator ${target.generator} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  } finally {
    await rm(input, { force: true });
  }
}

/** Generates every client into a fresh temporary folder; the caller removes `root`. */
export async function generateAll(doc: OpenApiDocument, clientsRoot = ROOT): Promise<{ root: string; dirs: Map<ClientTarget, string> }> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'switchyard-clients-'));
  const dirs = new Map<ClientTarget, string>();
  try {
    await Promise.all(CLIENTS.map(async (t) => {
      const out = path.join(root, path.basename(t.dir));
      await generateClient(doc, t, out, path.join(clientsRoot, t.dir));
      dirs.set(t, out);
    }));
  } catch (err) {
    await rm(root, { recursive: true, force: true });
    throw err;
  }
  return { root, dirs };
}

/** Writes the document where the repository keeps it. */
export async function writeDocument(doc: OpenApiDocument, root = ROOT): Promise<void> {
  const file = path.join(root, DOCUMENT_FILE);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, renderDocument(doc));
}

/**
 * Regenerates every client folder under `root`: generated files are replaced wholesale, files
 * the generator no longer makes are removed, hand-owned files are left alone.
 */
export async function writeClients(doc: OpenApiDocument, root = ROOT): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const generated = await generateAll(doc, root);
  try {
    for (const target of CLIENTS) {
      const clientDir = path.join(root, target.dir);
      const outDir = generated.dirs.get(target)!;
      await mkdir(clientDir, { recursive: true });
      const ours = await handOwned(clientDir);
      const fresh = (await listFiles(outDir)).filter((f) => !ours(f));
      const keep = new Set(fresh);
      for (const f of await listFiles(clientDir)) if (!ours(f) && !keep.has(f)) await rm(path.join(clientDir, f));
      for (const f of fresh) {
        await mkdir(path.dirname(path.join(clientDir, f)), { recursive: true });
        await cp(path.join(outDir, f), path.join(clientDir, f));
      }
      counts.set(target.dir, fresh.length);
    }
  } finally {
    await rm(generated.root, { recursive: true, force: true });
  }
  return counts;
}
