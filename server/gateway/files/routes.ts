/**
 * The Files API routes (OpenAI's `/v1/files`), each also without `/v1` as every proxy route
 * is: free, neither admitted nor billed, served by `ProxyPipeline.serveFile`. `canonical` names
 * the route in RESOURCES, logs and metrics, the ID left out.
 */
import type { FileAction } from './reads';

export type FileRouteAction = FileAction | 'upload';

export interface FileRoute {
  method: 'POST' | 'GET' | 'DELETE';
  /** uWS's pattern: `:id` is the file ID. */
  path: string;
  action: FileRouteAction;
  canonical: string;
}

const both = (method: FileRoute['method'], canonical: string, action: FileRouteAction): FileRoute[] => {
  const path = canonical.replace('{id}', ':id');
  return [{ method, path, action, canonical }, { method, path: path.slice(3), action, canonical }];
};

export const FILE_ROUTES: readonly FileRoute[] = [
  ...both('POST', '/v1/files', 'upload'),
  ...both('GET', '/v1/files', 'list'),
  ...both('GET', '/v1/files/{id}', 'retrieve'),
  ...both('GET', '/v1/files/{id}/content', 'content'),
  ...both('DELETE', '/v1/files/{id}', 'delete'),
];
