import { describe, expect, it } from 'vitest';
import { ancestorIdsOf, dnaIds, ownIdOf } from './dna';

describe('DNA paths', () => {
  it('reads the IDs root first, the account last', () => {
    expect(dnaIds('.1.3.12.')).toEqual([1, 3, 12]);
    expect(ownIdOf('.1.3.12.')).toBe(12);
    expect(ancestorIdsOf('.1.3.12.')).toEqual([1, 3]);
  });

  it('has no ancestors at the root and no account in an empty path', () => {
    expect(ancestorIdsOf('.1.')).toEqual([]);
    expect(ownIdOf('')).toBeNaN();
    expect(dnaIds('.1.x.3.')).toEqual([1, 3]);
  });
});
