import type { LimitCheck, LimitRefusal, WindowUnit } from './counters';

/** The rate-limit fields of an account row; null (or 0) means no limit. */
export interface AccountRateFields {
  id: number;
  rpm: number | null;
  rph: number | null;
  rpd: number | null;
  tpm: number | null;
  tph: number | null;
  tpd: number | null;
}

const ACCOUNT_LIMITS: [keyof AccountRateFields, string, LimitCheck['kind'], WindowUnit][] = [
  ['rpm', 'RPM', 'requests', 'minute'],
  ['rph', 'RPH', 'requests', 'hour'],
  ['rpd', 'RPD', 'requests', 'day'],
  ['tpm', 'TPM', 'tokens', 'minute'],
  ['tph', 'TPH', 'tokens', 'hour'],
  ['tpd', 'TPD', 'tokens', 'day'],
];

const limited = (v: number | null | undefined): v is number => typeof v === 'number' && v > 0;

/** The account's own limits. An ancestor's limits bind only the ancestor's own requests. */
export function accountChecks(a: AccountRateFields): LimitCheck[] {
  const out: LimitCheck[] = [];
  for (const [field, name, kind, window] of ACCOUNT_LIMITS) {
    const limit = a[field];
    if (limited(limit)) out.push({ key: `a:${a.id}:${field}`, name, kind, window, limit });
  }
  return out;
}

/** Per-model rpm/tpm of ModelLimits, counted per account and model. */
export function modelChecks(accountId: number, model: string, limit: { rpm?: number; tpm?: number } | undefined): LimitCheck[] {
  if (!limit) return [];
  const out: LimitCheck[] = [];
  if (limited(limit.rpm)) out.push({ key: `m:${accountId}:${model}:rpm`, name: `${model} rpm`, kind: 'requests', window: 'minute', limit: limit.rpm });
  if (limited(limit.tpm)) out.push({ key: `m:${accountId}:${model}:tpm`, name: `${model} tpm`, kind: 'tokens', window: 'minute', limit: limit.tpm });
  return out;
}

/** What a 429 for a limit tells the client: when to retry and which limit it ran into. */
export function refusalHeaders(r: LimitRefusal, now: number): Record<string, string> {
  const resetSeconds = Math.max(1, Math.ceil((r.resetAt - now) / 1000));
  return {
    'retry-after': String(resetSeconds),
    'x-ratelimit-limit': String(r.check.limit),
    'x-ratelimit-remaining': String(Math.max(0, r.check.limit - r.used)),
    'x-ratelimit-reset': String(resetSeconds),
    'x-ratelimit-scope': r.check.name,
  };
}

export function refusalMessage(r: LimitRefusal): string {
  const unit = r.check.kind === 'requests' ? 'requests' : 'tokens';
  const per = r.check.window === 'day' ? 'UTC day' : r.check.window;
  return `Rate limit reached: ${r.check.name} allows ${r.check.limit} ${unit} per ${per}`;
}
