/**
 * `npm run clients`: regenerates clients/typescript and clients/python from the contract's
 * document with openapi-generator 4.3.1 (the JAR bundled in the npm package, offline).
 */
import { buildOpenApiDocument } from '../../contract/openapi/index';
import { CLIENTS, writeClients } from './generate';

const started = Date.now();
const counts = await writeClients(buildOpenApiDocument());
for (const t of CLIENTS) console.log(`${t.dir}: ${counts.get(t.dir)} generated files (${t.generator})`);
console.log(`clients regenerated in ${((Date.now() - started) / 1000).toFixed(1)} s`);
