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

/** The first account key (`sk-Xvs…`) anywhere in a response body: its exact place is not fixed by the spec. */
function findAccountKey(v: unknown): string | null {
  if (typeof v === 'string') return /^sk-Xvs[A-Za-z0-9]+$/.test(v) ? v : null;
  if (v && typeof v === 'object') {
    for (const x of Object.values(v)) {
      const k = findAccountKey(x);
      if (k) return k;
    }
  }
  return null;
}

/**
 * Adds one provider key on Level 1 pointing at the bench upstream, then a subaccount with
 * credit (so authentication, limits and billing are all on the measured path). Without the
 * accounts API yet, Root's own key is used.
 */
export async function configureSwitchyard(url: string, rootKey: string, upstream: string): Promise<BenchAccount> {
  const key = await call(url, rootKey, 'POST', '/x-keys', { Name: 'bench-upstream', Level: 1, Provider: upstream, SecretKey: UPSTREAM_SECRET, Status: true });
  if (key.status !== 201 && key.status !== 200) throw new Error(`POST /x-keys answered ${key.status}: ${key.text.slice(0, 300)}`);
  const user = await call(url, rootKey, 'POST', '/x-users', { Name: 'benchuser', Email: 'bench@example.com', CreditGranted: 1000 });
  if (user.status === 404) return { key: rootKey, who: "Root's key (POST /x-users does not exist)" };
  // A broken accounts API must not hide the proxy's figures: measure with Root, and say so.
  const found = user.status >= 200 && user.status < 300 ? findAccountKey(user.body) : null;
  if (!found) return { key: rootKey, who: `Root's key: WARNING POST /x-users answered ${user.status} ${user.text.slice(0, 200)}` };
  return { key: found, who: 'a subaccount with 1000 credit' };
}

export { UPSTREAM_SECRET };
