import { BlockList, isIP } from 'node:net';
import { badRequest } from '../../../contract/errors';
import { globToRegExp } from '../mapping/mappers';

/**
 * Access lists of an account (Resources, AllowIPs, AllowModels, AllowLevels), stored as
 * space-separated entries the proxy reads (server/domain/access/allow-lists.ts): empty = unrestricted,
 * `-*` = nothing allowed (for AllowIPs: loopback only).
 */
export type AclField = 'Resources' | 'AllowIPs' | 'AllowModels' | 'AllowLevels';

const tokens = (raw: string) => raw.split(/[\s,]+/).filter(Boolean);
const MODEL_PATTERN = /^[A-Za-z0-9._:/@*+][A-Za-z0-9._:/@*+-]{0,199}$/;
const RESOURCE = /^\/[A-Za-z0-9._~\-/{}*]{0,199}$/;

/** Checks one entry and returns it in its stored form. */
function entry(field: AclField, t: string): string {
  switch (field) {
    case 'AllowIPs': {
      const [addr, prefix, extra] = t.split('/');
      const family = isIP(addr);
      const max = family === 6 ? 128 : 32;
      if (!family || extra !== undefined || (prefix !== undefined && (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max))) {
        throw badRequest(`AllowIPs: "${t}" is not an IP address or CIDR range`);
      }
      return t;
    }
    case 'AllowModels':
      if (!MODEL_PATTERN.test(t)) throw badRequest(`AllowModels: "${t}" is not a model name or pattern`);
      return t;
    case 'AllowLevels':
      if (!/^\d{1,4}$/.test(t) || Number(t) > 1000) throw badRequest(`AllowLevels: "${t}" is not a Level (0-1000)`);
      return String(Number(t));
    case 'Resources':
      if (!RESOURCE.test(t)) throw badRequest(`Resources: "${t}" is not a path like /v1/chat/completions`);
      return t;
  }
}

/**
 * Applies an edit in the reference's forms, left to right: `x` adds an entry, `-x` removes it,
 * `*` lifts the restriction, `-*` allows nothing. An empty edit lifts the restriction too.
 * Removing the last entry leaves nothing allowed rather than everything.
 */
export function editList(field: AclField, current: string, edit: string): string {
  const ops = tokens(edit);
  if (ops.length === 0) return '';
  const cur = tokens(current);
  let denyAll = cur.length === 1 && cur[0] === '-*';
  let list = denyAll ? [] : cur.filter((t) => !t.startsWith('-') && t !== '*');
  for (const op of ops) {
    if (op === '*') { list = []; denyAll = false; continue; }
    if (op === '-*') { list = []; denyAll = true; continue; }
    if (op.startsWith('-')) {
      const v = entry(field, op.slice(1));
      const before = list.length;
      list = list.filter((x) => x !== v);
      if (before > 0 && list.length === 0) denyAll = true;
      continue;
    }
    const v = entry(field, op);
    if (!list.includes(v)) list.push(v);
    denyAll = false;
  }
  if (list.length > 0) return list.join(' ');
  return denyAll ? '-*' : '';
}

function ipWithin(child: string, parent: string): boolean {
  const [ca, cb] = child.split('/');
  const [pa, pb] = parent.split('/');
  const family = isIP(ca);
  if (!family || family !== isIP(pa)) return false;
  const max = family === 6 ? 128 : 32;
  const childBits = cb === undefined ? max : Number(cb);
  const parentBits = pb === undefined ? max : Number(pb);
  // A range lies inside another when it is no wider and any of its addresses lies inside.
  if (childBits < parentBits) return false;
  const type = family === 6 ? 'ipv6' : 'ipv4';
  const block = new BlockList();
  if (parentBits === max) block.addAddress(pa, type);
  else block.addSubnet(pa, parentBits, type);
  return block.check(ca, type);
}

function covers(field: AclField, parentEntry: string, child: string): boolean {
  switch (field) {
    case 'AllowModels': return parentEntry === child || (parentEntry.includes('*') && globToRegExp(parentEntry).test(child));
    case 'AllowLevels': return Number(parentEntry) === Number(child);
    case 'Resources': return child.startsWith(parentEntry.replace(/\*+$/, ''));
    case 'AllowIPs': return ipWithin(child, parentEntry);
  }
}

/**
 * A child's list may not be wider than its parent's: otherwise an account could give a
 * subaccount (and so itself, through that key) access it was denied.
 */
export function assertWithin(field: AclField, child: string, parent: string): void {
  const p = tokens(parent);
  if (p.length === 0 || p.includes('*')) return;
  const c = tokens(child);
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
