/**
 * `npm run openapi:check`: fails when openapi/openapi.json or the generated clients are not
 * what the current contract generates (the contract changed and nobody regenerated them).
 * An optional argument checks the generated files of another folder (its self-test uses a copy).
 * Compiling the TypeScript client and its tests is `npm run typecheck`'s job (clients/tsconfig.json).
 */
import path from 'node:path';
import { buildOpenApiDocument } from '../../contract/openapi/index';
import { FIX_HINT, ROOT } from './generate';
import { findStaleFiles } from './compare';

const started = Date.now();
const stale = await findStaleFiles(buildOpenApiDocument(), path.resolve(process.argv[2] ?? ROOT));
const took = `${((Date.now() - started) / 1000).toFixed(1)} s`;
if (stale.length > 0) {
  console.error(`openapi:check: ${stale.length} generated file(s) out of date with the contract:`);
  for (const s of stale.slice(0, 40)) console.error(`  ${s.file}: ${s.problem}`);
  if (stale.length > 40) console.error(`  … and ${stale.length - 40} more`);
  console.error(`Fix: ${FIX_HINT}   (then commit openapi/ and clients/)`);
  process.exit(1);
}
console.log(`openapi:check: openapi/openapi.json and clients/ match the contract (${took})`);
