/**
 * Builds the production server: one ES module bundle of server/ and contract/ in dist/,
 * packages left to node_modules. Running it with plain `node` spares every request the
 * TypeScript loader's wrappers (a few percent of the proxy's CPU, see bench/).
 */
import { build } from 'esbuild';
import path from 'node:path';
import { projectRoot } from '../../server/core/paths';

export const serverBundle = path.join(projectRoot, 'dist', 'main.mjs');

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
