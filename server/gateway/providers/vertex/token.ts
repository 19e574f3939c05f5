import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import type { UpstreamClient } from '../../../adapters/upstream-http/client';
import { requestWhole } from '../../../adapters/upstream-http/whole';
import { UpstreamSetupError } from '../types';

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
/** A token is renewed this long before it expires, so no call starts with one about to lapse. */
const RENEW_BEFORE_MS = 5 * 60_000;
const ASSERTION_LIFETIME_S = 3600;

export interface ServiceAccount {
  /** Cache identity: the provider key's ID (a changed account or token URL is a new identity). */
  keyId: number;
  clientEmail: string;
  /** `{base_url}/token`: both the JWT audience and where it is exchanged. */
  tokenUrl: string;
  privateKeyPem: string;
}

interface CachedToken {
  token: string;
  /** Renewal time: shortly before expiry (at half the lifetime for short-lived tokens). */
  renewAt: number;
}

const b64url = (s: string) => Buffer.from(s).toString('base64url');

/** A service-account JWT (RS256), signed with node:crypto. */
export function serviceAccountAssertion(sa: Pick<ServiceAccount, 'clientEmail' | 'tokenUrl'>, key: KeyObject, nowMs = Date.now()): string {
  const iat = Math.floor(nowMs / 1000);
  const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }));
  const claims = b64url(JSON.stringify({ iss: sa.clientEmail, scope: CLOUD_PLATFORM_SCOPE, aud: sa.tokenUrl, iat, exp: iat + ASSERTION_LIFETIME_S }));
  const signature = sign('RSA-SHA256', Buffer.from(`${header}.${claims}`), key).toString('base64url');
  return `${header}.${claims}.${signature}`;
}

/**
 * Access tokens of cloud-platform keys, exchanged from a signed JWT at `{base_url}/token`
 * and cached until shortly before they expire; concurrent calls share one exchange.
 */
export class VertexTokens {
  private cache = new Map<string, CachedToken>();
  private inflight = new Map<string, Promise<string>>();
  private keys = new Map<string, KeyObject>();

  constructor(private readonly client: UpstreamClient, private readonly timeoutMs: number) {}

  async token(sa: ServiceAccount): Promise<string> {
    const id = `${sa.keyId}|${sa.clientEmail}|${sa.tokenUrl}`;
    const hit = this.cache.get(id);
    if (hit && hit.renewAt > Date.now()) return hit.token;
    let p = this.inflight.get(id);
    if (!p) {
      p = this.exchange(id, sa).finally(() => this.inflight.delete(id));
      this.inflight.set(id, p);
    }
    return p;
  }

  /** Forgets a key's token, e.g. after the upstream refused it. */
  forget(keyId: number): void {
    for (const id of this.cache.keys()) if (id.startsWith(`${keyId}|`)) this.cache.delete(id);
  }

  private signingKey(id: string, pem: string): KeyObject {
    let k = this.keys.get(id);
    if (!k) {
      try {
        k = createPrivateKey(pem);
      } catch {
        throw new UpstreamSetupError('auth', 'the service account private key cannot be read');
      }
      this.keys.set(id, k);
    }
    return k;
  }

  private async exchange(id: string, sa: ServiceAccount): Promise<string> {
    const assertion = serviceAccountAssertion(sa, this.signingKey(id, sa.privateKeyPem));
    const body = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString();
    let res;
    try {
      const u = new URL(sa.tokenUrl);
      res = await requestWhole(this.client, {
        origin: u.origin, path: u.pathname + u.search, method: 'POST', body: Buffer.from(body),
        headers: { accept: 'application/json' }, contentType: 'application/x-www-form-urlencoded',
        headersTimeout: this.timeoutMs, bodyTimeout: this.timeoutMs,
      }, 64 * 1024);
    } catch (err) {
      throw new UpstreamSetupError('retryable', `token exchange failed: ${(err as Error).message}`);
    }
    const text = res.body.toString('utf8');
    if (res.status >= 400) {
      const kind = res.status === 400 || res.status === 401 || res.status === 403 ? 'auth' : 'retryable';
      throw new UpstreamSetupError(kind, `token exchange answered ${res.status}: ${text.slice(0, 200)}`, res.status);
    }
    let parsed: { access_token?: unknown; expires_in?: unknown };
    try { parsed = JSON.parse(text); } catch { throw new UpstreamSetupError('retryable', 'token exchange answered with malformed JSON'); }
    if (typeof parsed.access_token !== 'string' || !parsed.access_token) throw new UpstreamSetupError('retryable', 'token exchange answered without access_token');
    const lifetime = typeof parsed.expires_in === 'number' && parsed.expires_in > 0 ? parsed.expires_in : 3600;
    const lifetimeMs = lifetime * 1000;
    const token = { token: parsed.access_token, renewAt: Date.now() + lifetimeMs - Math.min(RENEW_BEFORE_MS, lifetimeMs / 2) };
    this.cache.set(id, token);
    return token.token;
  }
}
