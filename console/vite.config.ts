import { defineConfig, type Plugin } from 'vite';
import solid from 'vite-plugin-solid';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

/** The most gzipped JavaScript a first visit to the console may load (issue 33). */
const FIRST_LOAD_BUDGET = 150 * 1024;

interface Chunk { type: 'chunk'; fileName: string; code: string; isEntry: boolean; imports: string[] }

/**
 * The JavaScript a first visit loads: the entry chunk and every chunk it imports statically,
 * gzipped as a server would send it; chunks fetched on demand (another language's catalogue)
 * are left out. Measured on the build's own output, so a build over the budget fails.
 */
function firstLoad(bundle: Record<string, { type: string }>): { gzipBytes: number; files: string[] } {
  const chunks = new Map(Object.values(bundle).filter((o): o is Chunk => o.type === 'chunk').map((c) => [c.fileName, c]));
  const files = new Set<string>();
  const visit = (name: string) => {
    const c = chunks.get(name);
    if (!c || files.has(name)) return;
    files.add(name);
    c.imports.forEach(visit);
  };
  for (const c of chunks.values()) if (c.isEntry) visit(c.fileName);
  let gzipBytes = 0;
  for (const name of files) gzipBytes += gzipSync(chunks.get(name)!.code).length;
  return { gzipBytes, files: [...files].sort() };
}

/** Fails the build above FIRST_LOAD_BUDGET, and leaves the figure in dist/first-load.json. */
function firstLoadBudget(): Plugin {
  return {
    name: 'switchyard-first-load-budget',
    apply: 'build',
    generateBundle(_options, bundle) {
      const measured = firstLoad(bundle as Record<string, { type: string }>);
      if (measured.gzipBytes > FIRST_LOAD_BUDGET) {
        this.error(`The console's first load is ${measured.gzipBytes} bytes of gzipped JavaScript, over its budget of ${FIRST_LOAD_BUDGET} (${measured.files.join(', ')})`);
      }
      this.emitFile({ type: 'asset', fileName: 'first-load.json', source: `${JSON.stringify({ ...measured, budget: FIRST_LOAD_BUDGET }, null, 2)}\n` });
    },
  };
}

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  plugins: [solid(), firstLoadBudget()],
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022' },
});
