/** Client-side checks of the JSON configuration values; the server validates again and its message wins. */
import { t } from '../i18n';

export function jsonProblem(text: string): string | null {
  if (!text.trim()) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return t('config.checks.invalidJson', { detail: (err as Error).message });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return t('config.checks.notObject');
  return null;
}

export function modelLimitsProblem(text: string): string | null {
  const syntax = jsonProblem(text);
  if (syntax || !text.trim()) return syntax;
  for (const [model, limit] of Object.entries(JSON.parse(text) as Record<string, unknown>)) {
    if (typeof limit !== 'object' || limit === null || Array.isArray(limit)) return t('config.checks.limitNotObject', { model });
    for (const [field, n] of Object.entries(limit)) {
      if (field !== 'rpm' && field !== 'tpm') return t('config.checks.unknownField', { model, field });
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) return t('config.checks.notInteger', { path: `${model}.${field}` });
    }
  }
  return null;
}
