import type { AccountCreate, AccountPatch } from '../../../contract/accounts/schemas';
import { OWNER_ONLY_FIELDS } from '../../../contract/accounts/fields';
import type { Caller } from '../../../contract/services';
import { badRequest, forbidden } from '../../../contract/errors';
import type { accounts } from '../../adapters/storage/schema';
import type { AccountRow } from '../../state/accounts/account-cache';
import { MapperError, parseLevelMapper, parseModelMapper } from '../../domain/mapping/mappers';
import { applyModelLimitsChange, type ModelLimitMap } from '../../domain/mapping/model-limits';
import { assertWithin, editList, type AclField } from '../../domain/access/allow-lists';

export type AccountValues = Partial<typeof accounts.$inferInsert>;
type Input = AccountCreate | AccountPatch;

const RATE_WINDOWS = [['RPM', 'rpm'], ['RPH', 'rph'], ['RPD', 'rpd'], ['TPM', 'tpm'], ['TPH', 'tph'], ['TPD', 'tpd']] as const;
const ACL = [['Resources', 'resources'], ['AllowIPs', 'allowIps'], ['AllowModels', 'allowModels'], ['AllowLevels', 'allowLevels']] as const;

/** What a new child takes over from its parent when the request does not say otherwise. */
export function inheritedFrom(p: AccountRow): AccountValues {
  return {
    level: p.level, gear: p.gear, tier: p.tier, factor: p.factor, rates: p.rates,
    dailyLimit: p.dailyLimit, hardLimit: p.hardLimit, softLimit: p.softLimit, userLimit: p.userLimit, autoQuota: p.autoQuota,
    rpm: p.rpm, rph: p.rph, rpd: p.rpd, tpm: p.tpm, tph: p.tph, tpd: p.tpd,
    resources: p.resources, allowIps: p.allowIps, allowModels: p.allowModels, allowLevels: p.allowLevels,
    modelMapper: p.modelMapper, levelMapper: p.levelMapper, modelLimits: p.modelLimits,
  };
}

/** Level, Role, Factor, LevelMapper (and Gear, Tier) decide routing and billing: Owners only. */
export function assertOwnerOnly(caller: Caller, input: Input): void {
  const sent = OWNER_ONLY_FIELDS.filter((f) => input[f] !== undefined);
  if (sent.length > 0 && !caller.isOwner) throw forbidden(`Only an Owner may set ${sent.join(', ')}`);
}

const SELF_NEVER = ['Status', 'Suspended', 'CreditGranted', 'Days', 'Rates', 'Role'] as const;
const SELF_OWNERS_ONLY = [
  'DailyLimit', 'HardLimit', 'SoftLimit', 'UserLimit', 'AutoQuota', 'RPM', 'RPH', 'RPD', 'TPM', 'TPH', 'TPD',
  'Resources', 'AllowIPs', 'AllowModels', 'AllowLevels', 'ModelMapper', 'ModelLimits', 'Factor', 'Level', 'LevelMapper', 'Gear', 'Tier',
] as const;

/**
 * A self-update never changes Status, Suspended, credit, Rates or Role; an account below an
 * Owner may change only its profile, the rest being its ancestors' to set.
 */
export function assertSelfUpdate(caller: Caller, patch: AccountPatch): void {
  const never = SELF_NEVER.filter((f) => patch[f] !== undefined);
  if (never.length) throw forbidden(`A self-update cannot change ${never.join(', ')}`);
  if (caller.isOwner) return;
  const parental = SELF_OWNERS_ONLY.filter((f) => patch[f] !== undefined);
  if (parental.length) throw forbidden(`${parental.join(', ')} of your account are set by your parent`);
}

const mapperCheck = (fn: () => unknown) => {
  try { fn(); } catch (err) {
    if (err instanceof MapperError) throw badRequest(err.message, 'invalid_mapper');
    throw err;
  }
};

/**
 * Turns the request's fields into column values. `base` holds the values edits apply to (the
 * current row on update, the inherited ones on create). On create a sent ACL or ModelLimits
 * replaces the inherited value; on update it is an edit of the current one. `parent` bounds
 * Rates, rate limits and ACLs (null for Root and Owners, who have no funded parent).
 */
export function columnValues(input: Input, base: AccountValues, parent: AccountRow | null, mode: 'create' | 'update'): AccountValues {
  const v: AccountValues = {};
  if (input.Alias !== undefined) v.alias = input.Alias;
  if (input.BillingEmail !== undefined) v.billingEmail = input.BillingEmail.toLowerCase();
  if (input.QRCode !== undefined) v.qrCode = input.QRCode;
  if (input.Status !== undefined) v.status = input.Status;
  if (input.Suspended !== undefined) v.suspended = input.Suspended;
  if (input.AutoQuota !== undefined) v.autoQuota = input.AutoQuota;
  if (input.UserLimit !== undefined) v.userLimit = input.UserLimit;
  if (input.DailyLimit !== undefined) v.dailyLimit = input.DailyLimit;
  if (input.HardLimit !== undefined) v.hardLimit = input.HardLimit;
  if (input.SoftLimit !== undefined) v.softLimit = input.SoftLimit;
  if (input.HardLimit !== undefined || input.SoftLimit !== undefined) {
    const hard = v.hardLimit !== undefined ? v.hardLimit : base.hardLimit ?? null;
    const soft = v.softLimit !== undefined ? v.softLimit : base.softLimit ?? null;
    if (hard !== null && soft !== null && soft > hard) throw badRequest(`SoftLimit: ${soft} exceeds HardLimit ${hard}`);
  }

  if (input.Rates !== undefined) {
    if (parent?.role === 'user' && input.Rates < parent.rates) {
      throw badRequest(`Rates: must be at least the parent's Rates (${parent.rates})`, 'rates_below_parent');
    }
    v.rates = input.Rates;
  }

  for (const [field, column] of RATE_WINDOWS) {
    const sent = input[field];
    if (sent === undefined) continue;
    // The proxy reads 0 as "no limit"; storing null says so plainly.
    const value = sent === 0 ? null : sent;
    const cap = parent?.[column];
    if (cap && (value === null || value > cap)) {
      throw badRequest(`${field}: may not exceed the parent's ${field} (${cap})`, 'wider_than_parent');
    }
    v[column] = value;
  }

  for (const [field, column] of ACL) {
    const sent = input[field];
    if (sent === undefined) continue;
    const value = editList(field as AclField, mode === 'create' ? '' : String(base[column] ?? ''), sent);
    if (parent) assertWithin(field as AclField, value, parent[column]);
    v[column] = value;
  }

  if (input.ModelMapper !== undefined) {
    mapperCheck(() => parseModelMapper(input.ModelMapper!, 'ModelMapper'));
    v.modelMapper = input.ModelMapper.trim();
  }
  if (input.LevelMapper !== undefined) {
    mapperCheck(() => parseLevelMapper(input.LevelMapper!, 'LevelMapper'));
    v.levelMapper = input.LevelMapper.trim();
  }
  if (input.ModelLimits !== undefined) {
    const current = (mode === 'create' ? {} : base.modelLimits ?? {}) as ModelLimitMap;
    let next: ModelLimitMap = {};
    mapperCheck(() => { next = applyModelLimitsChange(current, input.ModelLimits); });
    v.modelLimits = next;
  }

  if (input.Level !== undefined) v.level = input.Level;
  if (input.Gear !== undefined) v.gear = input.Gear;
  if (input.Tier !== undefined) v.tier = input.Tier;
  if (input.Factor !== undefined) v.factor = input.Factor;
  return v;
}
