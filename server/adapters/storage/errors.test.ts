import { describe, expect, it } from 'vitest';
import { httpFailureOf, uniqueViolationConstraint } from './errors';

/** As drizzle hands them over: the driver's error as the cause of its own. */
const wrapped = (cause: Error) => Object.assign(new Error('Failed query: insert into …'), { cause });
const coded = (code: string) => Object.assign(new Error(code), { code });

describe('httpFailureOf', () => {
  it('answers a unique violation as a 409 duplicate, however deep in the cause chain', () => {
    const expected = { status: 409, code: 'duplicate', message: 'A record with the same unique value already exists' };
    expect(httpFailureOf(coded('23505'))).toEqual(expected);
    expect(httpFailureOf(wrapped(wrapped(coded('23505'))))).toEqual(expected);
  });

  it('answers an unreachable database as a 503 to retry', () => {
    for (const code of ['ECONNREFUSED', 'CONNECTION_CLOSED', '57P01', '08006', 'EMBEDDED_DATABASE_STOPPED']) {
      expect(httpFailureOf(wrapped(coded(code)))).toEqual({
        status: 503, code: 'database_unavailable', message: 'The database is unavailable; retry shortly', headers: { 'retry-after': '5' },
      });
    }
  });

  it('leaves every other failure to be an internal error', () => {
    for (const err of [new Error('boom'), wrapped(coded('22P02')), wrapped(coded('23503')), undefined, 'text']) expect(httpFailureOf(err)).toBeUndefined();
  });
});

describe('uniqueViolationConstraint', () => {
  it('names the violated constraint as either driver reports it', () => {
    expect(uniqueViolationConstraint(wrapped(Object.assign(coded('23505'), { constraint_name: 'accounts_owner_name_key' })))).toBe('accounts_owner_name_key');
    expect(uniqueViolationConstraint(wrapped(Object.assign(coded('23505'), { constraint: 'account_keys_pkey' })))).toBe('account_keys_pkey');
    expect(uniqueViolationConstraint(coded('23505'))).toBe('');
  });

  it('is null for any other failure', () => {
    for (const err of [wrapped(coded('23503')), new Error('boom'), undefined]) expect(uniqueViolationConstraint(err)).toBeNull();
  });
});
