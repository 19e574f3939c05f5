export type Endpoint = 'chat' | 'responses' | 'embeddings' | 'messages';

/** The proxy's routes and their aliases (server/gateway/proxy.ts PROXY_ROUTES). */
export const ROUTES: readonly { path: string; endpoint: Endpoint }[] = [
  { path: '/v1/chat/completions', endpoint: 'chat' },
  { path: '/chat/completions', endpoint: 'chat' },
  { path: '/v1/responses', endpoint: 'responses' },
  { path: '/responses', endpoint: 'responses' },
  { path: '/v1/embeddings', endpoint: 'embeddings' },
  { path: '/embeddings', endpoint: 'embeddings' },
  { path: '/v1/messages', endpoint: 'messages' },
  { path: '/messages', endpoint: 'messages' },
];

/** Who calls: each account type the proxy must tell apart, and callers with no usable key. */
export type Caller = 'funded' | 'funded-x-api-key' | 'root' | 'none' | 'bad' | 'malformed' | 'disabled' | 'suspended' | 'poor';

export interface Keys {
  root: string;
  funded: string;
  disabled: string;
  suspended: string;
  poor: string;
}

/** The headers that carry the caller's key, and whether the proxy must let the call through. */
export function credentialHeaders(keys: Keys, who: Caller): { headers: [string, string][]; admitted: boolean } {
  switch (who) {
    case 'funded': return { headers: [['authorization', `Bearer ${keys.funded}`]], admitted: true };
    case 'funded-x-api-key': return { headers: [['x-api-key', keys.funded]], admitted: true };
    case 'root': return { headers: [['authorization', `Bearer ${keys.root}`]], admitted: true };
    case 'none': return { headers: [], admitted: false };
    case 'bad': return { headers: [['authorization', `Bearer sk-Xvs${'1'.repeat(45)}`]], admitted: false };
    case 'malformed': return { headers: [['authorization', `Token ${keys.funded}`]], admitted: false };
    case 'disabled': return { headers: [['authorization', `Bearer ${keys.disabled}`]], admitted: false };
    case 'suspended': return { headers: [['authorization', `Bearer ${keys.suspended}`]], admitted: false };
    case 'poor': return { headers: [['authorization', `Bearer ${keys.poor}`]], admitted: false };
  }
}
