import { generateOpenApiDocument } from 'trpc-to-openapi';
import { appRouter } from '../index';
import { routeFacts, routeKey } from './routes';
import { dropLibraryErrorSchemas, errorSchemas, refineOperation, SECURITY_SCHEME } from './responses';
import { nameInlineSchemas } from './schemas';
import { canonicalOrder } from './order';
import { operations, type OpenApiDocument } from './types';
import { addProxyRoutes, PROXY_DESCRIPTION, PROXY_TAG } from './proxy';

export type { OpenApiDocument } from './types';

/** One tag per area of the API; every operation carries one of these. */
export const AREA_TAGS = [
  { name: 'provider keys', description: 'Upstream provider keys of the Owner, grouped into Levels (`/x-keys`). Owner only.' },
  { name: 'configuration', description: 'Owner configuration: the routing view and batch update (`/x-conf`) and the configuration keys (`/x-config`). Owner only.' },
  { name: 'accounts', description: 'Subaccounts and descendants (`/x-users`, `/x-dna`, manage permission), account detail (`/x-info`) and self key rotation (`/x-self`).' },
  { name: 'dashboard', description: 'The current account: status, profile and limits, live usage, operation log and visible models.' },
  { name: 'billing', description: 'Bills of the current account (`/dashboard/bill`) and of its descendants (`/x-bill`), by UTC day.' },
  { name: 'news', description: 'System-wide and targeted news (`/x-news`) and the news the current account sees.' },
  { name: 'helpers', description: 'Key generation, Owner-scoped encryption and decryption, liveness.' },
  PROXY_TAG,
] as const;

const description = (publicPaths: string[]) => [
  'Owner administration, accounts, dashboard, billing and news of the Switchyard AI gateway.',
  '',
  `* **Authentication:** \`Authorization: Bearer <API key>\` on every endpoint${publicPaths.length ? ` except ${publicPaths.map((p) => `\`${p}\``).join(', ')}` : ''}.`,
  '* **Errors:** every error answers `{"error":{"message","type","code"}}` (the `Error` schema).',
  '* **Pagination:** paginated lists answer a bare JSON array; `X-Total-Count`, `X-Page`, `X-Per-Page` and `X-Total-Pages` carry the paging facts. `page` is 1-based; sending only `size` means page 1.',
  '* **Field names** are written exactly as the API spells them (`SecretKey`, `CreditGranted`, `daily_usage`).',
  PROXY_DESCRIPTION,
].join('\n');

/**
 * The OpenAPI 3.0 document of the gateway: the administration API as trpc-to-openapi derives
 * it from the contract, refined from each route's meta so it states what the server really
 * answers, plus the AI proxy's routes (proxy.ts).
 * `npm run openapi` writes it to openapi/openapi.json; the server serves the same at /openapi.json.
 */
export function buildOpenApiDocument(): OpenApiDocument {
  const facts = routeFacts(appRouter);
  const publicPaths = [...new Set([...facts.values()].filter((f) => f.access === 'public').map((f) => f.path))].sort();
  const doc = generateOpenApiDocument(appRouter, {
    title: 'Switchyard API',
    version: '0.1.0',
    openApiVersion: '3.0.3',
    baseUrl: 'http://127.0.0.1:8080',
    description: description(publicPaths),
    license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
    securitySchemes: { [SECURITY_SCHEME]: { type: 'http', scheme: 'bearer', description: 'An account API key (`sk-Xvs…`)' } },
  }) as unknown as OpenApiDocument;

  for (const { path, method, op } of operations(doc)) {
    const route = facts.get(routeKey(method, path));
    if (!route) throw new Error(`OpenAPI: ${method.toUpperCase()} ${path} has no procedure meta`);
    refineOperation(op, route);
  }
  dropLibraryErrorSchemas(doc);
  doc.components ??= {};
  doc.components.schemas = { ...doc.components.schemas, ...errorSchemas };
  nameInlineSchemas(doc, facts);
  addProxyRoutes(doc);

  doc.servers = [{
    url: 'http://{host}:{port}',
    description: 'A Switchyard gateway (HOST and PORT of its environment)',
    variables: { host: { default: '127.0.0.1' }, port: { default: '8080' } },
  }];
  const used = new Set([...operations(doc)].flatMap(({ op }) => op.tags ?? []));
  const known = new Set<string>(AREA_TAGS.map((t) => t.name));
  doc.tags = [...AREA_TAGS.map((t) => ({ ...t })), ...[...used].filter((t) => !known.has(t)).sort().map((name) => ({ name }))];
  // Through JSON once: keys whose value is undefined (trpc-to-openapi leaves some) disappear,
  // so the object is exactly what openapi.json and GET /openapi.json hold.
  return JSON.parse(JSON.stringify(canonicalOrder(doc))) as OpenApiDocument;
}
