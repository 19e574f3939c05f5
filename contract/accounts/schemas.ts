import { z } from 'zod';
import { isoTime, pageQuery } from '../common';
import { CreditCard } from '../dashboard/schemas';
import { ModelLimits } from '../config/schemas';
import { AccountEmail, AccountName, CreditGrantedCreate, CreditGrantedUpdate, managedFields, ownerOnlyFields } from './fields';

const optional = <T extends Record<string, z.ZodType>>(shape: T) =>
  Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, v.optional()])) as { [K in keyof T]: z.ZodOptional<T[K]> };

export const AccountCreate = z.strictObject({
  Name: AccountName,
  Email: AccountEmail,
  CreditGranted: CreditGrantedCreate,
  ...optional(managedFields),
  ...optional(ownerOnlyFields),
}).meta({ id: 'AccountCreate', description: 'A new direct child of the caller. Omitted ACL, limits, mappers, Rates, Level, Gear, Tier and Factor are inherited from the caller (an Owner starts from the defaults).' });

export const AccountPatch = z.strictObject({
  Name: AccountName.optional(),
  Email: AccountEmail.optional(),
  CreditGranted: CreditGrantedUpdate.optional(),
  ...optional(managedFields),
  ...optional(ownerOnlyFields),
}).meta({ id: 'AccountUpdate', description: 'Any fields of the subaccount table. A self-update may change only the profile (Root and Owners also their own limits, ACL and mappers), never Status, Suspended, credit or Rates.' });

export const Account = z.object({
  ID: z.int(),
  ParentID: z.int().nullable(),
  OwnerID: z.int().meta({ description: 'The tenant: ID of the Owner whose provider keys and prices apply' }),
  DNA: z.string().meta({ description: 'DNA path: the IDs from Root down to and including this account, e.g. `.1.42.`' }),
  Name: z.string(),
  Email: z.string(),
  Alias: z.string(),
  BillingEmail: z.string(),
  QRCode: z.string(),
  Role: z.enum(['root', 'owner', 'user']),
  Level: z.int(),
  Gear: z.int(),
  Tier: z.int(),
  Factor: z.number(),
  Rates: z.number(),
  Status: z.boolean(),
  Suspended: z.boolean(),
  Balance: z.number().meta({ description: 'Spendable credit (USD): the unexpired cards, less the overdraft and usage recorded but not yet deducted; negative while the account owes' }),
  CreditBalance: z.array(CreditCard).meta({ description: 'Unexpired credit cards, earliest expiry first' }),
  DailyLimit: z.number().nullable(),
  HardLimit: z.number().nullable(),
  SoftLimit: z.number().nullable(),
  UserLimit: z.int().nullable(),
  AutoQuota: z.boolean(),
  RPM: z.int().nullable(),
  RPH: z.int().nullable(),
  RPD: z.int().nullable(),
  TPM: z.int().nullable(),
  TPH: z.int().nullable(),
  TPD: z.int().nullable(),
  Resources: z.string(),
  AllowIPs: z.string(),
  AllowModels: z.string(),
  AllowLevels: z.string(),
  ModelMapper: z.string(),
  LevelMapper: z.string(),
  ModelLimits,
  Children: z.int().meta({ description: 'Number of direct subaccounts' }),
  KeyHint: z.string().meta({ description: 'Last 4 characters of the account\'s API key; the key itself is shown only once' }),
  CreatedAt: isoTime,
  UpdatedAt: isoTime,
}).meta({ id: 'Account' });

export const NewAccount = Account.extend({
  SecretKey: z.string().meta({ description: 'The new account\'s API key. Shown only in this answer; store it now.' }),
}).meta({ id: 'NewAccount' });

export const CreditTransfer = z.object({
  Kind: z.enum(['grant', 'take_back', 'refund']),
  FromID: z.int().nullable().meta({ description: 'Account whose cards were debited; null when Root or an Owner created the credit' }),
  ToID: z.int().nullable().meta({ description: 'Account that received a card; null when the credit went back to Root or an Owner' }),
  Debited: z.number().meta({ description: 'USD taken from FromID\'s cards (0 when FromID is null)' }),
  Credited: z.number().meta({ description: 'USD put on ToID\'s new card (0 when ToID is null)' }),
  Requested: z.number().optional().meta({ description: 'The CreditGranted asked for, present only when the gateway adjusted it (a new user account is raised to UserMinBalance): Credited is what was granted' }),
}).meta({ id: 'CreditTransfer', description: 'Credit moved by the request: converted between the two accounts\' Rates' });

export const AccountAddResult = z.object({
  Action: z.literal('add'),
  User: NewAccount,
  Transfer: CreditTransfer.nullable(),
}).meta({ id: 'AccountAddResult' });

export const AccountResult = z.object({
  Action: z.enum(['update', 'delete']),
  User: Account,
  Transfer: CreditTransfer.nullable().meta({ description: 'Credit granted, taken back or refunded by this request; null when none moved' }),
}).meta({ id: 'AccountResult' });

export const ACCOUNT_ORDERS = ['id', '-id', 'name', '-name', 'email', '-email', 'level', '-level', 'dna', '-dna', 'created', '-created'] as const;
const order = z.enum(ACCOUNT_ORDERS).optional()
  .meta({ description: 'Sort field, `-` for descending: id (default), name, email, level, dna (tree order), created' });

export const AccountListQuery = z.strictObject({
  id: z.coerce.number().int().min(1).max(2_147_483_647).optional(),
  name: z.string().min(1).max(63).optional().meta({ description: 'Part of the name, any case' }),
  email: z.string().min(1).max(254).optional().meta({ description: 'Part of the email, any case' }),
  level: z.coerce.number().int().min(0).max(1000).optional(),
  dna: z.string().max(1000).optional().meta({ description: 'Only accounts in the subtree at this DNA path (`.1.42.`)' }),
  ...pageQuery,
  order,
});

export const AccountSelectQuery = z.strictObject({
  identifier: z.string().min(1).max(1000).meta({
    description: 'A numeric ID, a username, an email (contains `@`), a DNA path (starts with `.`; on /x-dna: that account and its whole subtree) or a filter: `L{n}` Level, `G{n}` Gear, `R{n}` Role (R0 user, R1 owner), `T{n}` Tier, `F{n}` Factor',
  }),
  ...pageQuery,
  order,
});

export const AccountIdentifierPath = z.object({
  identifier: z.string().min(1).max(1000).meta({ description: 'A numeric ID, a username, an email or a DNA path of one account' }),
});

export const SelfRotate = z.strictObject({
  confirm: z.string().max(100).meta({ description: 'The current UTC date followed by `-ROTATE-SELF`, e.g. `2026-11-22-ROTATE-SELF`' }),
  key: z.string().max(200).optional().meta({ description: 'The new key (`sk-Xvs` + 45 letters and digits); generated when absent or not of that form' }),
}).meta({ id: 'SelfRotate' });

export const SelfRotateResult = z.object({
  success: z.literal(true),
  message: z.string(),
  rotate: z.object({
    action: z.literal('rotate_self'),
    id: z.int(),
    name: z.string(),
    key: z.string().meta({ description: 'The new API key; the old one stopped working' }),
    timestamp: isoTime,
  }),
}).meta({ id: 'SelfRotateResult' });

export const UserStatus = z.object({
  object: z.literal('user_status'),
  id: z.int(),
  dna: z.string(),
  name: z.string(),
  email: z.string(),
  alias: z.string(),
  manage: z.boolean().meta({ description: 'Whether manage endpoints are allowed: Root and Owners unless suspended; others when not suspended and balance ≥ user_api_balance' }),
  admin: z.boolean().meta({ description: 'Whether the account is an Owner (Root included)' }),
  balance: z.number().meta({ description: 'Spendable credit (USD)' }),
  user_api_balance: z.number().meta({ description: 'Balance a non-Owner account needs for manage permission' }),
  user_min_balance: z.number().meta({ description: 'Balance an account needs to call the AI proxy, and the least CreditGranted of a new account' }),
  suspended: z.boolean(),
}).meta({ id: 'UserStatus' });

export const NoQuery = z.strictObject({});

export type AccountCreate = z.infer<typeof AccountCreate>;
export type AccountPatch = z.infer<typeof AccountPatch>;
export type Account = z.infer<typeof Account>;
export type NewAccount = z.infer<typeof NewAccount>;
export type CreditTransfer = z.infer<typeof CreditTransfer>;
export type AccountAddResult = z.infer<typeof AccountAddResult>;
export type AccountResult = z.infer<typeof AccountResult>;
export type AccountListQuery = z.infer<typeof AccountListQuery>;
export type AccountOrder = (typeof ACCOUNT_ORDERS)[number];
export type SelfRotate = z.infer<typeof SelfRotate>;
export type SelfRotateResult = z.infer<typeof SelfRotateResult>;
export type UserStatus = z.infer<typeof UserStatus>;
