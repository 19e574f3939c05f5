import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Exchange } from './exchange';

const types: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon', '.json': 'application/json', '.woff2': 'font/woff2',
};

interface Asset { body: Buffer; type: string; immutable: boolean }

/**
 * Serves a built single-page app from memory under `prefix`; unknown paths get index.html so
 * client-side routes survive a reload. The console is small, so it is read once at start.
 */
export function createStaticHandler(root: string, prefix: string) {
  const assets = new Map<string, Asset>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else {
        const rel = '/' + path.relative(root, full).split(path.sep).join('/');
        assets.set(rel, { body: readFileSync(full), type: types[path.extname(name)] ?? 'application/octet-stream', immutable: rel.startsWith('/assets/') });
      }
    }
  };
  if (existsSync(root)) walk(root);
  const index = assets.get('/index.html');

  return function serveStatic(ex: Exchange): void {
    if (ex.method !== 'GET' && ex.method !== 'HEAD') return ex.sendError(405, 'Method not allowed');
    if (ex.path === prefix.slice(0, -1)) return ex.send(301, { location: prefix }, '');
    const rel = ex.path.slice(prefix.length - 1) || '/';
    const asset = assets.get(rel === '/' ? '/index.html' : rel) ?? (path.extname(rel) ? undefined : index);
    if (!asset) return ex.sendError(404, index ? 'No such file' : 'The console is not built: run `npm run build:console`');
    ex.send(200, {
      'content-type': asset.type,
      'cache-control': asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
      'x-content-type-options': 'nosniff',
    }, asset.body);
  };
}
