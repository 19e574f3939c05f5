import { describe, expect, it } from 'vitest';
import { convertCredit, refundedCredit } from './credit';

describe('refundedCredit', () => {
  it('converts what leaves an account to a funded parent\'s Rates, in micro-USD', () => {
    expect(refundedCredit(11, { rates: 2 }, { role: 'user', rates: 1 })).toBe(5.5);
    expect(refundedCredit(1, { rates: 3 }, { role: 'user', rates: 1 })).toBe(0.333333);
    expect(convertCredit(0.1, { rates: 1 }, { rates: 3 })).toBe(0.3);
  });

  it('returns nothing to Root or an Owner, and nothing of nothing', () => {
    expect(refundedCredit(5, { rates: 1 }, { role: 'owner', rates: 1 })).toBe(0);
    expect(refundedCredit(5, { rates: 1 }, { role: 'root', rates: 1 })).toBe(0);
    expect(refundedCredit(5, { rates: 1 }, null)).toBe(0);
    expect(refundedCredit(0, { rates: 1 }, { role: 'user', rates: 1 })).toBe(0);
  });
});
