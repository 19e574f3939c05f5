import postgres from 'postgres';
import type { MockUpstream } from './mock-upstream';

/**
 * Test-only, for a server running as a process: through its admin API, a provider key pointing
 * at the mock upstream and a funded subaccount whose calls are charged and recorded.
 */
export async function proxiedAccount(url: string, rootKey: string, mock: MockUpstream, secretKey: string): Promise<{ id: number; key: string; call: () => Promise<Response> }> {
  const headers = { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' };
  const key = await fetch(`${url}/x-keys`, { method: 'POST', headers, body: JSON.stringify({ Level: 1, Provider: mock.url, SecretKey: secretKey, Status: true }) });
  if (key.status !== 201) throw new Error(`POST /x-keys answered ${key.status}: ${await key.text()}`);
  const name = `proc${process.pid}x${Date.now() % 100_000}`;
  const user = await fetch(`${url}/x-users`, { method: 'POST', headers, body: JSON.stringify({ Name: name, Email: `${name}@example.test`, CreditGranted: 50 }) });
  if (user.status !== 201) throw new Error(`POST /x-users answered ${user.status}: ${await user.text()}`);
  const u = (await user.json()).User as { ID: number; SecretKey: string };
  return {
    id: u.ID,
    key: u.SecretKey,
    call: () => fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${u.SecretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
    }),
  };
}

/** The account's usage_records in a PostgreSQL database, read directly. */
export async function usageRecordCount(databaseUrl: string, accountId: number): Promise<number> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from usage_records where account_id = ${accountId}`;
    return n;
  } finally {
    await sql.end();
  }
}
