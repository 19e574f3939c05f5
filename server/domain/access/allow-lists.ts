import { BlockList, isIP } from 'node:net';
import { globToRegExp } from '../mapping/mappers';

/**
 * Account access lists in the reference formats (space- or comma-separated): `*` alone means
 * unrestricted, `-*` alone means nothing (for AllowIPs: only 127.0.0.1), and `-entry` tokens
 * are removal instructions of an update that are ignored when the stored list is read.
 * An empty list is unrestricted.
 */
const tokens = (raw: string) => raw.split(/[\s,]+/).filter(Boolean);

export interface AllowList<T> {
  allows(value: T): boolean;
}

/** The list that allows everything: callers skip computing what they would ask it about. */
export const ANY: AllowList<any> = { allows: () => true };
const NONE: AllowList<any> = { allows: () => false };

function special<T>(list: string[]): AllowList<T> | undefined {
  if (list.length === 0 || list.includes('*')) return ANY;
  if (list.length === 1 && list[0] === '-*') return NONE;
  return undefined;
}

/** `118.23.21.0/24 119.24.12.11 2001:db8::/32` */
export function parseAllowIps(raw: string): AllowList<string> {
  const list = tokens(raw);
  if (list.length === 1 && list[0] === '-*') return parseAllowIps('127.0.0.1 ::1');
  const s = special<string>(list);
  if (s) return s;
  const block = new BlockList();
  let entries = 0;
  for (const t of list) {
    if (t.startsWith('-')) continue;
    const [addr, prefix] = t.split('/');
    const family = isIP(addr);
    if (!family) continue;
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) block.addAddress(addr, type);
    else {
      const bits = Number(prefix);
      if (!Number.isInteger(bits) || bits < 0 || bits > (family === 6 ? 128 : 32)) continue;
      block.addSubnet(addr, bits, type);
    }
    entries++;
  }
  // A list with no usable entry lets nobody in rather than everybody.
  if (entries === 0) return NONE;
  return {
    allows(ip: string) {
      const family = isIP(ip);
      if (!family) return false;
      return block.check(ip, family === 6 ? 'ipv6' : 'ipv4');
    },
  };
}

/** `gpt-4* claude-3*`: exact names and `*` wildcards. */
export function parseAllowModels(raw: string): AllowList<string> {
  const list = tokens(raw);
  const s = special<string>(list);
  if (s) return s;
  const exact = new Set<string>();
  const wild: RegExp[] = [];
  for (const t of list) {
    if (t.startsWith('-')) continue;
    if (t.includes('*')) wild.push(globToRegExp(t));
    else exact.add(t);
  }
  return { allows: (model) => exact.has(model) || wild.some((re) => re.test(model)) };
}

/** `1 2 5`: the Levels the account may be routed to. */
export function parseAllowLevels(raw: string): AllowList<number> {
  const list = tokens(raw);
  const s = special<number>(list);
  if (s) return s;
  const levels = new Set<number>();
  for (const t of list) if (/^\d{1,4}$/.test(t)) levels.add(Number(t));
  return { allows: (level) => levels.has(level) };
}

/**
 * Resources: path prefixes (`/v1/chat/completions`, `/v1/`); a trailing `*` is a prefix too.
 * The short aliases (`/chat/completions`) count as their `/v1` path.
 */
export function parseResourceList(list: readonly string[]): AllowList<string> {
  if (list.length === 0) return ANY;
  const prefixes = list.map((p) => p.replace(/\*+$/, ''));
  return {
    allows(path: string) {
      const canonical = path.startsWith('/v1/') ? path : `/v1${path}`;
      return prefixes.some((p) => path.startsWith(p) || canonical.startsWith(p));
    },
  };
}

export function parseResources(raw: string): AllowList<string> {
  return parseResourceList(tokens(raw).filter((t) => t.startsWith('/')));
}
