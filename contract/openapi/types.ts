/**
 * Just enough of OpenAPI 3.0's shape to post-process the generated document. Schemas stay
 * loose on purpose: they are JSON Schema written by zod-openapi, walked generically.
 */
export type Schema = Record<string, any>;

export interface MediaType {
  schema?: Schema;
  [k: string]: unknown;
}

export interface Response {
  description: string;
  headers?: Record<string, Schema>;
  content?: Record<string, MediaType>;
  [k: string]: unknown;
}

export interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: Schema[];
  requestBody?: { required?: boolean; content: Record<string, MediaType>; [k: string]: unknown };
  responses: Record<string, Response>;
  [k: string]: unknown;
}

export type PathItem = Partial<Record<HttpMethod, Operation>> & Record<string, unknown>;
export type HttpMethod = 'get' | 'put' | 'post' | 'patch' | 'delete';
export const HTTP_METHODS: HttpMethod[] = ['get', 'put', 'post', 'patch', 'delete'];

export interface OpenApiDocument {
  openapi: string;
  info: Schema;
  servers?: Schema[];
  tags?: { name: string; description?: string }[];
  paths: Record<string, PathItem>;
  components?: { schemas?: Record<string, Schema>; securitySchemes?: Record<string, Schema>; [k: string]: unknown };
  [k: string]: unknown;
}

export function* operations(doc: OpenApiDocument): Generator<{ path: string; method: HttpMethod; op: Operation }> {
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (op) yield { path, method, op };
    }
  }
}
