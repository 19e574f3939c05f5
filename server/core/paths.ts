import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The checkout's root (the folder holding package.json), found from this module's own place:
 * the same answer whether the server runs from source under tsx or from the bundle in dist/.
 */
function findProjectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error('switchyard: cannot find the project root (no package.json above the server)');
    dir = up;
  }
}

export const projectRoot = findProjectRoot();
export const migrationsFolder = path.join(projectRoot, 'server', 'adapters', 'storage', 'migrations');
export const consoleDist = path.join(projectRoot, 'console', 'dist');
