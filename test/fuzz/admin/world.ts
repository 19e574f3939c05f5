import { generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import type { Hints } from './schema-arbitrary';

/**
 * What the fuzzer knows about the gateway it fuzzes: its keys and the accounts, provider keys
 * and ciphertexts made at set-up, so generated paths and bodies hit real rows as well as
 * missing ones. Set-up is deterministic (fresh database, fixed names), so a seed replays.
 */
export interface World {
  rootKey: string;
  /** A funded subaccount with manage permission. */
  subKey: string;
  /** Accounts the fuzzer must not disable, delete or rewrite (Root and the subaccount it acts as). */
  protectedIdentifiers: Set<string>;
  /** IDs, names, emails and DNA paths of the set-up accounts, protected ones included. */
  identifiers: string[];
  /** Identifiers of accounts that writes may freely change or delete. */
  victims: string[];
  keyIds: string[];
  ciphertexts: string[];
}

/** Names made of letters and digits that satisfy the account name rules (4–63, a letter, not `L2`). */
const accountName = fc.tuple(fc.constantFrom('fz', 'acct', 'user', 'team'), fc.stringMatching(/^[a-z0-9]{2,10}$/)).map(([a, b]) => `${a}${b}`);
const email = fc.tuple(fc.stringMatching(/^[a-z][a-z0-9.]{0,10}[a-z0-9]$/), fc.constantFrom('fuzz.test', 'example.com', 'mail.fuzz.test')).map(([a, b]) => `${a.replace(/\.\.+/g, '.')}@${b}`);

let pem: string | undefined;
/** A real RSA key, so a Vertex-style config can pass validation; made once per process. */
function privateKeyPem(): string {
  pem ??= generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return pem;
}

/** Valid-looking values by property name: the schema says `string`, the service wants a mapper. */
export function hints(): Hints {
  const json = (v: unknown) => fc.constant(JSON.stringify(v));
  return {
    Name: accountName,
    Email: email,
    BillingEmail: fc.oneof(email, fc.constant('')),
    XAI_MAIL: email,
    EMAIL_AUTH: email,
    client_email: fc.constant('svc@fuzz-project.iam.gserviceaccount.com'),
    Provider: fc.constantFrom('https://api.openai.com', 'https://api.anthropic.com/v1', 'http://127.0.0.1:9', 'https://fuzz.example.test/openai', 'https://generativelanguage.googleapis.com'),
    base_url: fc.constantFrom('https://us-central1-aiplatform.googleapis.com', 'http://127.0.0.1:9'),
    project_id: fc.constantFrom('fuzz-project', 'p-1'),
    private_key: fc.constant(null).map(() => privateKeyPem()),
    SecretKey: fc.stringMatching(/^[A-Za-z0-9]{20,40}$/).map((s) => `sk-fuzz-${s}`),
    CreditGranted: fc.oneof(fc.integer({ min: 2, max: 100 }), fc.double({ min: 2, max: 1000, noNaN: true })),
    Level: fc.integer({ min: 0, max: 5 }),
    Resources: fc.constantFrom('/v1/chat/completions', '/v1/chat/completions,/v1/embeddings', '/v1/*', ''),
    RESOURCES: fc.constantFrom('/v1/chat/completions', '/v1/*', ''),
    AllowIPs: fc.constantFrom('127.0.0.1', '127.0.0.1,::1', '10.0.0.0/8', ''),
    AllowModels: fc.constantFrom('gpt-4o', 'gpt-4o,claude-*', ''),
    AllowLevels: fc.constantFrom('1', '1,2', ''),
    ModelMapper: fc.constantFrom('gpt-4=gpt-4o', 'gpt-4=gpt-4o, claude-*=claude-haiku-4-5', ''),
    MODEL_MAPPER: fc.constantFrom('gpt-4=gpt-4o', 'fast=gpt-4o-mini, claude-*=claude-haiku-4-5', ''),
    LevelMapper: fc.constantFrom('gpt-*=1', 'gpt-*=1, claude-*=2', ''),
    LEVEL_MAPPER: fc.constantFrom('gpt-*=1', 'gpt-*=1, claude-*=2', ''),
    ModelFailover: fc.constantFrom('gpt-4o=gpt-4o-mini', 'gpt-4o=gpt-4o-mini|gpt-4.1-mini', ''),
    MODEL_FAILOVER: fc.constantFrom('gpt-4o=gpt-4o-mini|gpt-4.1-mini', ''),
    SWITCH_OVER: fc.constantFrom('1=2', '1=2,2=3', ''),
    MODEL_LIMITS: fc.oneof(json({ 'gpt-4o': { rpm: 60, tpm: 10000 } }), json({ 'claude-*': { rpm: 5 } }), fc.constant('')),
    ModelLimits: fc.oneof(fc.constant({ 'gpt-4o': { rpm: 60 } }), fc.constantFrom('*', '=', '-gpt-4o')),
    PRICING: fc.oneof(json({ ChatPricing: { 'gpt-4o': { InputText: 2.5, OutputText: 10 } } }), fc.constant('')),
    EMAIL_SMTP: fc.constantFrom('smtp.fuzz.test', ''),
    EMAIL_PORT: fc.constantFrom('587', '465', '1', '65535', ''),
    EMAIL_PASS: fc.constantFrom('fuzz-pass', ''),
    deployments: fc.constant({ 'gpt-4o': 'gpt4o-deploy' }),
    title: fc.string({ minLength: 1, maxLength: 30 }),
    content: fc.string({ minLength: 1, maxLength: 60 }),
    // fixed-date: never today's `<date>-ROTATE-SELF` (1970 never comes back): a rotated Root key would end the run.
    confirm: fc.constantFrom('ROTATE-SELF', '1970-01-01-ROTATE-SELF', 'yes'),
  };
}

/** An identifier's canonical forms, to recognise a protected account however it is written. */
export function identifierForms(id: number, name: string, mail: string, dna: string): string[] {
  return [String(id), name, mail, dna].map((s) => s.toLowerCase());
}

/** True when a path identifier (decoded) may name a protected account. */
export function isProtected(world: World, raw: string): boolean {
  let decoded = raw;
  try { decoded = decodeURIComponent(raw); } catch { /* broken encodings name nothing */ }
  const v = decoded.trim().toLowerCase();
  if (world.protectedIdentifiers.has(v)) return true;
  const n = /^\+?0*(\d+)(\.0*)?$/.exec(v);
  if (n && world.protectedIdentifiers.has(String(Number(n[1])))) return true;
  // A DNA path above or at a protected account would take it with its subtree.
  if (v.startsWith('.')) for (const p of world.protectedIdentifiers) if (p.startsWith('.') && (p.startsWith(v) || v.startsWith(p))) return true;
  return false;
}
