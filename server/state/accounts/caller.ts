import type { Caller } from '../../../contract/services';
import type { AccountRow } from './account-cache';

export function toCaller(a: AccountRow): Caller {
  return {
    id: a.id,
    name: a.name,
    ownerId: a.ownerId,
    dna: a.dna,
    role: a.role,
    isRoot: a.role === 'root',
    isOwner: a.role === 'root' || a.role === 'owner',
  };
}

/** True when `dna` lies strictly below `ancestorDna` (DNA paths include the account itself). */
export function isDescendantDna(dna: string, ancestorDna: string): boolean {
  return dna.length > ancestorDna.length && dna.startsWith(ancestorDna);
}
