/**
 * Errors that say the database cannot be reached (as opposed to a query it refused): the
 * driver's connection codes, system errors of the socket, PostgreSQL's connection-exception
 * class (08) and shutdown codes, and the embedded database's thread having stopped.
 */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH',
  'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT',
  '57P01', '57P02', '57P03', 'EMBEDDED_DATABASE_STOPPED',
]);

/** True when `err` (or an error it wraps, as drizzle does) means the database is unreachable. */
export function isDatabaseUnavailable(err: unknown): boolean {
  let e: any = err;
  for (let i = 0; e && i < 5; i++, e = e.cause) {
    const code = e.code;
    if (typeof code === 'string' && (CONNECTION_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
  }
  return false;
}
