import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import type { TestGateway } from '../../testing/gateway';
import type { HttpClient } from '../../testing/http';

/** Rows of every table an account operation writes, to prove a refused request wrote nothing. */
export async function rowCounts(gw: TestGateway) {
  const [r] = await gw.gateway.database.rows<Record<string, number>>(sql`select
    (select count(*)::int from accounts) as accounts,
    (select count(*)::int from account_keys) as keys,
    (select count(*)::int from credit_grants) as cards,
    (select coalesce(sum(balance), 0)::float8 from credit_grants) as credit,
    (select count(*)::int from operation_logs) as logs,
    (select count(*)::int from news) as news`);
  return r;
}

let serial = 0;
/** A unique name and email for this test process. */
export function fresh(prefix = 'acct') {
  const name = `${prefix}${process.pid}n${++serial}`;
  return { Name: name, Email: `${name}@example.test` };
}

export interface Made {
  id: number;
  name: string;
  email: string;
  dna: string;
  key: string;
  client: HttpClient;
}

/** Creates a subaccount through the API as `by` and returns it with a client for its key. */
export async function make(gw: TestGateway, by: HttpClient, body: Record<string, unknown> = {}): Promise<Made> {
  const r = await by.post('/x-users', { ...fresh(), CreditGranted: 5, ...body });
  expect(r.status, r.text).toBe(201);
  const u = r.body.User;
  return { id: u.ID, name: u.Name, email: u.Email, dna: u.DNA, key: u.SecretKey, client: gw.as(u.SecretKey) };
}

/** The last operation-log entry. */
export async function lastLog(gw: TestGateway) {
  const [row] = await gw.gateway.database.rows<{ action: string; target_id: number | null; operator_id: number; details: string }>(
    sql`select action, target_id, operator_id, details from operation_logs order by id desc limit 1`);
  return row;
}

export const confirmToday = () => `${new Date().toISOString().slice(0, 10)}-ROTATE-SELF`;
