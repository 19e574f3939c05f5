/** Client-side checks of the JSON configuration values; the server validates again and its message wins. */

export function jsonProblem(text: string): string | null {
  if (!text.trim()) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return `Invalid JSON: ${(err as Error).message}`;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'Must be a JSON object ({ … }).';
  return null;
}

export function modelLimitsProblem(text: string): string | null {
  const syntax = jsonProblem(text);
  if (syntax || !text.trim()) return syntax;
  for (const [model, limit] of Object.entries(JSON.parse(text) as Record<string, unknown>)) {
    if (typeof limit !== 'object' || limit === null || Array.isArray(limit)) return `${model}: must be an object like {"rpm": 30, "tpm": 90000}.`;
    for (const [field, n] of Object.entries(limit)) {
      if (field !== 'rpm' && field !== 'tpm') return `${model}: unknown field "${field}" (only rpm and tpm).`;
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) return `${model}.${field}: must be a non-negative integer.`;
    }
  }
  return null;
}
