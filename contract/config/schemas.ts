import { z } from 'zod';
import { isoTime } from '../common';

/** The keys `/x-config` accepts; every value is a string. */
export const CONFIG_KEYS = [
  'MODEL_MAPPER', 'MODEL_FAILOVER', 'LEVEL_MAPPER', 'SWITCH_OVER', 'RESOURCES', 'MODEL_LIMITS',
  'PRICING', 'UNPRICED_MODEL_POLICY', 'DEFAULT_OUTPUT_LIMIT', 'UNSUPPORTED_TOOLS', 'XAI_MAIL', 'EMAIL_SMTP', 'EMAIL_PORT', 'EMAIL_AUTH', 'EMAIL_PASS',
] as const;
export type ConfigKey = (typeof CONFIG_KEYS)[number];
/** EMAIL_PASS is write-only. */
export const READABLE_CONFIG_KEYS = CONFIG_KEYS.filter((k) => k !== 'EMAIL_PASS') as Exclude<ConfigKey, 'EMAIL_PASS'>[];

const value = (max: number) => z.string({ error: (issue) => (issue.code === 'invalid_type' ? 'must be a string' : undefined) }).max(max);
const valueLimits: Record<ConfigKey, number> = {
  MODEL_MAPPER: 65_536, MODEL_FAILOVER: 65_536, LEVEL_MAPPER: 65_536, SWITCH_OVER: 4096, RESOURCES: 16_384,
  MODEL_LIMITS: 131_072, PRICING: 262_144 /* the 128 KiB byte limit is checked with a precise message */, UNPRICED_MODEL_POLICY: 100, DEFAULT_OUTPUT_LIMIT: 20, UNSUPPORTED_TOOLS: 10, XAI_MAIL: 320, EMAIL_SMTP: 255, EMAIL_PORT: 5, EMAIL_AUTH: 320, EMAIL_PASS: 1024,
};

export const ConfigUpdate = z.strictObject(
  Object.fromEntries(CONFIG_KEYS.map((k) => [k, value(valueLimits[k]).optional()])) as Record<ConfigKey, z.ZodOptional<z.ZodString>>,
).meta({ id: 'ConfigUpdate', description: 'String values for any of the configuration keys. An empty string removes the key.' });

export const ConfigValues = z.object(
  Object.fromEntries(READABLE_CONFIG_KEYS.map((k) => [k, z.string()])) as Record<(typeof READABLE_CONFIG_KEYS)[number], z.ZodString>,
).meta({ id: 'ConfigValues', description: 'Every readable key; an unset key is an empty string. EMAIL_PASS is never returned.' });

export const ConfigView = z.object({ success: z.literal(true), oid: z.int(), configs: ConfigValues }).meta({ id: 'ConfigView' });
export const ConfigUpdateResult = z.object({ success: z.literal(true), oid: z.int(), updated: z.array(z.string()), removed: z.array(z.string()) }).meta({ id: 'ConfigUpdateResult' });
export const ConfigDelete = z.strictObject({
  keys: z.array(z.enum(CONFIG_KEYS)).min(1).max(CONFIG_KEYS.length).meta({ description: 'Keys to delete (JSON body `{"keys":[...]}` or repeated query parameter)' }),
});
export const ConfigDeleteResult = z.object({ success: z.literal(true), oid: z.int(), deleted: z.array(z.string()) }).meta({ id: 'ConfigDeleteResult' });

export const TestMailRequest = z.strictObject({
  To: z.email('must be a valid email address').max(320).optional().meta({ description: "Where to send it; default the Owner's address (XAI_MAIL, else the Owner account's BillingEmail or Email)" }),
}).meta({ id: 'TestMailRequest' });
export const TestMailResult = z.object({
  success: z.literal(true),
  to: z.array(z.string()).meta({ description: 'The recipients of the test mail' }),
  accepted: z.array(z.string()).meta({ description: 'The recipients the mail server accepted' }),
}).meta({ id: 'TestMailResult' });

export const ModelLimit = z.strictObject({ rpm: z.int().min(0).optional(), tpm: z.int().min(0).optional() }).meta({ id: 'ModelLimit' });
export const ModelLimits = z.record(z.string().min(1).max(200), ModelLimit).meta({ id: 'ModelLimits' });

const KeyState = z.object({ ID: z.int(), Name: z.string(), Level: z.int() });
export const KeyHealthState = z.enum(['healthy', 'failing', 'open', 'half-open']).meta({
  id: 'KeyHealthState',
  description: '`failing`: recent consecutive failures, still in rotation; `open`: out of rotation until `Until`; `half-open`: the cool-down is over and the next request probes it; `healthy`: answering again',
});
export const KeyHealthEntry = KeyState.extend({
  Model: z.string().nullable().meta({ description: 'The model this entry concerns (5xx answers for one model), null for the whole key (connection errors, timeouts)' }),
  State: KeyHealthState,
  Since: isoTime.meta({ description: 'When the key entered this state' }),
  Until: isoTime.nullable().meta({ description: 'End of the cool-down of an open key' }),
  Failures: z.int().meta({ description: 'Consecutive failures' }),
  LastError: z.string().nullable().meta({ description: 'The last failure, without hosts, addresses or keys' }),
  LastErrorAt: isoTime.nullable(),
}).meta({ id: 'KeyHealthEntry' });
export const ConfView = z.object({
  Resources: z.array(z.string()).meta({ description: 'Allowed path prefixes; empty means every resource' }),
  LevelMapper: z.record(z.string(), z.int()),
  ModelMapper: z.record(z.string(), z.string()),
  ModelFailover: z.record(z.string(), z.array(z.string())),
  ModelLimits,
  SwitchOver: z.record(z.string(), z.int()),
  SleepingKeys: z.array(KeyState.extend({ Until: isoTime })),
  DisabledKeys: z.array(KeyState.extend({ Reason: z.string(), At: isoTime.nullable() })),
  UnpricedModelPolicy: z.object({
    Policy: z.enum(['refuse', 'bill']),
    InputText: z.number().nullable().meta({ description: 'Fallback price, USD per million input tokens (bill only)' }),
    OutputText: z.number().nullable().meta({ description: 'Fallback price, USD per million output tokens (bill only)' }),
  }).meta({ id: 'UnpricedModelPolicy', description: 'What the proxy does with a model no price table knows (UNPRICED_MODEL_POLICY): refuse it with 403 model_not_priced (the default), or bill it at the fallback price' }),
  UnpricedModels: z.array(z.object({ Model: z.string(), FirstAt: isoTime, LastAt: isoTime }).meta({ id: 'UnpricedModel' }))
    .meta({ description: 'Models without a price that were requested (refused or billed at the fallback), latest first, while they stay unpriced; at most 100' }),
  KeyHealth: z.array(KeyHealthEntry).meta({ description: "Every enabled key (or model on a key) that failed since this instance started, with its circuit's state; a key not listed is healthy" }),
  DefaultOutputLimit: z.int().meta({ description: 'Output tokens admission reserves for a call that sets no limit, on a model the catalogue gives no output limit (DEFAULT_OUTPUT_LIMIT; 131072 unless set)' }),
  UserMinBalance: z.number(),
  UserApiBalance: z.number(),
}).meta({ id: 'OwnerConfView' });

export const ConfUpdate = z.strictObject({
  LoadKeys: z.boolean().optional().meta({ description: 'Reload provider keys into the routing snapshot' }),
  LogEnable: z.boolean().optional().meta({ description: 'Record proxied request details in the operation log' }),
  SaveCache: z.boolean().optional().meta({ description: 'Flush buffered usage records to the database now' }),
  Resources: z.string().max(16_384).optional(),
  LevelMapper: z.string().max(65_536).optional(),
  ModelMapper: z.string().max(65_536).optional(),
  ModelFailover: z.string().max(65_536).optional(),
  DelKeys: z.boolean().optional().meta({ description: 'Delete the keys the gateway disabled after upstream 401/403' }),
  ModelLimits: z.union([ModelLimits, z.string().max(131_072)]).optional().meta({ description: 'Object merged into the limits, or `*`/`=` to clear all, or `-<model>` to remove one' }),
  DefaultOutputLimit: z.string().max(20).optional().meta({ description: 'Output tokens reserved for a call without max_tokens on a model the catalogue gives no output limit (DEFAULT_OUTPUT_LIMIT): a whole number from 1 to 10000000; empty restores 131072' }),
  UnpricedModelPolicy: z.string().max(100).optional().meta({ description: '`refuse` (the default; empty restores it) or `bill:<InputText>,<OutputText>` in USD per million tokens: what the proxy does with a model no price table knows' }),
}).meta({ id: 'OwnerConfUpdate' });

export const ConfUpdateResult = z.object({
  success: z.literal(true),
  applied: z.array(z.string()),
  cascaded: z.int().meta({ description: 'Descendant accounts whose mappers or limits were updated' }),
  reloadedKeys: z.int().optional(),
  deletedKeys: z.int().optional(),
  flushedRecords: z.int().optional(),
}).meta({ id: 'OwnerConfUpdateResult' });

export type ConfigUpdate = z.infer<typeof ConfigUpdate>;
export type ConfigView = z.infer<typeof ConfigView>;
export type ConfigUpdateResult = z.infer<typeof ConfigUpdateResult>;
export type ConfigDeleteResult = z.infer<typeof ConfigDeleteResult>;
export type ConfView = z.infer<typeof ConfView>;
export type ConfUpdate = z.infer<typeof ConfUpdate>;
export type ConfUpdateResult = z.infer<typeof ConfUpdateResult>;
export type ModelLimits = z.infer<typeof ModelLimits>;
export type TestMailRequest = z.infer<typeof TestMailRequest>;
export type TestMailResult = z.infer<typeof TestMailResult>;
