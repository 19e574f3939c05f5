import { z } from 'zod';
import { ModelLimits } from '../config/schemas';

/**
 * The subaccount fields an API client sets, with the types and units Switchyard gives them.
 * Shared by create and update; update makes every field optional and lets limits be null.
 */

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
/** `L2`, `G0`, `R1`, `T3`, `F2` are path filters, so no account may be named like one. */
export const RESERVED_NAME = /^[LGRTF]\d+(\.\d+)?$/i;

export const AccountName = z.string()
  .min(4, 'must be 4 to 63 characters')
  .max(63, 'must be 4 to 63 characters')
  .regex(NAME, 'may hold only letters, digits, "_", "-" and ".", and must start with a letter or digit')
  .refine((s) => /[A-Za-z]/.test(s), 'must contain a letter')
  .refine((s) => !RESERVED_NAME.test(s), 'looks like an L/G/R/T/F path filter (e.g. L2) and cannot be a name')
  .meta({ description: 'Username, unique within the tenant: 4-63 letters, digits, `_`, `-`, `.`; at least one letter; not all digits; not shaped like a path filter (`L2`)' });

export const AccountEmail = z.email('must be a valid email address').max(254)
  .meta({ description: 'Email address, unique within the tenant (stored in lower case)' });

const usd = (description: string) => z.number().meta({ description });
const nullableUsd = (description: string) => z.number().min(0).max(1e12).nullable()
  .meta({ description: `${description} (USD); null means no limit` });
const perWindow = (description: string) => z.int().min(0).max(2_147_483_647).nullable()
  .meta({ description: `${description}; null or 0 means no limit. May not exceed the parent's limit.` });
const aclList = (description: string) => z.string().max(16_384).meta({ description });

/** Fields any manager may set on a subaccount, create and update alike (limits are nullable). */
export const managedFields = {
  Alias: z.string().max(100).meta({ description: 'Display name; defaults to Name' }),
  BillingEmail: z.union([z.literal(''), AccountEmail]).meta({ description: 'Where bills go (may be shared between accounts); empty for none' }),
  QRCode: z.string().max(4096).meta({ description: 'Payment QR code (a URL or its text content)' }),
  Status: z.boolean().meta({ description: 'Enabled; a disabled account\'s key is refused with 401' }),
  Suspended: z.boolean().meta({ description: 'Suspended: no manage permission and no proxy calls (403)' }),
  Days: z.int().min(1).max(3650).meta({ description: 'Validity in days of the credit card created by CreditGranted (default 180)' }),
  Rates: z.number().gt(0).max(1000).meta({ description: 'Price multiplier of the account (default: the parent\'s); below a funded parent\'s Rates is refused. Changing it rescales the account\'s cards.' }),
  DailyLimit: nullableUsd('Credit the account may use per UTC day'),
  HardLimit: nullableUsd('Monthly hard cap: usage beyond it is refused'),
  SoftLimit: nullableUsd('Monthly soft cap (alert); at most HardLimit'),
  UserLimit: z.int().min(0).max(1_000_000).nullable().meta({ description: 'Most direct subaccounts the account may create; null means no limit' }),
  AutoQuota: z.boolean().meta({ description: 'Automatic quota adjustment flag (stored for the quota logic)' }),
  RPM: perWindow('Requests per minute'),
  RPH: perWindow('Requests per hour'),
  RPD: perWindow('Requests per UTC day'),
  TPM: perWindow('Tokens per minute'),
  TPH: perWindow('Tokens per hour'),
  TPD: perWindow('Tokens per UTC day'),
  Resources: aclList('Allowed path prefixes (`/v1/chat/completions /v1/embeddings`). Edits: `x` adds, `-x` removes, `*` (or empty) lifts the restriction, `-*` allows nothing'),
  AllowIPs: aclList('Allowed IPs and CIDRs (`10.0.0.0/8 192.0.2.7`). Edits as Resources; `-*` allows only loopback'),
  AllowModels: aclList('Allowed model names and `*` patterns (`gpt-4o* claude-*`). Edits as Resources'),
  AllowLevels: aclList('Allowed Levels (`1 2 5`). Edits as Resources'),
  ModelMapper: z.string().max(65_536).meta({ description: '`pattern=model, …` applied before the Owner\'s MODEL_MAPPER; empty clears it' }),
  ModelLimits: z.union([ModelLimits, z.string().max(131_072)])
    .meta({ description: 'Per-model `{"gpt-4o":{"rpm":30,"tpm":90000}}` merged into the current limits, or `*`/`=` to clear them all, or `-<model>` to remove one' }),
};

/** Fields only an Owner (Root included) may set: they decide routing and billing. */
export const ownerOnlyFields = {
  Level: z.int().min(0).max(1000).meta({ description: 'Default Level (key pool) of the account; Owner only' }),
  Role: z.enum(['user', 'owner']).meta({ description: '`owner` makes a tenant: only Root, only for its direct children, only with TENANCY=multi; Owner only' }),
  Factor: z.number().gt(0).max(1000).meta({ description: 'Billing coefficient multiplied with Rates; Owner only' }),
  LevelMapper: z.string().max(65_536).meta({ description: '`pattern=level, …` of the account; Owner only' }),
  Gear: z.int().min(0).max(1000).meta({ description: 'Routing gear (filter `G{n}`); Owner only' }),
  Tier: z.int().min(0).max(1000).meta({ description: 'Account tier (filter `T{n}`); Owner only' }),
};

export const OWNER_ONLY_FIELDS = Object.keys(ownerOnlyFields) as (keyof typeof ownerOnlyFields)[];

/** Money every grant is rounded to: micro-USD, the resolution usage is billed in. */
export const CREDIT_DECIMALS = 6;

export const CreditGrantedCreate = usd('Credit (USD) on the new account\'s first card, rounded to 6 decimals; at most 1,000,000,000. A user account below UserMinBalance is raised to it (the answer\'s Transfer says what was granted and what was asked). A non-Owner parent pays CreditGranted / Rates × its own Rates, and is refused 402 when it has less.')
  .min(0).max(1e9);
export const CreditGrantedUpdate = usd('Positive: a new card of this amount (the caller pays when it is not an Owner). Negative: takes that much back (earliest-expiring cards first) and refunds the target\'s funded parent. Rounded to 6 decimals.')
  .min(-1e9).max(1e9);
