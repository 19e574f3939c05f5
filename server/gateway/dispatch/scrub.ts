import type { PooledKey } from '../../state/provider-keys/key-pool';

const ADDRESS = /\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b|\[[0-9a-fA-F:]+\](?::\d+)?/g;
const URL_TEXT = /\bhttps?:\/\/[^\s"'<>]+/g;
const KEY_LIKE = /\b(sk|pk|rk|key|AIza)[-_A-Za-z0-9*]{8,}/g;

const hostsOf = (key: Pick<PooledKey, 'provider' | 'config'>): string[] => {
  const out: string[] = [];
  for (const u of [key.provider, key.config.base_url]) {
    if (typeof u !== 'string') continue;
    try {
      const url = new URL(u);
      out.push(url.host, url.hostname);
    } catch { /* not a URL: nothing to remove */ }
  }
  // Longest first, so `host:port` goes before `host`.
  return [...new Set(out.filter(Boolean))].sort((a, b) => b.length - a.length);
};

/**
 * An upstream failure's cause as the log may hold it: the key named by its ID elsewhere on
 * the line, so its host, any URL or address, and anything key-like are taken out of the text
 * (a connection error's message names the host it tried).
 */
export function scrub(reason: string, key: Pick<PooledKey, 'provider' | 'config' | 'secret'>): string {
  let out = key.secret ? reason.split(key.secret).join('[key]') : reason;
  out = out.replace(URL_TEXT, '[url]');
  for (const h of hostsOf(key)) out = out.split(h).join('[upstream]');
  out = out.replace(ADDRESS, '[address]').replace(KEY_LIKE, '[key]');
  return out.replace(/\s+/g, ' ').trim().slice(0, 300);
}
