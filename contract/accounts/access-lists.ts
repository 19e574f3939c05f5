/**
 * The access-list entry grammar, its one home: an account's Resources, AllowIPs, AllowModels
 * and AllowLevels entries. Pure (no Node built-ins), so the server checks and matches lists with
 * it (server/domain/access/allow-lists.ts) and the console checks an entry as it is typed.
 *
 * A list is entries separated by white space or commas. `*` lifts the restriction, `-*` alone
 * allows nothing, an empty list is unrestricted, and `-entry` tokens are removal instructions of
 * an edit.
 */
export type AclField = 'Resources' | 'AllowIPs' | 'AllowModels' | 'AllowLevels';

export const listTokens = (raw: string): string[] => raw.split(/[\s,]+/).filter(Boolean);

const MODEL_PATTERN = /^[A-Za-z0-9._:/@*+][A-Za-z0-9._:/@*+-]{0,199}$/;
export const RESOURCE = /^\/[A-Za-z0-9._~\-/{}*]{0,199}$/;
const LEVEL = /^\d{1,4}$/;
export const MAX_LEVEL = 1000;

const OCTET = '(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = new RegExp(`^${OCTET}(\\.${OCTET}){3}$`);
const HEXTET = /^[0-9A-Fa-f]{1,4}$/;

/** RFC 4291 text form: eight groups, one `::` for a run of zeros, an IPv4 tail for the last two. */
function isIpv6(s: string): boolean {
  const halves = s.split('::');
  if (halves.length > 2) return false;
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  const all = [...head, ...tail];
  // The IPv4 tail may only close the address, never stand before a `::`.
  const closes = halves.length === 1 || tail.length > 0;
  let count = 0;
  for (let i = 0; i < all.length; i++) {
    if (closes && i === all.length - 1 && IPV4.test(all[i])) count += 2;
    else if (HEXTET.test(all[i])) count += 1;
    else return false;
  }
  return halves.length === 2 ? count <= 7 : count === 8;
}

/** 4 or 6 for an IP address in text form (no zone), 0 otherwise: node:net's isIP, without Node. */
export function ipFamily(address: string): 0 | 4 | 6 {
  if (IPV4.test(address)) return 4;
  return address.includes(':') && isIpv6(address) ? 6 : 0;
}

/** An AllowIPs entry: an address (a range of one) or a CIDR range. */
export interface IpRange {
  type: 'ipv4' | 'ipv6';
  address: string;
  bits: number;
  /** 32 or 128: an entry without `/bits` is one address. */
  max: number;
}

/** `10.0.0.0/8`, `192.0.2.7`, `2001:db8::/32`; null when the entry is none of these. */
export function ipRange(entry: string): IpRange | null {
  const slash = entry.indexOf('/');
  const address = slash < 0 ? entry : entry.slice(0, slash);
  const family = ipFamily(address);
  if (!family) return null;
  const max = family === 6 ? 128 : 32;
  let bits = max;
  if (slash >= 0) {
    const prefix = entry.slice(slash + 1);
    if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) return null;
    bits = Number(prefix);
  }
  return { type: family === 6 ? 'ipv6' : 'ipv4', address, bits, max };
}

/** One entry of `field` in its stored form, or null when it is not one. */
export function canonicalEntry(field: AclField, entry: string): string | null {
  switch (field) {
    case 'AllowIPs': return ipRange(entry) ? entry : null;
    case 'AllowModels': return MODEL_PATTERN.test(entry) ? entry : null;
    case 'AllowLevels': return LEVEL.test(entry) && Number(entry) <= MAX_LEVEL ? String(Number(entry)) : null;
    case 'Resources': return RESOURCE.test(entry) ? entry : null;
  }
}
