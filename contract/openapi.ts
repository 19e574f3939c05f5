import { generateOpenApiDocument } from 'trpc-to-openapi';
import { appRouter } from './index';

/** The OpenAPI 3.0 document of the administration API, generated from the contract. */
export function buildOpenApiDocument(baseUrl = 'http://127.0.0.1:8080') {
  return generateOpenApiDocument(appRouter, {
    title: 'Switchyard administration API',
    version: '0.1.0',
    openApiVersion: '3.0.3',
    baseUrl,
    description: 'Owner administration, accounts, dashboard, billing and news of the Switchyard AI gateway.',
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An account API key' } },
  } as any);
}
