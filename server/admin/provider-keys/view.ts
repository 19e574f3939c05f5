import type { ProviderKey } from '../../../contract/keys/schemas';
import type { providerKeys } from '../../adapters/storage/schema';
import { familyOfHost } from '../../domain/providers/families';

export type ProviderKeyRow = typeof providerKeys.$inferSelect;

/** The API view of a stored key: no SecretKey, no private key, only a 4-character hint. */
export function toProviderKey(row: ProviderKeyRow, sleepingUntil: number | null): ProviderKey {
  const config = { ...row.config } as Record<string, unknown>;
  if (config.provider_type === 'vertex') config.private_key_set = row.configSecretCipher !== null;
  if (config.provider_type === 'bedrock') config.session_token_set = row.configSecretCipher !== null;
  return {
    ID: row.id,
    Name: row.name,
    Level: row.level,
    Provider: row.provider,
    Status: row.status,
    config: config as ProviderKey['config'],
    SecretHint: row.secretHint,
    Sleeping: sleepingUntil !== null,
    SleepUntil: sleepingUntil !== null ? new Date(sleepingUntil).toISOString() : null,
    DisabledReason: row.disabledReason,
    CreatedAt: row.createdAt.toISOString(),
    UpdatedAt: row.updatedAt.toISOString(),
  };
}

/** `https://api.openai.com/` → `https://api.openai.com`; the host is kept for `/x-keys/{host}`. */
export function normalizeProvider(url: string): { provider: string; host: string } {
  const u = new URL(url);
  return { provider: url.replace(/\/+$/, ''), host: u.host.toLowerCase() };
}

/** The LEVEL_MAPPER pattern of the provider family at `host`, added when its first key is. */
export function modelFamilyOf(host: string): string | undefined {
  return familyOfHost(host)?.levelPattern;
}
