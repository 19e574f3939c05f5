/**
 * Stage 4, access checks: the account's ACL against this call — AllowIPs (the TCP peer),
 * Resources (the account's and the Owner's RESOURCES), AllowModels (the mapped model) and
 * AllowLevels (the start Level). Refuses 403 ip_not_allowed / resource_not_allowed /
 * model_not_allowed / level_not_allowed.
 */
import { ANY } from '../../domain/access/allow-lists';
import type { ProxyCall } from '../call';
import type { Verdict } from '../errors';

export function checkAccess(c: ProxyCall): Verdict {
  const v = checkCaller(c);
  if (v) return v;
  const { profile } = c;
  if (!profile.models.allows(c.model)) return { status: 403, message: `This account may not use model ${c.model} (AllowModels)`, code: 'model_not_allowed' };
  if (!profile.levels.allows(c.level)) return { status: 403, message: `This account may not use Level ${c.level} (AllowLevels)`, code: 'level_not_allowed' };
  return null;
}

/** AllowIPs and Resources alone: what a call without a model or Level (a stored response's reads) is checked against. */
export function checkCaller(c: ProxyCall): Verdict {
  const { profile, path } = c;
  // The peer address is read only when an AllowIPs list needs it.
  if (profile.ips !== ANY && !profile.ips.allows(c.ex.ip)) return { status: 403, message: `This account may not call from ${c.ex.ip} (AllowIPs)`, code: 'ip_not_allowed' };
  if (!c.ownerRules.resources.allows(path) || !profile.resources.allows(path)) return { status: 403, message: `This account may not use ${path} (Resources)`, code: 'resource_not_allowed' };
  return null;
}
