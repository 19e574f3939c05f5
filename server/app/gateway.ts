import { consoleDist } from '../core/paths';
import { Teardown } from './teardown';
import { appRouter } from '../../contract/index';
import type { RequestContext } from '../../contract/trpc';
import type { Services } from '../../contract/services';
import { isNativeUws, listenExclusive, nativeUwsProblem, uWS, type HttpRequest, type HttpResponse } from '../core/http/uws';
import { endHead, Exchange } from '../core/http/exchange';
import { createRestHandler } from '../core/http/rest';
import { httpFailureOf } from '../adapters/storage/errors';
import { createTrpcHandler } from '../core/http/trpc';
import { createStaticHandler } from '../core/http/static';
import { credentialFrom } from '../core/http/credentials';
import { AccountCache } from '../state/accounts/account-cache';
import { Authorizer } from '../admin/auth/authorizer';
import { BalanceManagePolicy } from '../admin/accounts/manage-policy';
import { Accounts } from '../admin/accounts/service';
import { News } from '../admin/news/service';
import { Batches } from '../admin/batches/service';
import { openDatabase, migrate, type Database } from '../adapters/storage/database';
import { ensureRoot } from './bootstrap-root';
import { Vault } from '../adapters/security/crypto';
import { resolveMasterKey } from '../adapters/security/master-key';
import { OwnerConfigStore } from '../state/owner-config/store';
import { OwnerConfig } from '../admin/configuration/service';
import { KeyPool } from '../state/provider-keys/key-pool';
import { ProviderKeys } from '../admin/provider-keys/service';
import { Helpers } from '../admin/helpers/helpers';
import { accounts } from '../adapters/storage/schema';
import { recordWriterFor } from '../state/usage/record-writers';
import { UsageRecorder } from '../state/usage/recorder';
import { databaseId } from '../state/usage/orphans';
import { UsageJournal } from '../state/usage/journal';
import { PartitionKeeper } from '../state/usage/partitions';
import { createProxy, memoryAdmissionStore, type AiProxy } from '../gateway/proxy';
import { registerGeminiRoutes } from './gemini-routes';
import { registerProxyRoutes } from './proxy-routes';
import { AccountAlerts } from '../state/alerts/alerts';
import { AlertMail } from '../state/alerts/alert-mail';
import type { UsageSink } from '../domain/usage/types';
import { Dashboard } from '../admin/dashboard/service';
import { Billing } from '../admin/billing/service';
import type { Settings } from '../core/settings';
import { createLogger, errorFields, type Logger } from '../core/log';
import { buildOpenApiDocument } from '../../contract/openapi/index';
import { inArray, sql } from 'drizzle-orm';
import { PostgresChangeFeed } from '../adapters/storage/change-feed';
import { LocalChangeFeed, type Change, type ChangeFeed } from '../state/changes/change';
import { StateChanges } from '../state/changes/state-changes';
import { connectRedis } from '../adapters/redis/link';
import { InstancePresence } from '../adapters/redis/presence';
import { RedisAdmissionStore } from '../gateway/admission/redis/store';
import type { BaseLoader, ThresholdSink } from '../gateway/admission/store';
import { SharedHealthBoard } from '../gateway/key-health/shared-board';
import { RedisResponseKeys, SharedResponseKeyBook } from '../state/response-keys/response-keys';
import { RedisConversations, StoredResponseBook } from '../state/stored-responses/stored-responses';
import { PrometheusMetrics } from '../adapters/telemetry/prometheus';
import { OtlpTracer } from '../adapters/telemetry/tracing';
import { isLoopbackHost, metricsAccess } from '../adapters/telemetry/access';
import { keyStates, switchedLevels } from '../gateway/observe';

export interface Gateway {
  url: string;
  port: number;
  database: Database;
  services: Services;
  /** Where the proxy records usage; buffered, written in batches, flushed on close. */
  usage: UsageSink;
  /** The AI proxy (its admission store and key health are reachable for tests). */
  proxy: AiProxy;
  /** SoftLimit and low-balance alerts, once per period: subscribe to hear them. */
  alerts: AccountAlerts;
  /** Alerts mailed through each Owner's mail settings (what is under way is given up on close). */
  alertMail: AlertMail;
  /** Set when this start created Root with a generated key (it is shown once). */
  generatedRootKey?: string;
  /** /metrics (absent with METRICS=off) and the trace exporter (with OTEL_EXPORTER_OTLP_ENDPOINT). */
  telemetry: { metrics?: PrometheusMetrics; tracer?: OtlpTracer };
  close(): Promise<void>;
}

export interface StartOptions {
  log?: Logger;
  /** How soon finished spans are exported (tests); unset, the SDK's default. */
  traceExportDelayMs?: number;
}

export class NativeUwsMissingError extends Error {}

/** /readyz reports the database unavailable when `select 1` takes longer. */
const READY_TIMEOUT_MS = 2_000;

export async function startGateway(settings: Settings, opts: StartOptions = {}): Promise<Gateway> {
  const log = opts.log ?? createLogger();
  if (!isNativeUws) {
    if (!settings.allowUwsFallback) {
      // One line naming the cause and the fix (uws-loader.ts); ALLOW_UWS_FALLBACK is in the README.
      throw new NativeUwsMissingError(nativeUwsProblem ?? 'uWebSockets.js native binary not loaded');
    }
    log.warn('uws_fallback', { message: 'serving with the JavaScript fallback of uWebSockets.js: slow, and partial (only GET /healthz works; other requests end the process)', cause: nativeUwsProblem });
  }

  const database = await openDatabase(settings.databaseUrl, settings.dataDir, { log });
  // Every resource below registers its closing step as it opens; shutdown (and a start that
  // fails half-way) runs them from the last back to the database.
  const teardown = new Teardown(log);
  teardown.add('database', () => database.close());
  try {
    return await assemble(settings, log, opts, database, teardown);
  } catch (err) {
    await teardown.run();
    throw err;
  }
}

async function assemble(settings: Settings, log: Logger, opts: StartOptions, database: Database, teardown: Teardown): Promise<Gateway> {
  const { db } = database;
  let generatedRootKey: string | undefined;
  await database.withStartupLock(async () => {
    await migrate(database);
    generatedRootKey = (await ensureRoot(db, settings.rootKey)).generatedKey;
  });
  // Listening before the snapshots are first read: no change committed after that read goes unheard.
  const feed: ChangeFeed = database.kind === 'postgres' ? await PostgresChangeFeed.open<Change>(settings.databaseUrl!, { log }) : new LocalChangeFeed();
  teardown.add('change feed', () => feed.close());

  const vault = new Vault(resolveMasterKey(settings));
  const accountCache = new AccountCache(db);
  const configStore = new OwnerConfigStore(db);
  const pool = new KeyPool(db, vault);
  const changes = new StateChanges({ db, feed, accounts: accountCache, config: configStore, pool, log, sharedLimits: Boolean(settings.redisUrl) });
  teardown.add('state changes', () => changes.close());
  // The one Redis link of the process (REDIS_URL), for every shared store; closed after the proxy drains.
  const redis = settings.redisUrl ? connectRedis(settings.redisUrl, { prefix: settings.redisPrefix, log }) : undefined;
  if (redis) teardown.add('redis', () => redis.close());
  const healthBoard = redis ? new SharedHealthBoard({ link: redis, log, owners: () => pool.owners() }) : undefined;
  if (healthBoard) teardown.add('shared key health', () => healthBoard.close());
  const owners = await db.select({ id: accounts.id }).from(accounts).where(inArray(accounts.role, ['root', 'owner']));
  await pool.reloadAll(owners.map((o) => o.id));
  for (const o of owners) await configStore.routing(o.id);

  // With REDIS_URL, credit, spend caps and rate/token counters are shared (admission/redis/store.ts);
  // the recorder tells that store which charges reached the database.
  const presence = redis ? new InstancePresence(redis, log) : undefined;
  if (presence) teardown.add('instance presence', () => presence.stop());
  let sharedAdmission: RedisAdmissionStore | undefined;
  // Closed after the usage flush below: the charges it writes are applied to the shared counters.
  teardown.add('shared admission', () => sharedAdmission?.close());
  const alertMail = new AlertMail({ db, config: configStore, vault, log });
  // Shutdown never waits on mail: what is under way is given up and logged.
  teardown.add('alert mail', () => alertMail.close());
  const alerts = new AccountAlerts(db, log);
  teardown.add('alerts', () => alerts.settled());
  alerts.subscribe((a) => alertMail.accountAlert(a));
  const partitions = new PartitionKeeper(db, settings.usageRetentionDays, log);
  teardown.add('usage partitions', () => partitions.close());
  // Usage is journaled to DATA_DIR before the database has it, unless the database itself is in memory.
  const journal = settings.databaseUrl === 'memory://' ? undefined : await UsageJournal.open(settings.dataDir, await databaseId(db), log);
  const usage = new UsageRecorder(db, log, { writeRecords: recordWriterFor(database.kind), onWritten: (charges) => sharedAdmission?.onWritten(charges), journal });
  // Buffered usage is money: written before the database goes away, retrying a database that
  // is away until the shutdown grace runs out.
  teardown.add('usage', (deadline) => usage.close(deadline));
  // Day partitions first, so replayed usage lands in its day; then, before serving, usage a
  // crashed or outage-stopped run left in its journal goes in, once.
  await partitions.start();
  await usage.replayOrphans();
  // The admission store: this instance's counters (a shared one is chosen here).
  const admissionStore = redis && presence
    ? (bases: BaseLoader, onThreshold: ThresholdSink) => (sharedAdmission = new RedisAdmissionStore(redis, bases, { refreshMs: settings.balanceRefreshMs, onThreshold, log, presence }))
    : memoryAdmissionStore(settings.balanceRefreshMs, log);
  // Telemetry: each part only when turned on, so a part that is off costs the proxy nothing.
  const metrics = settings.metrics === 'off' ? undefined : new PrometheusMetrics();
  const app = uWS.App();
  // After the proxy has drained: what is still connected is idle.
  teardown.add('http server', () => (app as { close?: () => void }).close?.());
  const tracer = settings.otelExporterOtlpEndpoint
    ? new OtlpTracer({ endpoint: settings.otelExporterOtlpEndpoint, serviceName: settings.otelServiceName, log, exportDelayMs: opts.traceExportDelayMs })
    : undefined;
  // The drained calls' spans are sent before the process goes.
  if (tracer) teardown.add('trace exporter', () => tracer.close());
  const telemetry = { metrics, tracer, accessLog: settings.accessLog === 'on' };
  // Which key created each stored response: in Redis with REDIS_URL (the proxy uses the database without).
  const responseKeys = redis ? new SharedResponseKeyBook(new RedisResponseKeys(redis), log) : undefined;
  // Conversations kept for previous_response_id on keys without the Responses API: the same choice.
  const storedResponses = redis ? new StoredResponseBook(new RedisConversations(redis), log, { maxBytes: settings.maxBodyBytes }) : undefined;
  const proxy = createProxy({
    settings, log, db, accounts: accountCache, config: configStore, pool, usage, board: healthBoard, changes, alerts, admissionStore, telemetry, responseKeys, storedResponses,
    writeRecords: recordWriterFor(database.kind),
    // Test hook (the kill-mid-settlement test): never set in production.
    batchSettlePauseMs: Number(process.env.SWITCHYARD_TEST_BATCH_SETTLE_PAUSE_MS) || undefined,
    // Test hooks (the kill-mid-create test): never set in production.
    batchCreatePauseMs: Number(process.env.SWITCHYARD_TEST_BATCH_CREATE_PAUSE_MS) || undefined,
    batchPendingGraceMs: process.env.SWITCHYARD_TEST_BATCH_PENDING_GRACE_MS ? Number(process.env.SWITCHYARD_TEST_BATCH_PENDING_GRACE_MS) : undefined,
  });
  // Proxied calls under way finish (up to SHUTDOWN_GRACE_MS) and record their usage first.
  teardown.add('proxy', () => proxy.close());
  metrics?.readFrom({
    inFlight: () => proxy.inFlight,
    keyStates: () => keyStates(pool, proxy.health.circuits),
    switchedLevels: () => switchedLevels(pool, proxy.switchOver),
    usage: () => {
      const b = usage.batchTimes;
      return { buffered: usage.buffered, inMemory: usage.inMemory, batches: b.batches, batchSeconds: b.seconds, failedBatches: b.failed };
    },
    redisUp: redis ? () => redis.up : undefined,
  });
  if (metrics) redis?.client.on('error', () => metrics.redisError());
  proxy.healthEvents.subscribe((e) => {
    if (e.type === 'key_disabled') alertMail.healthAlert({ ...e, kind: 'key_disabled' });
    else if (e.type === 'level_switched') alertMail.healthAlert({ ...e, kind: 'level_switched' });
    // "Open for long": out of rotation for KEY_OPEN_MAX_MS (the longest cool-down) and its probe failed again.
    else if (e.outMs >= settings.keyOpenMaxMs) alertMail.healthAlert({ ...e, kind: 'key_open' });
  });
  // After the proxy listens to the board, so the sleeping keys and switch-overs read now are applied.
  await healthBoard?.start();
  await presence?.start();
  // Joined before serving, so the first calls are not refused as degraded; a Redis that is away
  // now only means starting in the documented degraded mode.
  await sharedAdmission?.whenReady(5_000);
  const managePolicy = new BalanceManagePolicy(db, settings.userApiBalance, (id) => usage.pendingCredit(id));
  const services: Services = {
    auth: new Authorizer(accountCache, managePolicy),
    keys: new ProviderKeys(db, vault, pool, configStore, changes),
    config: new OwnerConfig({ db, vault, store: configStore, pool, changes, settings, flushUsage: () => usage.flush(), keyHealth: (ownerId) => proxy.health.circuits.report(ownerId), mail: alertMail }),
    helpers: new Helpers(vault),
    dashboard: new Dashboard(db, usage, configStore, () => usage.writtenBatches),
    billing: new Billing(db, () => usage.writtenBatches),
    accounts: new Accounts({
      db, tenancy: settings.tenancy, userMinBalance: settings.userMinBalance, userApiBalance: settings.userApiBalance,
      changes, policy: managePolicy, pendingCredit: (id) => usage.pendingCredit(id),
    }),
    news: new News(db),
    batches: new Batches(db),
  };

  const makeContext = (ex: Exchange): RequestContext => ({
    resHeaders: new Headers(),
    response: {},
    ip: ex.ip,
    apiKey: credentialFrom(ex.headers),
    services,
  });
  // Bills: the same caller's same URL within a second is answered with the same bytes (the
  // billing service's own freshness rule, core/fresh-cache.ts).
  const rest = createRestHandler(appRouter, makeContext, log, httpFailureOf, { paths: ['/x-bill', '/dashboard/bill'], version: () => usage.writtenBatches });
  const trpc = createTrpcHandler(appRouter, makeContext, log, httpFailureOf);
  const serveConsole = createStaticHandler(consoleDist, '/console/');
  let openApiJson: string | undefined;

  const handle = (fn: (ex: Exchange) => void | Promise<void>) => (res: HttpResponse, req: HttpRequest) => {
    const ex = new Exchange(res, req, settings.maxBodyBytes);
    let result: void | Promise<void>;
    try {
      result = fn(ex);
    } catch (err) {
      return fail(ex, err);
    }
    if (result) result.catch((err) => fail(ex, err));
  };
  const fail = (ex: Exchange, err: unknown) => {
    log.error('unhandled_request_error', { path: ex.path, ...errorFields(err) });
    ex.sendError(500, 'Internal server error');
  };

  // HEAD answers as GET would, without the body: every GET route also takes HEAD, and the
  // catch-all handlers (tRPC, console, REST) serve a HEAD as their GET.
  const getAndHead = (path: string, h: (res: HttpResponse, req: HttpRequest) => void) => { app.get(path, h); app.head(path, h); };
  // Liveness stays 200 while Redis is away; the body says the shared state is degraded.
  const HEALTHY = '{"status":"ok"}';
  const DEGRADED = '{"status":"ok","sharedState":"degraded"}';
  const health = () => (sharedAdmission?.degraded ? DEGRADED : HEALTHY);
  app.get('/healthz', (res) => {
    const body = health();
    res.cork(() => res.writeHeader('content-type', 'application/json').end(body));
  });
  app.head('/healthz', (res) => {
    const body = health();
    res.cork(() => endHead(res.writeHeader('content-type', 'application/json'), body.length));
  });
  // Readiness: the database answers, and Redis when configured; 503 while either does not or
  // while shutting down. /healthz above stays the liveness probe.
  let stopping = false;
  const readiness = async (): Promise<{ ready: boolean; body: string }> => {
    const checks: Record<string, string> = {};
    let ready = !stopping;
    try {
      await Promise.race([
        database.rows(sql`select 1`),
        new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), READY_TIMEOUT_MS).unref()),
      ]);
      checks.database = 'ok';
    } catch {
      checks.database = 'unavailable';
      ready = false;
      metrics?.readinessFailed();
    }
    if (redis) {
      checks.redis = redis.up ? 'ok' : 'unavailable';
      if (!redis.up) ready = false;
    }
    return { ready, body: JSON.stringify({ status: ready ? 'ready' : stopping ? 'stopping' : 'not_ready', ...checks }) };
  };
  getAndHead('/readyz', handle(async (ex) => {
    const r = await readiness();
    ex.send(r.ready ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' }, r.body);
  }));
  const metricsRule = { metrics: settings.metrics, token: settings.metricsToken, loopback: isLoopbackHost(settings.host) };
  getAndHead('/metrics', handle(async (ex) => {
    const access = metricsAccess(metricsRule, ex.headers.authorization);
    if (!access.ok) return ex.sendError(access.status, access.message, access.code, access.headers);
    const { contentType, body } = await metrics!.render();
    ex.send(200, { 'content-type': contentType, 'cache-control': 'no-store' }, body);
  }));
  getAndHead('/', handle((ex) => ex.send(302, { location: '/console/' }, '')));
  getAndHead('/openapi.json', handle((ex) => {
    openApiJson ??= JSON.stringify(buildOpenApiDocument());
    ex.send(200, { 'content-type': 'application/json' }, openApiJson);
  }));
  app.any('/trpc/*', handle(trpc));
  getAndHead('/console', handle(serveConsole));
  app.any('/console/*', handle(serveConsole));
  // The AI proxy is the hot path: plain uWS routes, registered before the REST catch-all.
  registerProxyRoutes(app, proxy, settings);
  const restHandler = handle(rest);
  // Gemini's format: its model routes on the proxy, its model list and model beside OpenAI's.
  registerGeminiRoutes(app, {
    proxy, maxBodyBytes: settings.maxBodyBytes, handle, rest: restHandler,
    models: async (ex) => {
      const apiKey = credentialFrom(ex.headers) ?? (new URLSearchParams(ex.query).get('key') || null);
      const caller = await services.auth.authorize({ ...makeContext(ex), apiKey }, 'account');
      const list = await services.dashboard.models({ caller, ip: ex.ip });
      const routing = await configStore.routing(caller.ownerId);
      return { ids: list.data.map((m) => m.id), defaultOutputLimit: routing.defaultOutputLimit };
    },
  });
  app.any('/*', restHandler);

  const listen = await listenExclusive(app, settings.host, settings.port);
  const url = `http://${settings.host.includes(':') ? `[${settings.host}]` : settings.host}:${listen.port}`;
  log.info('listening', { url, database: database.kind, tenancy: settings.tenancy, native_uws: isNativeUws });
  await changes.warnIfShared();

  let closed = false;
  return {
    url,
    port: listen.port,
    database,
    services,
    usage,
    proxy,
    alerts,
    alertMail,
    generatedRootKey,
    telemetry: { metrics, tracer },
    async close() {
      if (closed) return;
      closed = true;
      stopping = true;
      const deadline = Date.now() + settings.shutdownGraceMs;
      uWS.us_listen_socket_close(listen.socket);
      await teardown.run(deadline);
      log.info('stopped', {});
    },
  };
}
