/** Configures a fresh Switchyard over its admin API for the proxy benchmark. */

const UPSTREAM_SECRET = 'sk-bench-upstream-0123456789abcdef';

export interface BenchAccount {
  /** The account key the load is sent with. */
  key: string;
  /** Who that is, for the report. */
  who: string;
}

async function call(url: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown; text: string }> {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try { parsed = JSON.parse(text); } catch { /* keep text */ }
  return { status: res.status, body: parsed, text };
}

/**
 * Adds one provider key on Level 1 pointing at the bench upstream, then a subaccount with
 * credit and generous rate limits, so authentication, the limit counters, the balance check
 * and billing are all on the measured path.
 */
export async function configureSwitchyard(url: string, rootKey: string, upstream: string): Promise<BenchAccount> {
  const key = await call(url, rootKey, 'POST', '/x-keys', { Name: 'bench-upstream', Level: 1, Provider: upstream, SecretKey: UPSTREAM_SECRET, Status: true });
  if (key.status !== 201) throw new Error(`POST /x-keys answered ${key.status}: ${key.text.slice(0, 300)}`);
  const user = await call(url, rootKey, 'POST', '/x-users', {
    Name: 'benchuser', Email: 'bench@example.com', CreditGranted: 1000,
    RPM: 10_000_000, RPH: 100_000_000, TPM: 1_000_000_000, TPD: 2_000_000_000,
  });
  const found = user.status === 201 ? (user.body as { User?: { SecretKey?: string } }).User?.SecretKey : undefined;
  if (!found) throw new Error(`POST /x-users answered ${user.status}: ${user.text.slice(0, 300)}`);
  return { key: found, who: 'a subaccount with 1000 credit and RPM/RPH/TPM/TPD limits' };
}

/**
 * The translated path: an Anthropic-kind key on the same upstream at Level 2 and an account
 * routed there, so an OpenAI-format client's calls are translated to Anthropic's format and back.
 */
export function configureTranslated(url: string, rootKey: string, upstream: string): Promise<BenchAccount> {
  return configureKind(url, rootKey, upstream, { level: 2, name: 'anthropic', config: { provider_type: 'anthropic' } });
}

/**
 * One key of another kind (its `config`) on the bench upstream at its own Level, and an account
 * routed there with the same credit and limits as configureSwitchyard's.
 */
export async function configureKind(url: string, rootKey: string, upstream: string, k: { level: number; name: string; config: Record<string, unknown> }): Promise<BenchAccount> {
  const key = await call(url, rootKey, 'POST', '/x-keys', { Name: `bench-${k.name}`, Level: k.level, Provider: upstream, SecretKey: UPSTREAM_SECRET, Status: true, config: k.config });
  if (key.status !== 201) throw new Error(`POST /x-keys answered ${key.status}: ${key.text.slice(0, 300)}`);
  const user = await call(url, rootKey, 'POST', '/x-users', {
    Name: `bench${k.name}`, Email: `bench-${k.name}@example.com`, CreditGranted: 1000, Level: k.level,
    RPM: 10_000_000, RPH: 100_000_000, TPM: 1_000_000_000, TPD: 2_000_000_000,
  });
  const found = user.status === 201 ? (user.body as { User?: { SecretKey?: string } }).User?.SecretKey : undefined;
  if (!found) throw new Error(`POST /x-users answered ${user.status}: ${user.text.slice(0, 300)}`);
  return { key: found, who: `a Level ${k.level} subaccount whose key is ${String(k.config.provider_type)}` };
}

export { UPSTREAM_SECRET };
