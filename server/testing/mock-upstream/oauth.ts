import { createPublicKey, randomBytes, verify, type KeyObject } from 'node:crypto';

/** How the token endpoint answers one service account. */
export interface TokenBehaviour {
  /** Refuse the exchange with this status (Google's `{"error","error_description"}` body). */
  status?: number;
  /** Apply to the next N exchanges only. */
  times?: number;
  delayMs?: number;
  /** Lifetime of the issued token in seconds (default 3600). */
  expiresIn?: number;
}

export interface TokenAnswer {
  status: number;
  body: Record<string, unknown>;
  /** The service account (JWT `iss`) when the assertion could be read. */
  clientEmail: string | null;
}

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

const refuse = (error: string, description: string, clientEmail: string | null = null, status = 400): TokenAnswer =>
  ({ status, body: { error, error_description: description }, clientEmail });

function decodePart(part: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return v && typeof v === 'object' && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

/**
 * The OAuth2 JWT-bearer exchange of a cloud platform: checks the assertion's shape and claims
 * (and its RS256 signature when the service account's public key was registered), then issues
 * an opaque access token that the chat endpoint accepts until it expires or is revoked.
 */
export class TokenIssuer {
  private trusted = new Map<string, KeyObject>();
  private issued = new Map<string, { clientEmail: string; expiresAt: number }>();
  /** Successful and refused exchanges alike. */
  requests = 0;

  trust(clientEmail: string, publicKeyPem: string): void {
    this.trusted.set(clientEmail, createPublicKey(publicKeyPem));
  }

  /** The service account a live token was issued to, or null for an unknown or expired token. */
  holder(token: string): string | null {
    const t = this.issued.get(token);
    if (!t) return null;
    if (t.expiresAt <= Date.now()) {
      this.issued.delete(token);
      return null;
    }
    return t.clientEmail;
  }

  /** Invalidates every issued token (the upstream then answers 401 to them). */
  revoke(): void {
    this.issued.clear();
  }

  /** Zeroes the counter only: issued tokens stay valid (a proxy's cached token must keep working across tests). */
  resetCount(): void {
    this.requests = 0;
  }

  /** Reads the assertion's issuer without judging it, so a behaviour can be looked up first. */
  static issuerOf(form: string): string | null {
    const assertion = new URLSearchParams(form).get('assertion') ?? '';
    const claims = decodePart(assertion.split('.')[1] ?? '');
    return claims && typeof claims.iss === 'string' ? claims.iss : null;
  }

  exchange(form: string, requestPath: string, expiresIn = 3600): TokenAnswer {
    this.requests += 1;
    const params = new URLSearchParams(form);
    if (params.get('grant_type') !== JWT_BEARER) return refuse('unsupported_grant_type', `grant_type must be ${JWT_BEARER}`);
    const assertion = params.get('assertion');
    if (!assertion) return refuse('invalid_request', 'assertion is required');
    const parts = assertion.split('.');
    if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]+$/.test(p))) return refuse('invalid_grant', 'assertion is not a compact JWS');
    const header = decodePart(parts[0]);
    const claims = decodePart(parts[1]);
    if (!header || !claims) return refuse('invalid_grant', 'assertion header or claims are not JSON');
    const iss = typeof claims.iss === 'string' ? claims.iss : null;
    if (header.alg !== 'RS256') return refuse('invalid_grant', 'assertion must be signed with RS256', iss);
    if (!iss) return refuse('invalid_grant', 'iss claim is required');
    if (typeof claims.scope !== 'string' || !claims.scope) return refuse('invalid_scope', 'scope claim is required', iss);
    if (typeof claims.aud !== 'string') return refuse('invalid_grant', 'aud claim is required', iss);
    let audPath: string;
    try { audPath = new URL(claims.aud).pathname; } catch { return refuse('invalid_grant', 'aud claim must be the token URL', iss); }
    if (audPath !== requestPath) return refuse('invalid_grant', `aud claim must be this token URL (${requestPath})`, iss);
    const now = Math.floor(Date.now() / 1000);
    if (typeof claims.exp !== 'number' || claims.exp <= now) return refuse('invalid_grant', 'assertion has expired or lacks exp', iss);
    if (typeof claims.iat === 'number' && claims.iat > now + 60) return refuse('invalid_grant', 'iat is in the future', iss);
    if (typeof claims.iat === 'number' && claims.exp - claims.iat > 3600) return refuse('invalid_grant', 'assertion lifetime exceeds one hour', iss);
    const key = this.trusted.get(iss);
    if (key) {
      const signed = Buffer.from(`${parts[0]}.${parts[1]}`);
      if (!verify('RSA-SHA256', signed, key, Buffer.from(parts[2], 'base64url'))) return refuse('invalid_grant', 'Invalid JWT Signature.', iss);
    }
    const token = `ya29.mock-${randomBytes(18).toString('base64url')}`;
    this.issued.set(token, { clientEmail: iss, expiresAt: Date.now() + expiresIn * 1000 });
    return { status: 200, body: { access_token: token, expires_in: expiresIn, token_type: 'Bearer' }, clientEmail: iss };
  }
}
