/**
 * The admin API's intake of the request target (path and query string), beside the body
 * intake: the query is parsed once, here, and what neither can store is refused up front.
 */
import type { BodyRefusal } from './body-intake';
import { textProblem } from './storable-text';

/**
 * Query parameters: every value a list, in arrival order (`?a=1&a=2`), in an object without a
 * prototype, so a parameter named `constructor`, `__proto__` or `toString` is only a name.
 */
export type QueryParams = Record<string, string[]>;

export function parseQuery(text: string): QueryParams {
  const query: QueryParams = Object.create(null);
  if (text) new URLSearchParams(text).forEach((value, key) => { (query[key] ??= []).push(value); });
  return query;
}

export type Target = { ok: true; query: QueryParams } | { ok: false; refusal: BodyRefusal };

/**
 * The parsed query, or a 400 when a path segment (as the procedures see it, percent-decoded)
 * or a query key or value holds a NUL or a lone surrogate.
 */
export function readTarget(path: string, queryText: string): Target {
  const problem = pathProblem(path);
  if (problem) return invalid(`path: ${problem}`);
  const query = parseQuery(queryText);
  for (const key in query) {
    const keyProblem = textProblem(key);
    if (keyProblem) return invalid(`${key}: ${keyProblem}`);
    for (const value of query[key]) {
      const valueProblem = textProblem(value);
      if (valueProblem) return invalid(`${key}: ${valueProblem}`);
    }
  }
  return { ok: true, query };
}

function pathProblem(path: string): string | undefined {
  if (!path.includes('%')) return textProblem(path);
  for (const segment of path.split('/')) {
    let decoded = segment;
    // A malformed escape is validated as sent, as the procedures' own decoding does.
    try { decoded = decodeURIComponent(segment); } catch { /* keep it */ }
    const problem = textProblem(decoded);
    if (problem) return problem;
  }
  return undefined;
}

const invalid = (message: string): Target => ({ ok: false, refusal: { status: 400, code: 'invalid_request', message } });
