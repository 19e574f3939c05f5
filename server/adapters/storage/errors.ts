/**
 * Reading database errors on either driver (postgres.js, PGlite in-process or on its
 * thread): drizzle wraps the driver's error, so each question walks the `cause` chain.
 */

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
