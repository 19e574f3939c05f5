import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { freshDatabaseUrl } from '../../testing/database';
import { createAccount, rootAccount, usageOf, type TestAccount } from '../../testing/accounts';
import { AHEAD_DAYS, maintainPartitions, partitionDays } from './partitions';
import { addDays, today } from '../../admin/billing/period';

let gw: TestGateway;
let drop: () => Promise<void>;
let owner: TestAccount;
let user: TestAccount;

beforeAll(async () => {
  const fresh = await freshDatabaseUrl();
  drop = fresh.drop;
  gw = await startTestGateway({ tenancy: 'multi', databaseUrl: fresh.url });
  owner = await createAccount(gw, rootAccount(gw), { Role: 'owner' });
  user = await createAccount(gw, owner, { CreditGranted: 100 });
});
afterAll(async () => {
  await gw?.close();
  await drop?.();
});

const db = () => gw.gateway.database.db;
const count = async (q: ReturnType<typeof sql>) => Number((await gw.gateway.database.rows<{ n: number }>(q))[0].n);
const noon = (daysAgo: number) => new Date(Date.parse(`${addDays(today(), -daysAgo)}T12:00:00Z`));

describe('usage_records partitions and retention', () => {
  it('has day partitions from yesterday to AHEAD_DAYS ahead once the gateway has started', async () => {
    const days = await partitionDays(db());
    for (let i = -1; i <= AHEAD_DAYS; i++) expect(days).toContain(addDays(today(), i));
  });

  it('moves old records from the default partition into a new day partition, then drops whole partitions past USAGE_RETENTION_DAYS while bills and rollups stay', async () => {
    const s = gw.gateway.usage;
    for (const daysAgo of [40, 40, 20, 5, 0]) s.record(usageOf(user, { model: 'gpt-4o', creditUsed: 1, at: noon(daysAgo) }));
    await s.flush();
    // Days 40, 20 and 5 had no partition: their records wait in the default one.
    expect(await count(sql`select count(*)::int as n from usage_records_default where account_id = ${user.id}`)).toBe(4);

    // A maintenance run as if 45 days ago were "today": those days get partitions, and the records move into them.
    const past = await maintainPartitions(db(), 0, noon(41));
    expect(past.created).toContain(addDays(today(), -40));
    expect(await count(sql`select count(*)::int as n from usage_records_default where account_id = ${user.id}`)).toBe(2);
    expect(await count(sql`select count(*)::int as n from ${sql.raw(`"usage_records_p${addDays(today(), -40).replace(/-/g, '')}"`)}`)).toBe(2);

    const billBefore = await gw.as(owner.key).get(`/x-bill?start=${addDays(today(), -45)}`);
    expect(billBefore.body.total_requests).toBe(5);

    const r = await maintainPartitions(db(), 30);
    expect(r.dropped).toContain(addDays(today(), -40));
    expect((await partitionDays(db())).every((d) => d >= addDays(today(), -29))).toBe(true);
    // Raw records of the retained 30 days stay; older ones are gone, also from the default partition.
    expect(await count(sql`select count(*)::int as n from usage_records where account_id = ${user.id}`)).toBe(3);
    // Bills read rollups: the whole history, also beyond the retention.
    const bill = await gw.as(owner.key).get(`/x-bill?start=${addDays(today(), -45)}`);
    expect(bill.status).toBe(200);
    expect(bill.body.total_requests).toBe(5);
    expect(bill.body.total_credit_used).toBe(5);
    expect((await gw.as(user.key).get(`/dashboard/bill?start=${addDays(today(), -45)}`)).body.total_requests).toBe(5);
    // Writing goes on after the drop.
    s.record(usageOf(user, { creditUsed: 1 }));
    await s.flush();
    expect(await count(sql`select count(*)::int as n from usage_records where account_id = ${user.id}`)).toBe(4);
  });
});
