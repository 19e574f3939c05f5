import { startGateway, type Gateway } from '../app/gateway';
import { readSettings, type Settings } from '../core/settings';
import { createLogger } from '../core/log';
import { generateAccountKey } from '../adapters/security/crypto';
import { freshDatabaseUrl } from './database';
import { HttpClient } from './http';

export interface TestGateway {
  url: string;
  rootKey: string;
  /** Every line the server logged, to prove secrets never reach the log. */
  logs: string[];
  gateway: Gateway;
  /** Client authenticated as Root. */
  root: HttpClient;
  as(key: string | null): HttpClient;
  close(): Promise<void>;
}

/** A real gateway on a free loopback port, over a fresh database (PGlite, or PostgreSQL when configured). */
export async function startTestGateway(overrides: Partial<Settings> = {}): Promise<TestGateway> {
  const rootKey = overrides.rootKey ?? generateAccountKey();
  const { url: databaseUrl, drop } = overrides.databaseUrl ? { url: overrides.databaseUrl, drop: async () => {} } : await freshDatabaseUrl();
  const logs: string[] = [];
  const settings: Settings = {
    ...readSettings({}),
    port: 0,
    databaseUrl,
    rootKey,
    masterKey: 'switchyard-test-master-key-0123456789',
    ...overrides,
  };
  const gateway = await startGateway(settings, { log: createLogger((l) => logs.push(l), 'debug') });
  return {
    url: gateway.url,
    rootKey,
    logs,
    gateway,
    root: new HttpClient(gateway.url, rootKey),
    as: (key) => new HttpClient(gateway.url, key),
    async close() {
      await gateway.close();
      await drop();
    },
  };
}
