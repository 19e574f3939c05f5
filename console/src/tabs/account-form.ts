import type { Account, AccountCreate, AccountPatch } from '../../../contract/accounts/schemas';
import type { Row } from '../ui/KeyValueRows';
import { t } from '../i18n';

export const ACL_FIELDS = ['Resources', 'AllowIPs', 'AllowModels', 'AllowLevels'] as const;
export type AclField = (typeof ACL_FIELDS)[number];
/** `inherit` only on create: the field is left out and the new account takes the caller's list. */
export type AclMode = 'inherit' | 'all' | 'only' | 'none';
export interface Acl { mode: AclMode; entries: string[] }

export const LIMIT_FIELDS = ['DailyLimit', 'HardLimit', 'SoftLimit', 'UserLimit', 'RPM', 'RPH', 'RPD', 'TPM', 'TPH', 'TPD'] as const;
export type LimitField = (typeof LIMIT_FIELDS)[number];
const MONEY: readonly LimitField[] = ['DailyLimit', 'HardLimit', 'SoftLimit'];
export const isMoneyLimit = (f: LimitField) => MONEY.includes(f);

export interface ModelLimitRow { model: string; rpm: string; tpm: string }

/** Every field group of the account form as the inputs hold it (numbers as typed text). */
export interface AccountForm {
  Name: string;
  Email: string;
  Alias: string;
  BillingEmail: string;
  QRCode: string;
  Status: boolean;
  Suspended: boolean;
  AutoQuota: boolean;
  limits: Record<LimitField, string>;
  acl: Record<AclField, Acl>;
  Rates: string;
  Factor: string;
  Level: string;
  Gear: string;
  Tier: string;
  Role: 'user' | 'owner';
  ModelMapper: Row[];
  LevelMapper: Row[];
  ModelLimits: ModelLimitRow[];
}

const tokens = (s: string) => s.split(/[\s,]+/).filter(Boolean);

/** A stored list: empty (or `*`) allows everything, `-*` nothing, else the entries. */
export function aclOf(stored: string): Acl {
  const t = tokens(stored).filter((x) => !(x.startsWith('-') && x !== '-*'));
  if (t.length === 0 || t.includes('*')) return { mode: 'all', entries: [] };
  if (t.length === 1 && t[0] === '-*') return { mode: 'none', entries: [] };
  return { mode: 'only', entries: t };
}

/** The edit that sets the list to exactly this: `*` first lifts the current entries. */
export function aclEdit(acl: Acl): string | undefined {
  if (acl.mode === 'inherit') return undefined;
  if (acl.mode === 'all') return '*';
  if (acl.mode === 'none' || acl.entries.length === 0) return '-*';
  return ['*', ...acl.entries].join(' ');
}

const sameAcl = (a: Acl, b: Acl) => aclEdit(a) === aclEdit(b);

/** `pattern=value, pattern=value` as rows. */
export function mapperRows(stored: string): Row[] {
  return stored.split(',').map((p) => p.trim()).filter(Boolean).map((p) => {
    const i = p.indexOf('=');
    return i < 0 ? { key: p, value: '' } : { key: p.slice(0, i).trim(), value: p.slice(i + 1).trim() };
  });
}

export const mapperText = (rows: Row[]) => rows.filter((r) => r.key.trim()).map((r) => `${r.key.trim()}=${r.value.trim()}`).join(', ');

const num = (v: number | null | undefined) => (v === null || v === undefined || v === 0 ? '' : String(v));

export function blankForm(): AccountForm {
  return {
    Name: '', Email: '', Alias: '', BillingEmail: '', QRCode: '', Status: true, Suspended: false, AutoQuota: false,
    limits: Object.fromEntries(LIMIT_FIELDS.map((f) => [f, ''])) as Record<LimitField, string>,
    acl: Object.fromEntries(ACL_FIELDS.map((f): [AclField, Acl] => [f, { mode: 'inherit', entries: [] }])) as Record<AclField, Acl>,
    Rates: '', Factor: '', Level: '', Gear: '', Tier: '', Role: 'user', ModelMapper: [], LevelMapper: [], ModelLimits: [],
  };
}

export function formOf(a: Account): AccountForm {
  return {
    Name: a.Name, Email: a.Email, Alias: a.Alias, BillingEmail: a.BillingEmail, QRCode: a.QRCode,
    Status: a.Status, Suspended: a.Suspended, AutoQuota: a.AutoQuota,
    limits: Object.fromEntries(LIMIT_FIELDS.map((f) => [f, num(a[f])])) as Record<LimitField, string>,
    acl: Object.fromEntries(ACL_FIELDS.map((f) => [f, aclOf(a[f])])) as Record<AclField, Acl>,
    Rates: String(a.Rates), Factor: String(a.Factor), Level: String(a.Level), Gear: String(a.Gear), Tier: String(a.Tier),
    Role: a.Role === 'owner' ? 'owner' : 'user',
    ModelMapper: mapperRows(a.ModelMapper), LevelMapper: mapperRows(a.LevelMapper),
    ModelLimits: Object.entries(a.ModelLimits).map(([model, l]) => ({ model, rpm: num(l.rpm), tpm: num(l.tpm) })),
  };
}

/** Problems the browser can see before sending: field → message. */
export function formProblems(f: AccountForm, creating: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  if (creating || f.Name) {
    if (f.Name.trim().length < 4) out.Name = t('accounts.problems.name');
  }
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(f.Email.trim())) out.Email = t('accounts.problems.email');
  if (f.BillingEmail.trim() && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(f.BillingEmail.trim())) out.BillingEmail = t('accounts.problems.billingEmail');
  for (const l of LIMIT_FIELDS) {
    const v = f.limits[l].trim();
    if (!v) continue;
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0 || (!isMoneyLimit(l) && !Number.isInteger(n))) out[l] = t(isMoneyLimit(l) ? 'accounts.problems.money' : 'accounts.problems.whole', { field: l });
  }
  for (const r of f.ModelLimits) {
    if (!r.model.trim()) out.ModelLimits = t('accounts.problems.modelLimitModel');
    for (const v of [r.rpm, r.tpm]) if (v.trim() && !/^\d+$/.test(v.trim())) out.ModelLimits = t('accounts.problems.modelLimitWhole');
  }
  for (const r of f.LevelMapper) if (r.key.trim() && !/^\d+$/.test(r.value.trim())) out.LevelMapper = t('accounts.problems.levelMapper');
  return out;
}

const limitValue = (f: LimitField, v: string): number | null => (v.trim() === '' ? null : Number(v));
const modelLimits = (rows: ModelLimitRow[]) => Object.fromEntries(rows.filter((r) => r.model.trim()).map((r) => [r.model.trim(), {
  ...(r.rpm.trim() ? { rpm: Number(r.rpm) } : {}), ...(r.tpm.trim() ? { tpm: Number(r.tpm) } : {}),
}]));

/** The fields that differ from `base` (every field set by the user when creating). */
function changes(f: AccountForm, base: AccountForm, creating: boolean, ownerFields: boolean): Partial<AccountPatch> {
  const p: Record<string, unknown> = {};
  const text = ['Name', 'Email', 'Alias', 'BillingEmail', 'QRCode'] as const;
  for (const k of text) if (f[k].trim() !== base[k]) p[k] = f[k].trim();
  for (const k of ['Status', 'Suspended', 'AutoQuota'] as const) if (f[k] !== base[k]) p[k] = f[k];
  for (const l of LIMIT_FIELDS) if (f.limits[l].trim() !== base.limits[l]) p[l] = limitValue(l, f.limits[l]);
  for (const a of ACL_FIELDS) if (!sameAcl(f.acl[a], base.acl[a]) && aclEdit(f.acl[a]) !== undefined) p[a] = aclEdit(f.acl[a]);
  if (f.Rates.trim() && f.Rates.trim() !== base.Rates) p.Rates = Number(f.Rates);
  if (mapperText(f.ModelMapper) !== mapperText(base.ModelMapper)) p.ModelMapper = mapperText(f.ModelMapper);
  if (JSON.stringify(modelLimits(f.ModelLimits)) !== JSON.stringify(modelLimits(base.ModelLimits))) p.ModelLimits = modelLimits(f.ModelLimits);
  if (ownerFields) {
    for (const k of ['Factor', 'Level', 'Gear', 'Tier'] as const) if (f[k].trim() && f[k].trim() !== base[k]) p[k] = Number(f[k]);
    if (mapperText(f.LevelMapper) !== mapperText(base.LevelMapper)) p.LevelMapper = mapperText(f.LevelMapper);
    if (f.Role !== base.Role && (!creating || f.Role === 'owner')) p.Role = f.Role;
  }
  return p as Partial<AccountPatch>;
}

/**
 * The update for an edited account. ModelLimits merges into the stored limits, so a model
 * removed from the rows needs the limits cleared (`*`) first: `clearModelLimits` says so.
 */
export function accountPatch(f: AccountForm, base: AccountForm, ownerFields: boolean): { patch: AccountPatch; clearModelLimits: boolean } {
  const patch = changes(f, base, false, ownerFields) as AccountPatch;
  const kept = new Set(f.ModelLimits.map((r) => r.model.trim()));
  const clearModelLimits = patch.ModelLimits !== undefined && base.ModelLimits.some((r) => !kept.has(r.model));
  if (patch.ModelLimits !== undefined && Object.keys(patch.ModelLimits as object).length === 0) patch.ModelLimits = '*';
  return { patch, clearModelLimits: clearModelLimits && patch.ModelLimits !== '*' };
}

export function accountCreate(f: AccountForm, credit: string, days: string, ownerFields: boolean): AccountCreate {
  const p = changes(f, blankForm(), true, ownerFields);
  delete p.Status;
  if (!f.Status) p.Status = false;
  return {
    ...p,
    Name: f.Name.trim(), Email: f.Email.trim(), CreditGranted: Number(credit || 0),
    ...(days.trim() ? { Days: Number(days) } : {}),
  } as AccountCreate;
}

/** Accounts below the caller in tree order, with their depth under it, narrowed to `query` (and the ancestors of each match). */
export function treeRows(accounts: Account[], callerDna: string, query: string): { account: Account; depth: number; match: boolean }[] {
  const base = callerDna.split('.').filter(Boolean).length;
  const sorted = [...accounts].sort((a, b) => dnaKey(a.DNA).localeCompare(dnaKey(b.DNA)));
  const q = query.trim().toLowerCase();
  const matches = (a: Account) => !q || [a.Name, a.Alias, a.Email, a.BillingEmail, `#${a.ID}`, String(a.ID)].some((s) => s.toLowerCase().includes(q));
  const shown = new Set<string>();
  for (const a of sorted) {
    if (!matches(a)) continue;
    // The path to a match stays visible, so the tree still reads as a tree.
    const ids = a.DNA.split('.').filter(Boolean);
    for (let i = 1; i <= ids.length; i++) shown.add(`.${ids.slice(0, i).join('.')}.`);
  }
  return sorted.filter((a) => shown.has(a.DNA)).map((a) => ({ account: a, depth: a.DNA.split('.').filter(Boolean).length - base - 1, match: !!q && matches(a) }));
}

/** Tree order: IDs along the path compared as fixed-width numbers. */
const dnaKey = (dna: string) => dna.split('.').filter(Boolean).map((id) => id.padStart(10, '0')).join('.');
