import type { PooledKey } from '../../state/provider-keys/key-pool';

/** What the scrubber needs of a provider key: its SecretKey and where it points. */
export type ScrubKey = Pick<PooledKey, 'provider' | 'config' | 'secret'>;
/** The headers of the upstream request: an access token exchanged for the key is as secret as the key. */
export type SentHeaders = Readonly<Record<string, string>>;

const KEY = '[key]';
const UPSTREAM = '[upstream]';

/**
 * Shorter forms of a secret are not looked for literally: they would match ordinary words.
 * A SecretKey is at least 20 characters, so this only skips odd encodings of odd keys.
 */
const MIN_SECRET = 8;

/** Headers whose values are credentials. */
const CREDENTIAL_HEADERS = ['authorization', 'x-api-key', 'api-key', 'x-goog-api-key', 'proxy-authorization', 'x-amz-security-token'];

// None of these classes takes `"` or `\`: a replacement inside a JSON string leaves it valid JSON.
/** A URL, without the punctuation that ends the sentence it sits in. */
const URL_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>\\]*[^\s"'<>\\.,;:!?)]/gi;
// An IPv6 literal has a colon inside its brackets: `messages[0]` in a provider's message is not an address.
const ADDRESS = /\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b|\[[0-9a-fA-F]*:[0-9a-fA-F:]*\](?::\d+)?/g;
/** `Bearer <token>`: a token has a digit somewhere, which keeps prose such as "Bearer authentication" whole. */
const AUTH_SCHEME = /\b(Bearer|Basic|Token)(\s+)(?=[A-Za-z._~+/=-]*\d)[A-Za-z0-9._~+/=-]{8,}/gi;
/** `x-api-key: …`, `"api_key": "…"`, `authorization=…`: the value after a credential's name. */
const NAMED = /\b(x-api-key|x-goog-api-key|api[-_]?key|authorization|access[-_]token|client[-_]secret|password)(\\?["']?\s*[:=]\s*\\?["']?)((?:bearer|basic|token)\s+)?[^\s"',;&\\]+/gi;
/** Provider key shapes (`sk-…`, `sk-proj-****abcd` as providers echo them masked, `AIza…`, `gsk_…`). */
const KEY_LIKE = /\b(?:sk|pk|rk|gsk|xai|hf|key|AIza)(?=[-_A-Za-z]*[0-9*])[-_A-Za-z0-9*]{8,}|\b(?:AKIA|ASIA)[A-Z0-9]{12,}\b|\bSignature=[0-9a-f]{16,}/g;

interface Needles {
  /** The secret's literal forms and the upstream's hosts, longest first; null when there are none. */
  re: RegExp | null;
  /** The secret's forms, lower-cased: a match among them is a key, any other an upstream host. */
  secrets: Set<string>;
}

/** PooledKey objects are rebuilt on every pool reload, so a key's needles are never stale. */
const cache = new WeakMap<ScrubKey, Needles>();

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The secret as an upstream may echo it: as sent, URL-encoded, JSON-escaped, base64. */
function secretForms(secret: string): string[] {
  const b64 = Buffer.from(secret).toString('base64');
  return [secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1), b64, b64.replace(/=+$/, ''), Buffer.from(secret).toString('base64url')]
    .filter((s) => s.length >= MIN_SECRET);
}

/** The Provider URL's host (with and without its port), and the base URL's of a cloud-platform key. */
function hostsOf(key: ScrubKey): string[] {
  const out: string[] = [];
  for (const u of [key.provider, key.config.base_url]) {
    if (typeof u !== 'string') continue;
    try {
      const url = new URL(u);
      out.push(url.host.toLowerCase(), url.hostname.toLowerCase());
    } catch { /* not a URL: nothing to remove */ }
  }
  return out.filter(Boolean);
}

function needlesOf(key: ScrubKey): Needles {
  let n = cache.get(key);
  if (!n) {
    const secrets = key.secret ? secretForms(key.secret) : [];
    const all = [...new Set([...secrets, ...hostsOf(key)])].sort((a, b) => b.length - a.length);
    n = { re: all.length ? new RegExp(all.map(escape).join('|'), 'gi') : null, secrets: new Set(secrets.map((s) => s.toLowerCase())) };
    cache.set(key, n);
  }
  return n;
}

/**
 * Upstream text with the Owner's secrets and infrastructure taken out, whatever its length:
 * the key's SecretKey (also URL-encoded, JSON-escaped or in base64) and any credential sent
 * with the request become `[key]`, the Provider URL's host `[upstream]`, every URL `[url]`,
 * every IP address `[address]`, and the value of anything that looks like a credential
 * (`Bearer …`, `x-api-key: …`, `sk-…`) `[key]`. An upstream's error body goes through it
 * before it reaches a client; `scrub` makes a log line of the same.
 */
export function scrubText(text: string, key: ScrubKey, sent?: SentHeaders): string {
  const n = needlesOf(key);
  let out = n.re ? text.replace(n.re, (m) => (n.secrets.has(m.toLowerCase()) ? KEY : UPSTREAM)) : text;
  if (sent) {
    for (const name of CREDENTIAL_HEADERS) {
      const v = sent[name]?.replace(/^(?:Bearer|Basic)\s+/i, '');
      if (v && v.length >= MIN_SECRET && v !== key.secret) out = out.split(v).join(KEY);
    }
  }
  return out
    .replace(URL_TEXT, '[url]')
    .replace(AUTH_SCHEME, `$1$2${KEY}`)
    .replace(NAMED, `$1$2$3${KEY}`)
    .replace(KEY_LIKE, KEY)
    .replace(ADDRESS, '[address]');
}

/**
 * An upstream failure's cause as a log line or DisabledKeys may hold it: `scrubText` on one
 * line, at most `max` characters (a connection error's message names the host it tried).
 */
export function scrub(reason: string, key: ScrubKey, max = 300, sent?: SentHeaders): string {
  return scrubText(reason, key, sent).replace(/\s+/g, ' ').trim().slice(0, max).trimEnd();
}

/** The headers of an upstream error answer relayed to the client, each value scrubbed. */
export function scrubHeaders<H extends Record<string, string | string[]>>(headers: H, key: ScrubKey, sent?: SentHeaders): H {
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const v = headers[name];
    out[name] = Array.isArray(v) ? v.map((s) => scrubText(s, key, sent)) : scrubText(v as string, key, sent);
  }
  return out as H;
}
