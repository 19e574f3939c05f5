import type { TestGateway } from '../../../server/testing/gateway';
import { insertAccount } from '../../../server/testing/accounts';
import { identifierForms, type World } from './world';

interface Made { id: number; name: string; email: string; dna: string }

/**
 * The accounts, provider keys and ciphertexts the fuzzer aims at. The subaccount it acts as
 * is inserted with ample credit: creates it sends pay for their children's cards, and below
 * UserApiBalance it would lose manage permission half-way through the run.
 */
export async function buildWorld(gw: TestGateway): Promise<World> {
  const root: Made = { id: 1, name: 'root', email: 'root@localhost', dna: '.1.' };
  const sub = await insertAccount(gw, { name: 'fuzzsub', email: 'fuzzsub@fuzz.test', credit: 1e11 });
  const victims: Made[] = [];
  for (let i = 1; i <= 4; i++) victims.push(await create(gw, gw.rootKey, `victim${i}`));
  for (let i = 1; i <= 2; i++) victims.push(await create(gw, sub.key, `subvictim${i}`));
  const keyIds: string[] = [];
  for (const [name, provider] of [['openai-fz', 'https://api.openai.com'], ['local-fz', 'http://127.0.0.1:9']]) {
    const r = await gw.root.post('/x-keys', { Name: name, Level: 1, Provider: provider, SecretKey: `sk-fuzz-${name}-0123456789abcdef`, Status: true });
    if (r.status !== 201) throw new Error(`set-up: POST /x-keys answered ${r.status}: ${r.text}`);
    keyIds.push(String(r.body.Key.ID));
  }
  const enc = await gw.root.get('/x-ekey/hello%20fuzz');
  if (enc.status !== 200) throw new Error(`set-up: /x-ekey answered ${enc.status}: ${enc.text}`);

  const all = [root, sub, ...victims];
  return {
    rootKey: gw.rootKey,
    subKey: sub.key,
    protectedIdentifiers: new Set([...identifierForms(root.id, root.name, root.email, root.dna), ...identifierForms(sub.id, sub.name, sub.email, sub.dna)]),
    identifiers: all.flatMap((a) => [String(a.id), a.name, a.email, a.dna]),
    victims: victims.map((v) => v.name),
    keyIds,
    ciphertexts: [enc.body.encrypted as string],
  };
}

async function create(gw: TestGateway, parentKey: string, name: string): Promise<Made> {
  const r = await gw.as(parentKey).post('/x-users', { Name: name, Email: `${name}@fuzz.test`, CreditGranted: 5 });
  if (r.status !== 201) throw new Error(`set-up: POST /x-users ${name} answered ${r.status}: ${r.text}`);
  const u = r.body.User;
  return { id: u.ID, name: u.Name, email: u.Email, dna: u.DNA };
}
