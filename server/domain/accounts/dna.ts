/**
 * DNA paths: `.1.3.12.` is account 12 under 3 under 1, root first, each ID between dots. The one
 * reader of that form for the proxy, the recorder and bills.
 */

/** The IDs on the path, root first, the account itself last; pieces that are not IDs are skipped. */
export function dnaIds(dna: string): number[] {
  const ids: number[] = [];
  for (const piece of dna.split('.')) {
    if (piece === '') continue;
    const id = Number(piece);
    if (Number.isInteger(id)) ids.push(id);
  }
  return ids;
}

/** The account a path ends with (NaN for an empty path). */
export function ownIdOf(dna: string): number {
  const ids = dnaIds(dna);
  return ids.length ? ids[ids.length - 1] : NaN;
}

/** The IDs above the account, root first (the path without its last ID). */
export function ancestorIdsOf(dna: string): number[] {
  return dnaIds(dna).slice(0, -1);
}
