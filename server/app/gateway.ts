import { consoleDist } from '../core/paths';
import { appRouter } from '../../contract/index';
import type { RequestContext } from '../../contract/trpc';
import type { Services } from '../../contract/services';
import { isNativeUws, listenExclusive, nativeUwsProblem, uWS, type HttpRequest, type HttpResponse } from '../core/http/uws';
import { endHead, Exchange } from '../core/http/exchange';
import { StreamingExchange } from '../core/http/stream-writer';
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
import { createProxy, type AiProxy } from '../gateway/proxy';
import type { UsageSink } from '../domain/usage/types';
import { Dashboard } from '../admin/dashboard/service';
import { Billing } from '../admin/billing/service';
import type { Settings } from '../core/settings';
import { createLogger, errorFields, type Logger } from '../core/log';
import { buildOpenApiDocument } from '../../contract/openapi';
import { inArray } from 'drizzle-orm';

export interface Gateway {
  url: string;
  port: number;
  database: Database;
  services: Services;
  /** Where the proxy records usage; buffered, written in batches, flushed on close. */
  usage: UsageSink;
  /** The AI proxy (its limit store and key health are reachable for tests). */
  proxy: AiProxy;
  /** Set when this start created Root with a generated key (it is shown once). */
  generatedRootKey?: string;
  close(): Promise<void>;
}

export interface StartOptions {
  log?: Logger;
}

export class NativeUwsMissingError extends Error {}

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
  const { db } = database;
  let generatedRootKey: string | undefined;
  try {
    await database.withStartupLock(async () => {
      await migrate(database);
      generatedRootKey = (await ensureRoot(db, settings.rootKey)).generatedKey;
    });
  } catch (err) {
    await database.close();
    throw err;
  }

  const vault = new Vault(resolveMasterKey(settings));
  const accountCache = new AccountCache(db);
  const configStore = new OwnerConfigStore(db);
  const pool = new KeyPool(db, vault);
  const owners = await db.select({ id: accounts.id }).from(accounts).where(inArray(accounts.role, ['root', 'owner']));
  await pool.reloadAll(owners.map((o) => o.id));
  for (const o of owners) await configStore.routing(o.id);

  const usage = new UsageRecorder(db, log, { writeRecords: recordWriterFor(database.kind) });
  const proxy = createProxy({ settings, log, db, accounts: accountCache, config: configStore, pool, usage });
  const managePolicy = new BalanceManagePolicy(db, settings.userApiBalance, (id) => usage.pendingCredit(id));
  const services: Services = {
    auth: new Authorizer(accountCache, managePolicy),
    keys: new ProviderKeys(db, vault, pool, configStore),
    config: new OwnerConfig({ db, vault, store: configStore, pool, accountCache, settings, flushUsage: () => usage.flush() }),
    helpers: new Helpers(vault),
    dashboard: new Dashboard(db, usage, configStore),
    billing: new Billing(db),
    accounts: new Accounts({
      db, tenancy: settings.tenancy, userMinBalance: settings.userMinBalance, userApiBalance: settings.userApiBalance,
      cache: accountCache, policy: managePolicy, pendingCredit: (id) => usage.pendingCredit(id),
      ownerRemoved: async (ownerId) => { await pool.reload(ownerId); },
    }),
    news: new News(db),
  };

  const makeContext = (ex: Exchange): RequestContext => ({
    resHeaders: new Headers(),
    response: {},
    ip: ex.ip,
    apiKey: credentialFrom(ex.headers),
    services,
  });
  const rest = createRestHandler(appRouter, makeContext, log, httpFailureOf);
  const trpc = createTrpcHandler(appRouter, makeContext, log);
  const serveConsole = createStaticHandler(consoleDist, '/console/');
  let openApiJson: string | undefined;

  const app = uWS.App();
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
  const HEALTHY = '{"status":"ok"}';
  app.get('/healthz', (res) => {
    res.cork(() => res.writeHeader('content-type', 'application/json').end(HEALTHY));
  });
  app.head('/healthz', (res) => {
    res.cork(() => endHead(res.writeHeader('content-type', 'application/json'), HEALTHY.length));
  });
  getAndHead('/', handle((ex) => ex.send(302, { location: '/console/' }, '')));
  getAndHead('/openapi.json', handle((ex) => {
    openApiJson ??= JSON.stringify(buildOpenApiDocument());
    ex.send(200, { 'content-type': 'application/json' }, openApiJson);
  }));
  app.any('/trpc/*', handle(trpc));
  getAndHead('/console', handle(serveConsole));
  app.any('/console/*', handle(serveConsole));
  // The AI proxy is the hot path: plain uWS routes, registered before the REST catch-all.
  for (const [path, endpoint, canonical] of proxy.routes) {
    app.post(path, (res, req) => proxy.serve(new StreamingExchange(res, req, settings.maxBodyBytes, proxy.headerNames), endpoint, canonical));
  }
  app.any('/*', handle(rest));

  let listen: Awaited<ReturnType<typeof listenExclusive>>;
  try {
    listen = await listenExclusive(app, settings.host, settings.port);
  } catch (err) {
    await usage.close();
    await database.close();
    throw err;
  }
  const url = `http://${settings.host.includes(':') ? `[${settings.host}]` : settings.host}:${listen.port}`;
  log.info('listening', { url, database: database.kind, tenancy: settings.tenancy, native_uws: isNativeUws });
  if (settings.redisUrl) {
    // Said at every start rather than ignored: several instances would each count on their own.
    log.warn('redis_not_shared_yet', { message: 'REDIS_URL is set, but rate-limit counters, switch-over windows and cache invalidation are still kept per instance; run one instance until the shared implementation lands' });
  }

  let closed = false;
  return {
    url,
    port: listen.port,
    database,
    services,
    usage,
    proxy,
    generatedRootKey,
    async close() {
      if (closed) return;
      closed = true;
      const deadline = Date.now() + settings.shutdownGraceMs;
      uWS.us_listen_socket_close(listen.socket);
      // Proxied calls under way finish (up to SHUTDOWN_GRACE_MS) and record their usage first.
      await proxy.close();
      (app as { close?: () => void }).close?.();
      // Buffered usage is money: write it before the database goes away, retrying a database
      // that is away until the grace runs out.
      await usage.close(deadline);
      await database.close();
      log.info('stopped', {});
    },
  };
}
