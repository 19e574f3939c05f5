/** `npm run openapi`: writes openapi/openapi.json from the contract. */
import { buildOpenApiDocument } from '../../contract/openapi/index';
import { DOCUMENT_FILE, writeDocument } from './generate';

const doc = buildOpenApiDocument();
await writeDocument(doc);
const count = Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0);
console.log(`${DOCUMENT_FILE}: ${count} operations, ${Object.keys(doc.components?.schemas ?? {}).length} schemas`);
