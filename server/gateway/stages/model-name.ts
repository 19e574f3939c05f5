/**
 * The model-name rule, checked before a name is mapped, forwarded or stored in a bill: 1–200
 * characters of letters (any script), digits and `- _ . : / @ +`, with no empty, `.` or `..`
 * path segment (so no leading or trailing `/`). Real providers' names (`gpt-4o-mini`,
 * `accounts/x/models/y`, `gpt-4o:ft-org:2024`, `meta-llama/Llama-3+x@v1`) all pass.
 */
const ALLOWED = /^[\p{L}\p{N}\-_.:/@+]+$/u;

/** What is wrong with a model name, as the 400 says it; null when it is usable. */
export function modelNameProblem(model: unknown): string | null {
  if (typeof model !== 'string') return 'model: required, a string';
  if (model.length === 0 || model.length > 200) return 'model: must be 1 to 200 characters';
  if (!ALLOWED.test(model)) return 'model: may hold only letters, digits and - _ . : / @ +';
  for (const segment of model.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') return 'model: no empty, "." or ".." path segment (nor a leading or trailing /)';
  }
  return null;
}
