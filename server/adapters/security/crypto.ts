import { createCipheriv, createDecipheriv, hash, hkdfSync, randomBytes, randomInt } from 'node:crypto';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const KEY_PREFIX = 'sk-Xvs';
export const KEY_PATTERN = /^sk-Xvs[A-Za-z0-9]{45}$/;

/** A new account key: `sk-Xvs` + 45 letters and digits (51 characters), the reference format. */
export function generateAccountKey(): string {
  let out = KEY_PREFIX;
  for (let i = 0; i < 45; i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return out;
}

/** Keys are long random strings, so one SHA-256 is enough; a slow KDF would only slow every request. */
/** Every request authenticates through this: the one-shot hash is a third of createHash's cost. */
export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export function hint(secret: string): string {
  return secret.slice(-4);
}

/**
 * AES-256-GCM with keys derived from MASTER_KEY by HKDF, one per purpose (and per Owner for
 * the helpers), so that `/x-dkey` can never open a stored provider secret.
 */
export class Vault {
  private readonly keys = new Map<string, Buffer>();
  constructor(private readonly masterKey: string) {}

  private key(purpose: string): Buffer {
    let k = this.keys.get(purpose);
    if (!k) {
      k = Buffer.from(hkdfSync('sha256', this.masterKey, 'switchyard', purpose, 32));
      this.keys.set(purpose, k);
    }
    return k;
  }

  encrypt(purpose: string, plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key(purpose), iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return 'v1.' + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** Returns null for anything that is not a ciphertext of this purpose. */
  decrypt(purpose: string, sealed: string): string | null {
    if (!sealed.startsWith('v1.')) return null;
    const raw = Buffer.from(sealed.slice(3), 'base64url');
    if (raw.length < 28) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key(purpose), raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}

export const PURPOSE = {
  providerSecret: 'provider-secret',
  configSecret: 'owner-config-secret',
  helper: (ownerId: number) => `helper:${ownerId}`,
} as const;
