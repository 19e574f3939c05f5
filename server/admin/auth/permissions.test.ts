import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appRouter } from '../../../contract/index';
import type { Meta } from '../../../contract/trpc';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { expectEnvelope } from '../../testing/http';
import { make, rowCounts, type Made } from '../accounts/test-support';

let gw: TestGateway;
let user: Made;

beforeAll(async () => {
  gw = await startTestGateway();
  // Funded well above UserApiBalance: manage permission is not what refuses it below.
  user = await make(gw, gw.root, { CreditGranted: 100 });
});
afterAll(async () => { await gw?.close(); });

/** Every REST route of the contract with the access it requires, read from the procedures' meta. */
function routes(): { method: string; path: string; access: Meta['access'] }[] {
  return Object.values(appRouter._def.procedures as unknown as Record<string, { _def: { meta?: Meta } }>)
    .map((p) => p._def.meta)
    .filter((m): m is Meta => !!m?.openapi)
    .map((m) => ({ method: m.openapi!.method, path: m.openapi!.path, access: m.access }));
}

/** A concrete URL for a path template: any identifier will do, the refusal comes first. */
const concrete = (path: string) => path.replace(/\{[^}]+\}/g, '1');

describe('Owner endpoints', () => {
  it('refuse an account that is not an Owner with 403, whatever the body, and write nothing', async () => {
    const ownerOnly = routes().filter((r) => r.access === 'owner' || r.access === 'root');
    // The Owner-only half of the API: keys, configuration, the helpers, news and x-info.
    expect(ownerOnly.map((r) => r.path)).toEqual(expect.arrayContaining(['/x-keys', '/x-keys/{id}', '/x-conf', '/x-config', '/x-gkey', '/x-info']));
    const before = await rowCounts(gw);
    for (const r of ownerOnly) {
      const url = concrete(r.path) + (r.path === '/x-info' ? `?user=${user.id}` : '');
      const body = r.method === 'GET' ? undefined : { Name: 'x', Level: 1, Provider: 'https://api.openai.com', SecretKey: 'sk-aaaaaaaaaaaaaaaaaaaa', MODEL_MAPPER: 'a=b', title: 't', content: 'c' };
      const res = await user.client.request(r.method, url, { body });
      expectEnvelope(res, 403);
    }
    expect(await rowCounts(gw)).toEqual(before);
  });

  it('answer 401 without a key or with an unknown one, before anything else', async () => {
    for (const r of routes().filter((x) => x.access !== 'public')) {
      const url = concrete(r.path);
      expectEnvelope(await gw.as(null).request(r.method, url, r.method === 'GET' ? {} : { body: {} }), 401);
      expectEnvelope(await gw.as('sk-Xvs' + 'A'.repeat(45)).request(r.method, url, r.method === 'GET' ? {} : { body: {} }), 401);
    }
  });
});
