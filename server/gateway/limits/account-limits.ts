import { counterKeys, type AdmissionRefusal, type RateClaim } from '../admission/store';

/** The rate-limit fields of an account row; null (or 0) means no limit. */
export interface AccountRateFields {
  id: number;
  ownerId: number;
  rpm: number | null;
  rph: number | null;
  rpd: number | null;
  tpm: number | null;
  tph: number | null;
  tpd: number | null;
}

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

const ACCOUNT_LIMITS: [field: 'rpm' | 'rph' | 'rpd' | 'tpm' | 'tph' | 'tpd', name: string, kind: RateClaim['kind'], windowMs: number][] = [
  ['rpm', 'RPM', 'requests', MINUTE],
  ['rph', 'RPH', 'requests', HOUR],
  ['rpd', 'RPD', 'requests', DAY],
  ['tpm', 'TPM', 'tokens', MINUTE],
  ['tph', 'TPH', 'tokens', HOUR],
  ['tpd', 'TPD', 'tokens', DAY],
];

const limited = (v: number | null | undefined): v is number => typeof v === 'number' && v > 0;

/** The account's own limits. An ancestor's limits bind only the ancestor's own requests. */
export function accountChecks(a: AccountRateFields): RateClaim[] {
  const out: RateClaim[] = [];
  for (const [field, name, kind, windowMs] of ACCOUNT_LIMITS) {
    const limit = a[field];
    if (limited(limit)) out.push({ key: counterKeys.rate(a.ownerId, a.id, field), name, kind, windowMs, limit });
  }
  return out;
}

/** Per-model rpm/tpm of ModelLimits, counted per account and model. */
export function modelChecks(ownerId: number, accountId: number, model: string, limit: { rpm?: number; tpm?: number } | undefined): RateClaim[] {
  if (!limit) return [];
  const out: RateClaim[] = [];
  if (limited(limit.rpm)) out.push({ key: counterKeys.modelRate(ownerId, accountId, model, 'rpm'), name: `${model} rpm`, kind: 'requests', windowMs: MINUTE, limit: limit.rpm });
  if (limited(limit.tpm)) out.push({ key: counterKeys.modelRate(ownerId, accountId, model, 'tpm'), name: `${model} tpm`, kind: 'tokens', windowMs: MINUTE, limit: limit.tpm });
  return out;
}

type RateRefusal = Extract<AdmissionRefusal, { kind: 'rate' }>;

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * What a 429 for a limit tells the client: `Retry-After` when this request would fit,
 * `x-ratelimit-reset` when the whole budget is free again, and which limit it ran into.
 */
export function refusalHeaders(r: RateRefusal, now: number): Record<string, string> {
  return {
    'retry-after': String(seconds(r.retryAt - now)),
    'x-ratelimit-limit': String(r.claim.limit),
    'x-ratelimit-remaining': String(Math.max(0, r.claim.limit - r.used)),
    'x-ratelimit-reset': String(seconds(r.resetAt - now)),
    'x-ratelimit-scope': r.claim.name,
  };
}

const PER: Record<number, string> = { [MINUTE]: 'minute', [HOUR]: 'hour', [DAY]: '24 hours' };

export function refusalMessage(r: RateRefusal, tokens: number): string {
  const c = r.claim;
  const per = PER[c.windowMs] ?? `${c.windowMs} ms`;
  if (c.kind === 'requests') return `Rate limit reached: ${c.name} allows ${c.limit} requests per ${per}`;
  return `Rate limit reached: ${c.name} allows ${c.limit} tokens per ${per}; this request reserves up to ${Math.min(tokens, c.limit)} (its input estimate plus max_tokens or the default output allowance)`;
}
