/**
 * Builds the production server: one ES module bundle of server/ and contract/ in dist/,
 * packages left to node_modules. Running it with plain `node` spares every request the
 * TypeScript loader's wrappers (a few percent of the proxy's CPU, see bench/).
 */
import { build } from 'esbuild';
import path from 'node:path';
import { projectRoot } from '../../server/core/paths';

export const serverBundle = path.join(projectRoot, 'dist', 'main.mjs');

/**
 * What `npm start` adds to the bundle's environment (package.json's start script sets the same;
 * benchmarks start the bundle with it, as `npm start` runs it). glibc's malloc gives each
 * thread arenas of its own, and what the embedded database's thread allocated and freed while
 * starting stayed resident in them: one arena cut an idle gateway's RSS by 50-80 MB at no
 * measurable cost to the proxy (decisions.md, "Footprint"). The operator's value wins.
 */
export const bundleEnv = (): Record<string, string> => ({ MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '1' });

export async function bundleServer(): Promise<string> {
  await build({
    entryPoints: [path.join(projectRoot, 'server', 'app', 'main.ts')],
    outfile: serverBundle,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  return serverBundle;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.join(projectRoot, 'scripts', 'build', 'bundle.ts')) {
  bundleServer().catch((err) => {
    process.stderr.write(`switchyard: server build failed: ${(err as Error).message}\n`);
    process.exit(1);
  });
}
