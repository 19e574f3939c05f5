import { BlockList, isIP } from 'node:net';
import { badRequest } from '../../../contract/errors';
import { canonicalEntry, ipRange, listTokens, MAX_LEVEL, RESOURCE, type AclField } from '../../../contract/accounts/access-lists';
import { MapperError, globToRegExp } from '../mapping/mappers';

export { canonicalEntry, ipRange, listTokens, type AclField, type IpRange } from '../../../contract/accounts/access-lists';

/**
 * Access lists: an account's Resources, AllowIPs, AllowModels and AllowLevels, and the Owner's
 * RESOURCES. The entry grammar lives in contract/accounts/access-lists.ts (the console checks
 * entries with it too); here the admin side checks and edits lists on write (editList,
 * assertWithin, parseResourcePaths) and the proxy matches calls against the same entries
 * (parseAllowIps and the other matchers).
 *
 * A list is entries separated by white space or commas. `*` lifts the restriction, `-*` alone
 * allows nothing (for AllowIPs: loopback only), an empty list is unrestricted, and `-entry`
 * tokens are removal instructions of an edit, which a stored list ignores.
 */

/** A Resources entry is a path prefix; a trailing `*` says so explicitly and changes nothing. */
const resourcePrefix = (entry: string) => entry.replace(/\*+$/, '');

const WHAT_IT_IS: Record<AclField, string> = {
  AllowIPs: 'an IP address or CIDR range',
  AllowModels: 'a model name or pattern',
  AllowLevels: `a Level (0-${MAX_LEVEL})`,
  Resources: 'a path like /v1/chat/completions',
};

const problem = (field: AclField, entry: string) => `${field}: "${entry}" is not ${WHAT_IT_IS[field]}`;

function checked(field: AclField, entry: string): string {
  const v = canonicalEntry(field, entry);
  if (v === null) throw badRequest(problem(field, entry));
  return v;
}

// ---- Matching (the proxy) -------------------------------------------------------------------

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

/**
 * The entries a stored list grants, in stored form. An entry the grammar does not accept (a
 * row written before it was checked) grants nothing; a list with no such entry grants nothing
 * rather than everything.
 */
function granted(field: AclField, list: string[]): string[] {
  const out: string[] = [];
  for (const t of list) {
    if (t.startsWith('-')) continue;
    const v = canonicalEntry(field, t);
    if (v !== null) out.push(v);
  }
  return out;
}

/** `118.23.21.0/24 119.24.12.11 2001:db8::/32` */
export function parseAllowIps(raw: string): AllowList<string> {
  const list = listTokens(raw);
  if (list.length === 1 && list[0] === '-*') return parseAllowIps('127.0.0.1 ::1');
  const s = special<string>(list);
  if (s) return s;
  const entries = granted('AllowIPs', list);
  if (entries.length === 0) return NONE;
  const block = new BlockList();
  for (const e of entries) {
    const r = ipRange(e)!;
    if (r.bits === r.max) block.addAddress(r.address, r.type);
    else block.addSubnet(r.address, r.bits, r.type);
  }
  return {
    allows(ip: string) {
      const family = isIP(ip);
      return family !== 0 && block.check(ip, family === 6 ? 'ipv6' : 'ipv4');
    },
  };
}

/** `gpt-4* claude-3*`: exact names and `*` wildcards. */
export function parseAllowModels(raw: string): AllowList<string> {
  const list = listTokens(raw);
  const s = special<string>(list);
  if (s) return s;
  const exact = new Set<string>();
  const wild: RegExp[] = [];
  for (const e of granted('AllowModels', list)) {
    if (e.includes('*')) wild.push(globToRegExp(e));
    else exact.add(e);
  }
  return { allows: (model) => exact.has(model) || wild.some((re) => re.test(model)) };
}

/** `1 2 5`: the Levels the account may be routed to. */
export function parseAllowLevels(raw: string): AllowList<number> {
  const list = listTokens(raw);
  const s = special<number>(list);
  if (s) return s;
  const levels = new Set(granted('AllowLevels', list).map(Number));
  return { allows: (level) => levels.has(level) };
}

/** Path prefixes already checked (the Owner's RESOURCES as parseResourcePaths returns them). */
export function parseResourceList(list: readonly string[]): AllowList<string> {
  if (list.length === 0) return ANY;
  const prefixes = list.map(resourcePrefix);
  return {
    allows(path: string) {
      // The short aliases (`/chat/completions`) count as their `/v1` path.
      const canonical = path.startsWith('/v1/') ? path : `/v1${path}`;
      return prefixes.some((p) => path.startsWith(p) || canonical.startsWith(p));
    },
  };
}

/** An account's Resources: `/v1/chat/completions /v1/embed*`. */
export function parseResources(raw: string): AllowList<string> {
  const list = listTokens(raw);
  const s = special<string>(list);
  if (s) return s;
  const entries = granted('Resources', list);
  return entries.length === 0 ? NONE : parseResourceList(entries);
}

// ---- Checking and editing (the admin API) ---------------------------------------------------

/**
 * The Owner's RESOURCES: path prefixes, checked, without repeats. Throws MapperError, as the
 * other Owner configuration values do.
 */
export function parseResourcePaths(raw: string, what = 'RESOURCES'): string[] {
  const out = listTokens(raw);
  for (const p of out) if (!RESOURCE.test(p)) throw new MapperError(`${what}: "${p}" is not a path`);
  return [...new Set(out)];
}

/**
 * Applies an edit in the reference's forms, left to right: `x` adds an entry, `-x` removes it,
 * `*` lifts the restriction, `-*` allows nothing. An empty edit lifts the restriction too.
 * Removing the last entry leaves nothing allowed rather than everything.
 */
export function editList(field: AclField, current: string, edit: string): string {
  const ops = listTokens(edit);
  if (ops.length === 0) return '';
  const cur = listTokens(current);
  let denyAll = cur.length === 1 && cur[0] === '-*';
  let list = denyAll ? [] : cur.filter((t) => !t.startsWith('-') && t !== '*');
  for (const op of ops) {
    if (op === '*') { list = []; denyAll = false; continue; }
    if (op === '-*') { list = []; denyAll = true; continue; }
    if (op.startsWith('-')) {
      const v = checked(field, op.slice(1));
      const before = list.length;
      list = list.filter((x) => x !== v);
      if (before > 0 && list.length === 0) denyAll = true;
      continue;
    }
    const v = checked(field, op);
    if (!list.includes(v)) list.push(v);
    denyAll = false;
  }
  if (list.length > 0) return list.join(' ');
  return denyAll ? '-*' : '';
}

/** A range lies inside another when it is no wider and its first address lies inside. */
function ipWithin(child: string, parent: string): boolean {
  const c = ipRange(child);
  const p = ipRange(parent);
  if (!c || !p || c.type !== p.type || c.bits < p.bits) return false;
  const block = new BlockList();
  if (p.bits === p.max) block.addAddress(p.address, p.type);
  else block.addSubnet(p.address, p.bits, p.type);
  return block.check(c.address, c.type);
}

/** Whether everything `child` grants, the parent's entry `parent` grants too. */
function covers(field: AclField, parent: string, child: string): boolean {
  switch (field) {
    case 'AllowModels': return parent === child || (parent.includes('*') && globToRegExp(parent).test(child));
    case 'AllowLevels': return Number(parent) === Number(child);
    case 'Resources': return child.startsWith(resourcePrefix(parent));
    case 'AllowIPs': return ipWithin(child, parent);
  }
}

/**
 * A child's list may not be wider than its parent's: otherwise an account could give a
 * subaccount (and so itself, through that key) access it was denied.
 */
export function assertWithin(field: AclField, child: string, parent: string): void {
  const p = listTokens(parent);
  if (p.length === 0 || p.includes('*')) return;
  const c = listTokens(child);
  if (c.length === 1 && c[0] === '-*') return;
  const shown = parent.length > 200 ? `${parent.slice(0, 200)}…` : parent;
  if (p.length === 1 && p[0] === '-*') throw badRequest(`${field}: the parent allows nothing here, so the subaccount may only have "-*"`, 'wider_than_parent');
  if (c.length === 0 || c.includes('*')) throw badRequest(`${field}: cannot be unrestricted while the parent's list is "${shown}"`, 'wider_than_parent');
  const parentEntries = p.filter((t) => !t.startsWith('-'));
  for (const e of c) {
    if (e.startsWith('-')) continue;
    if (!parentEntries.some((pe) => covers(field, pe, e))) {
      throw badRequest(`${field}: "${e}" is not within the parent's list "${shown}"`, 'wider_than_parent');
    }
  }
}
