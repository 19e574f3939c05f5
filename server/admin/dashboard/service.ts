import { and, asc, eq, gt, inArray, sql } from 'drizzle-orm';
import type { Actor } from '../../../contract/services';
import type { DashboardService } from '../../../contract/dashboard/service';
import type { LogQuery, RequestQuery, UserLive } from '../../../contract/dashboard/schemas';
import { ApiError } from '../../../contract/errors';
import type { Db } from '../../adapters/storage/database';
import { accounts, creditGrants } from '../../adapters/storage/schema';
import { activeGrants } from '../../state/credits/ledger';
import type { AccountRow } from '../../state/accounts/account-cache';
import type { OwnerConfigStore } from '../../state/owner-config/store';
import type { UsageSink } from '../../domain/usage/types';
import { findAccount, parseSingleIdentifier } from '../accounts/identifiers';
import { asUserParam } from '../billing/user-filter';
import { liveUsage, toUserInfo } from './user-info';
import { FreshCache } from '../../core/fresh-cache';
import { today } from '../billing/period';
import { readLogs } from './logs';
import { readRequests } from './requests';
import { readLatency } from './latency';
import type { LatencyQuery, LatencyReport } from '../../../contract/dashboard/latency-schemas';
import { visibleModels } from './models';
import { modelMapperTables } from '../../domain/mapping/routed-model';
import { ancestorIdsOf } from '../../domain/accounts/dna';

type Card = typeof creditGrants.$inferSelect;

export class Dashboard implements DashboardService {
  /** Today's and this month's usage per account, shared by polls within a second (see FreshCache). */
  private readonly live$: FreshCache<Awaited<ReturnType<typeof liveUsage>>>;
  /** Latency reports, shared like bills: a console's chart polled by many tabs costs one read a second. */
  private readonly latency$: FreshCache<LatencyReport>;

  /**
   * The polled read, built once: drizzle building the statement on every call was a quarter of
   * /dashboard/live's CPU (bench:dashboard under a CPU profile). `now` is an ISO string, which
   * both drivers pass as text for PostgreSQL to read as the column's type.
   */
  private readonly withCards$;

  /** `usageVersion` moves whenever this instance writes usage (the recorder's committed batches). */
  constructor(private readonly db: Db, private readonly usage: UsageSink, private readonly config: OwnerConfigStore, usageVersion: () => number = () => 0) {
    this.live$ = new FreshCache(usageVersion, 1000, 4096);
    this.latency$ = new FreshCache(usageVersion, 1000, 1024);
    this.withCards$ = db.select({ account: accounts, card: creditGrants }).from(accounts)
      .leftJoin(creditGrants, and(eq(creditGrants.accountId, accounts.id), gt(creditGrants.expiresAt, sql.placeholder('now'))))
      .where(eq(accounts.id, sql.placeholder('id')))
      .orderBy(asc(creditGrants.expiresAt), asc(creditGrants.id))
      .prepare('dashboard_with_cards');
  }

  private liveUsage(accountId: number) {
    return this.live$.get(`${accountId}|${today()}`, () => liveUsage(this.db, accountId));
  }

  private async account(id: number): Promise<AccountRow> {
    const [row] = await this.db.select().from(accounts).where(eq(accounts.id, id)).limit(1);
    if (!row) throw gone();
    return row;
  }

  /** The account and its unexpired cards (earliest expiry first) in one read: the polled path. */
  private async withCards(id: number): Promise<{ row: AccountRow; cards: Card[] }> {
    const rows = await this.withCards$.execute({ id, now: new Date().toISOString() });
    if (!rows.length) throw gone();
    return { row: rows[0].account, cards: rows.flatMap((r) => (r.card ? [r.card] : [])) };
  }

  async info({ caller }: Actor) {
    const { row, cards } = await this.withCards(caller.id);
    return toUserInfo(row, cards, this.usage.pendingCredit(row.id));
  }

  async live({ caller }: Actor): Promise<UserLive> {
    const [{ row, cards }, usage] = await Promise.all([this.withCards(caller.id), this.liveUsage(caller.id)]);
    return { ...toUserInfo(row, cards, this.usage.pendingCredit(row.id)), ...usage };
  }

  logs({ caller }: Actor, query: LogQuery) {
    return readLogs(this.db, caller, query);
  }

  requests({ caller }: Actor, query: RequestQuery) {
    return readRequests(this.db, caller, query);
  }

  latency({ caller }: Actor, query: LatencyQuery): Promise<LatencyReport> {
    // "today" is part of the key: a report asked for by days or without dates moves at midnight UTC.
    return this.latency$.get(JSON.stringify([caller.id, today(), query]), () => readLatency(this.db, caller, query));
  }

  async models({ caller }: Actor) {
    const [row, routing] = await Promise.all([this.account(caller.id), this.config.routing(caller.ownerId)]);
    return visibleModels(routing, row, modelMapperTables([row.modelMapper, ...await this.ancestorMappers(row)]));
  }

  /** The ModelMappers of the account's ancestors within its tenant, nearest first: a call is mapped by them too. */
  private async ancestorMappers(row: AccountRow): Promise<string[]> {
    const ids = ancestorIdsOf(row.dna);
    if (!ids.length) return [];
    const rows = await this.db.select({ id: accounts.id, ownerId: accounts.ownerId, modelMapper: accounts.modelMapper })
      .from(accounts).where(inArray(accounts.id, ids));
    const byId = new Map(rows.map((a) => [a.id, a]));
    return ids.reverse().flatMap((id) => {
      const a = byId.get(id);
      return a && a.ownerId === row.ownerId ? [a.modelMapper] : [];
    });
  }

  /** The Owner's own tree only (itself included): any other account is 404, as if it did not exist (only Owners get here). */
  async userInfo({ caller }: Actor, user: string): Promise<UserLive> {
    const row = await findAccount(this.db, caller, asUserParam(() => parseSingleIdentifier(user, 'user')), { param: 'user' });
    const [cards, usage] = await Promise.all([activeGrants(this.db, row.id), this.liveUsage(row.id)]);
    return { ...toUserInfo(row, cards, this.usage.pendingCredit(row.id)), ...usage };
  }
}

/** Authenticated a moment ago: gone now means deleted in between. */
const gone = () => new ApiError(401, 'This account no longer exists', 'invalid_api_key');
