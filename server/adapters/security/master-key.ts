import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Settings } from '../../core/settings';

/**
 * MASTER_KEY when set; otherwise, with the embedded database, one generated on first start and
 * kept in DATA_DIR (0600) beside the data it protects. In-memory databases get a throwaway key.
 */
export function resolveMasterKey(settings: Pick<Settings, 'masterKey' | 'databaseUrl' | 'dataDir'>): string {
  if (settings.masterKey) return settings.masterKey;
  if (settings.databaseUrl === 'memory://') return randomBytes(32).toString('base64url');
  const file = path.join(settings.dataDir, 'master.key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(settings.dataDir, { recursive: true });
  const key = randomBytes(32).toString('base64url');
  writeFileSync(file, key + '\n', { mode: 0o600 });
  return key;
}
