import fc from 'fast-check';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { insertAccount, rootAccount, usageOf, type TestAccount } from '../../testing/accounts';
import { addDays, today } from './period';

let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway({ tenancy: 'multi' }); });
afterAll(async () => { await gw?.close(); });

const MODELS = ['gpt-4o', 'gpt-4o-mini', 'claude-sonnet-4-5'];
const round = (x: number) => Number(x.toFixed(8));

/** What the bill must say, straight from the raw records of the accounts in scope. */
async function direct(scopeDna: string, exclude: number | null, only: number | null, start: string, end: string) {
  const where = only !== null
    ? sql`r.account_id = ${only}`
    : sql`a.dna like ${scopeDna + '%'} and r.account_id <> ${exclude ?? -1}`;
  const days = await gw.gateway.database.rows<{ day: string; model: string; requests: number; prompt: number; credit: string }>(sql`
    select (r.created_at at time zone 'utc')::date::text as day, r.model || case when r.batch_id is null then '' else ' (batch)' end as model,
      sum(coalesce(r.batch_lines, 1))::int as requests, sum(r.prompt)::int as prompt, sum(r.credit_used)::text as credit
    from usage_records r join accounts a on a.id = r.account_id
    where ${where} and (r.created_at at time zone 'utc')::date between ${start}::date and ${end}::date
    group by 1, 2`);
  const users = await gw.gateway.database.rows<{ id: number; requests: number; credit: string }>(sql`
    select r.account_id as id, sum(coalesce(r.batch_lines, 1))::int as requests, sum(r.credit_used)::text as credit
    from usage_records r join accounts a on a.id = r.account_id
    where ${where} and (r.created_at at time zone 'utc')::date between ${start}::date and ${end}::date
    group by 1`);
  return { days, users };
}

describe('rollups against the raw records', () => {
  it('a descendant bill (whole tree, a subtree by DNA path, one account) equals a direct aggregation over usage_records, on random trees and traffic, batches apart', async () => {
    await fc.assert(fc.asyncProperty(
      fc.array(fc.nat(), { minLength: 1, maxLength: 10 }),
      fc.array(fc.record({ who: fc.nat(), model: fc.constantFrom(...MODELS), daysAgo: fc.nat({ max: 6 }), prompt: fc.nat({ max: 5000 }), cents: fc.nat({ max: 500 }), batchLines: fc.option(fc.integer({ min: 1, max: 5 })) }), { maxLength: 60 }),
      fc.nat(), fc.nat(),
      async (parents, traffic, pickCaller, pickTarget) => {
        const owner = await insertAccount(gw, { parent: rootAccount(gw), role: 'owner' });
        const tree: TestAccount[] = [owner];
        for (const p of parents) tree.push(await insertAccount(gw, { parent: tree[p % tree.length] }));
        for (const t of traffic) {
          const a = tree[t.who % tree.length];
          // Some records are provider batches' (gateway/batches settlement): their own rows, their lines counted as requests.
          const batch = t.batchLines === null ? {} : { batchId: `batch_${t.prompt}`, batchLines: t.batchLines };
          gw.gateway.usage.record(usageOf(a, { model: t.model, prompt: t.prompt, creditUsed: t.cents / 100, at: new Date(Date.parse(`${addDays(today(), -t.daysAgo)}T10:00:00Z`) + t.prompt), ...batch }));
        }
        await gw.gateway.usage.flush();
        // Owners (and Root) read descendant bills; any account of the tree can be the filter's subtree.
        const caller = pickCaller % 4 === 0 ? rootAccount(gw) : owner;
        const below = tree.filter((a) => a.dna.startsWith(caller.dna) && a.id !== caller.id);
        const start = addDays(today(), -6);
        const cases: { query: string; expect: Promise<Awaited<ReturnType<typeof direct>>> }[] = [
          { query: '', expect: direct(caller.dna, caller.id, null, start, today()) },
        ];
        if (below.length) {
          const inTree = below.filter((a) => a.dna.startsWith(owner.dna));
          const target = inTree[pickTarget % inTree.length];
          cases.push({ query: `&user=${encodeURIComponent(target.dna)}`, expect: direct(target.dna, caller.id, null, start, today()) });
          cases.push({ query: `&user=${target.id}`, expect: direct(target.dna, null, target.id, start, today()) });
        }
        for (const c of cases) {
          const r = await gw.as(caller.key).get(`/x-bill?days=7${c.query}`);
          expect(r.status).toBe(200);
          const want = await c.expect;
          const got = (r.body.daily_costs as { date: string; line_items: { name: string; cost: number; usage: { requests: number; prompt: number } }[] }[])
            .flatMap((d) => d.line_items.map((i) => ({ day: d.date, model: i.name, requests: i.usage.requests, prompt: i.usage.prompt, credit: round(i.cost) })));
          const sort = <T extends { day: string; model: string }>(x: T[]) => x.sort((a, b) => (a.day + a.model).localeCompare(b.day + b.model));
          expect(sort(got)).toEqual(sort(want.days.map((d) => ({ day: d.day, model: d.model, requests: d.requests, prompt: d.prompt, credit: round(Number(d.credit)) }))));
          const users = (r.body.usage_users as { id: number; total_requests: number; total_credit_used: number }[]).map((u) => ({ id: u.id, requests: u.total_requests, credit: round(u.total_credit_used) }));
          expect(users.sort((a, b) => a.id - b.id)).toEqual(want.users.map((u) => ({ id: u.id, requests: u.requests, credit: round(Number(u.credit)) })).sort((a, b) => a.id - b.id));
        }
      },
    ), { numRuns: 25 });
  }, 240_000);
});
