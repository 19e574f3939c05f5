import { describe, expect, it } from 'vitest';
import { generateAccountKey } from '../../server/adapters/security/crypto';
import { spawnServer } from '../../server/testing/spawn';
import { bundleServer } from './bundle';

describe('the production bundle (what npm start runs)', () => {
  it('builds, finds its migrations from dist/, and serves on the native uWS core', async () => {
    const entry = await bundleServer();
    const rootKey = generateAccountKey();
    const server = await spawnServer({ DATABASE_URL: 'memory://', ROOT_KEY: rootKey }, 60_000, entry);
    try {
      expect(server.stdout()).toMatch(/"native_uws":true/);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      const keys = await fetch(`${server.url}/x-keys`, { headers: { authorization: `Bearer ${rootKey}` } });
      expect(keys.status).toBe(200);
      expect(await keys.json()).toEqual([]);
      expect((await fetch(`${server.url}/openapi.json`)).status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
