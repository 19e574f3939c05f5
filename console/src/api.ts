import { createTRPCClient, httpBatchLink, isTRPCClientError, type TRPCLink } from '@trpc/client';
import { observable } from '@trpc/server/observable';
import type { AppRouter } from '../../contract/index';
import { endSession, sessionKey } from './session';
import { t } from './i18n';

export type Api = ReturnType<typeof createApi>;

/**
 * Ends the session when the server stops accepting the key (rotated elsewhere, account disabled).
 * A call still in flight with the old key when this console rotated its own key fails with 401
 * after the session already moved to the new key: that one must not sign the Owner out.
 */
const endSessionOn401 = (key: () => string | null): TRPCLink<AppRouter> => () => ({ next, op }) =>
  observable((observer) => {
    const sentWith = key();
    return next(op).subscribe({
      next: (value) => observer.next(value),
      error: (err) => {
        if (statusOf(err) === 401 && key() === sentWith) endSession('keyRefused');
        observer.error(err);
      },
      complete: () => observer.complete(),
    });
  });

/** A tRPC client that sends `key` only in the Authorization header of same-origin calls. */
export function createApi(key: () => string | null, opts: { watchSession?: boolean } = {}) {
  const http = httpBatchLink<AppRouter>({
    url: '/trpc',
    // uWS's Node 20 binary answers 505 to a request line that arrives in more than one read
    // (docs/decisions.md, `splitRequestLine505`): a URL within 1,200 characters keeps the line
    // inside one TCP segment (about 1,400 bytes on a usual network); a batch past it is split.
    maxURLLength: 1200,
    headers: () => {
      const k = key();
      return k ? { authorization: 'Bearer ' + k } : {};
    },
  });
  return createTRPCClient<AppRouter>({ links: opts.watchSession ? [endSessionOn401(key), http] : [http] });
}

/** The client of the signed-in Owner. */
export const api = createApi(sessionKey, { watchSession: true });

export interface Failure {
  /** HTTP status, or null when the server could not be reached. */
  status: number | null;
  message: string;
  /** The configuration key or body field the server blamed, when it named one. */
  field: string | null;
}

interface IssueLike { path?: (string | number)[]; message?: string; code?: string; keys?: string[] }

function statusOf(err: unknown): number | null {
  if (!isTRPCClientError(err)) return null;
  const data = err.data as { httpStatus?: number } | undefined;
  const response = (err.meta as { response?: { status?: number } } | undefined)?.response;
  return data?.httpStatus ?? response?.status ?? null;
}

/** Input validation failures arrive as the zod issue list in JSON; name each field as the REST API does. */
function describeIssues(message: string): { message: string; field: string | null } | null {
  if (!message.trimStart().startsWith('[')) return null;
  let issues: IssueLike[];
  try {
    const parsed: unknown = JSON.parse(message);
    if (!Array.isArray(parsed)) return null;
    issues = parsed as IssueLike[];
  } catch {
    return null;
  }
  const text = issues.slice(0, 5).map((i) => {
    if (i.code === 'unrecognized_keys' && i.keys?.length) return t('errors.unknownField', { fields: i.keys.join(', ') });
    return `${i.path?.length ? i.path.join('.') : t('errors.body')}: ${i.message ?? t('errors.invalid')}`;
  }).join('; ');
  const first = issues[0]?.path?.[0];
  return { message: text, field: typeof first === 'string' ? first : null };
}

export function describeError(err: unknown): Failure {
  if (isTRPCClientError(err)) {
    const status = statusOf(err);
    if (status === null && /fetch|network/i.test(err.message)) {
      return { status: null, message: t('errors.unreachable'), field: null };
    }
    const issues = describeIssues(err.message);
    if (issues) return { status, ...issues };
    const named = /^([A-Za-z][A-Za-z_]*)(?:[.\[][^:]*)?: /.exec(err.message);
    const message = status !== null && status >= 500 ? t('errors.serverFailed', { status: String(status) }) : err.message;
    return { status, message, field: named ? named[1] : null };
  }
  return { status: null, message: err instanceof Error ? err.message : String(err), field: null };
}

export function isUnauthorized(err: unknown): boolean {
  return statusOf(err) === 401;
}

/** The API's error code (`invalid_api_key`, `account_disabled`…), or null when it gave none. */
export function apiCodeOf(err: unknown): string | null {
  if (!isTRPCClientError(err)) return null;
  return (err.data as { apiCode?: string } | undefined)?.apiCode ?? null;
}
