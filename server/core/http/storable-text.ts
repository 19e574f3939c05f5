/**
 * Text the database can store. PostgreSQL `text` refuses U+0000, and a lone UTF-16 surrogate
 * has no UTF-8 form, so either would reach the database only to fail there as a 500. The
 * admin API's intake refuses both up front, naming the field.
 */

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What is wrong with `s` as stored text, or undefined when nothing is. */
export function textProblem(s: string): string | undefined {
  if (s.includes('\0')) return 'must not contain NUL characters';
  if (LONE_SURROGATE.test(s)) return 'must not contain unpaired UTF-16 surrogates';
  return undefined;
}

/**
 * The first string or object key in a JSON value that cannot be stored, as
 * `<field>: <problem>` (`Name: …`, `deployments.<key>: …`, `Models.2: …`); undefined when all
 * can. Walks with its own stack: a body of deeply nested arrays must not overflow the call stack.
 */
export function unstorableField(value: unknown, root = ''): string | undefined {
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem) return `${path || 'body'}: ${problem}`;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], join(path, String(i))]);
    } else if (typeof v === 'object' && v !== null) {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i];
        const field = join(path, key);
        const problem = textProblem(key);
        if (problem) return `${field}: ${problem}`;
        stack.push([(v as Record<string, unknown>)[key], field]);
      }
    }
  }
  return undefined;
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);
