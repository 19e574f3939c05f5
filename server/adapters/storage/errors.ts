/**
 * Reading database errors on either driver (postgres.js, PGlite in-process or on its
 * thread): drizzle wraps the driver's error, so each question walks the `cause` chain.
 */
import type { HttpFailure } from '../../core/http/rest';

/** The first error in the chain that `test` accepts. */
export function causeWhere(err: unknown, test: (e: any) => boolean): any {
  let e: any = err;
  for (let i = 0; e && i < 6; i++, e = e.cause) if (test(e)) return e;
  return undefined;
}

const SQLSTATE = /^[0-9A-Z]{5}$/;

export const PG_UNIQUE_VIOLATION = '23505';

/** The PostgreSQL SQLSTATE (`23505`…) the error carries, if any. */
export const sqlStateOf = (err: unknown): string | undefined =>
  causeWhere(err, (e) => typeof e.code === 'string' && SQLSTATE.test(e.code))?.code;

/** The constraint a unique violation names ('' when the driver gives none), or null for any other error. */
export function uniqueViolationConstraint(err: unknown): string | null {
  const e = causeWhere(err, (c) => c.code === PG_UNIQUE_VIOLATION);
  // postgres.js calls it constraint_name, PGlite constraint.
  return e ? String(e.constraint_name ?? e.constraint ?? '') : null;
}

/**
 * Codes that say the database cannot be reached (as opposed to a query it refused): the
 * driver's connection codes, system errors of the socket, PostgreSQL's shutdown codes, and
 * the embedded database's thread having stopped; PostgreSQL's class 08 is matched apart.
 */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH',
  'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT',
  '57P01', '57P02', '57P03', 'EMBEDDED_DATABASE_STOPPED',
]);

/** True when the error means the database is unreachable. */
export const isDatabaseUnavailable = (err: unknown): boolean =>
  causeWhere(err, (e) => typeof e.code === 'string' && (CONNECTION_CODES.has(e.code) || /^08[0-9A-Z]{3}$/.test(e.code))) !== undefined;

/**
 * The one rule for answering a database failure over HTTP, where it has an answer of its own:
 * a unique violation is the client's conflict (409 duplicate), an unreachable database a 503
 * the client may retry; anything else stays an internal error (undefined).
 */
export function httpFailureOf(err: unknown): HttpFailure | undefined {
  if (sqlStateOf(err) === PG_UNIQUE_VIOLATION) {
    return { status: 409, code: 'duplicate', message: 'A record with the same unique value already exists' };
  }
  if (isDatabaseUnavailable(err)) {
    return { status: 503, code: 'database_unavailable', message: 'The database is unavailable; retry shortly', headers: { 'retry-after': '5' } };
  }
  return undefined;
}
