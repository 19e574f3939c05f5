import path from 'node:path';

export type Tenancy = 'single' | 'multi';

export interface Settings {
  port: number;
  host: string;
  /** undefined: embedded PGlite under dataDir; `memory://`: in-memory PGlite; `postgres://…`: PostgreSQL. */
  databaseUrl?: string;
  dataDir: string;
  rootKey?: string;
  tenancy: Tenancy;
  redisUrl?: string;
  masterKey?: string;
  /** Minimum balance an account needs to be created with and to call the proxy. */
  userMinBalance: number;
  /** Minimum balance an account needs for manage permission. */
  userApiBalance: number;
  /** Default api-version for cloud-hosted deployments without their own. */
  azureApiVersion: string;
  /** Start even when uWebSockets.js fell back to its slow JavaScript server. */
  allowUwsFallback: boolean;
  maxBodyBytes: number;
}

export class SettingsError extends Error {}

function int(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new SettingsError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return n;
}

function money(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new SettingsError(`${name} must be a non-negative number, got "${raw}"`);
  return n;
}

export function readSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const tenancy = env.TENANCY || 'single';
  if (tenancy !== 'single' && tenancy !== 'multi') throw new SettingsError(`TENANCY must be "single" or "multi", got "${tenancy}"`);
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && databaseUrl !== 'memory://' && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new SettingsError('DATABASE_URL must be unset, memory:// or a postgres:// URL');
  }
  if (databaseUrl?.startsWith('postgres') && !env.MASTER_KEY) {
    throw new SettingsError('MASTER_KEY is required with PostgreSQL: every instance must share it to read provider keys');
  }
  if (env.MASTER_KEY !== undefined && env.MASTER_KEY.length < 16) throw new SettingsError('MASTER_KEY must be at least 16 characters');
  return {
    port: int('PORT', env.PORT, 8080, 0, 65535),
    host: env.HOST || '127.0.0.1',
    databaseUrl,
    dataDir: path.resolve(env.DATA_DIR || './data'),
    rootKey: env.ROOT_KEY || undefined,
    tenancy,
    redisUrl: env.REDIS_URL || undefined,
    masterKey: env.MASTER_KEY || undefined,
    userMinBalance: money('USER_MIN_BALANCE', env.USER_MIN_BALANCE, 2),
    userApiBalance: money('USER_API_BALANCE', env.USER_API_BALANCE, 20),
    azureApiVersion: env.AZURE_API_VERSION || '2024-10-21',
    allowUwsFallback: env.ALLOW_UWS_FALLBACK === '1' || env.ALLOW_UWS_FALLBACK === 'true',
    maxBodyBytes: int('MAX_BODY_BYTES', env.MAX_BODY_BYTES, 4 * 1024 * 1024, 1024, 256 * 1024 * 1024),
  };
}
