import { describe, expect, it } from 'vitest';
import { finalError, Tally } from './tally';

const call = { model: 'gpt-4o', path: '/v1/chat/completions', level: 3 };

describe('the tally and the final error', () => {
  it('is 429 with the longest key sleep when every attempt was rate limited upstream', () => {
    const t = new Tally();
    t.fail({ kind: 'failed', reason: 'upstream answered 429', status: 429 });
    t.fail({ kind: 'failed', reason: 'upstream answered 429', status: 429 });
    t.rateLimitWaitMs = 2500;
    expect(finalError(call, t)).toEqual({ status: 429, code: 'upstream_rate_limited', message: expect.stringContaining('retry in 3s'), headers: { 'retry-after': '3' } });
  });

  it('is 504 when the last attempt timed out, 502 after an error answer, 503 when unreachable; never the upstream\'s text', () => {
    const t = new Tally();
    const withId = { ...call, id: 'abc-1' };
    t.fail({ kind: 'failed', reason: 'upstream answered 429', status: 429 });
    t.fail({ kind: 'failed', reason: 'UPSTREAM_HEADERS_TIMEOUT: no head from https://api.example.test', timeout: true });
    expect(finalError(withId, t)).toMatchObject({ status: 504, code: 'upstream_timeout', message: expect.stringContaining('(request abc-1)') });
    t.fail({ kind: 'failed', reason: 'upstream answered 500', status: 500 });
    expect(finalError(withId, t)).toMatchObject({ status: 502, code: 'upstream_error' });
    t.fail({ kind: 'failed', reason: 'UPSTREAM_SOCKET: ENOTFOUND: getaddrinfo ENOTFOUND api.example.test' });
    const r = finalError(withId, t);
    expect(r).toMatchObject({ status: 503, code: 'upstream_unavailable' });
    expect(r.message).not.toMatch(/example|ENOTFOUND|answered/);
  });

  it('is 503 upstream_unavailable with Retry-After when every key is out of rotation after failures', () => {
    const t = new Tally();
    t.noteOpen(8_200);
    t.noteOpen(5_100);
    expect(finalError(call, t, 1_000)).toMatchObject({ status: 503, code: 'upstream_unavailable', headers: { 'retry-after': '5' } });
  });

  it('without any attempt: keys asleep, keys that cannot serve the endpoint, or no key at all', () => {
    const asleep = new Tally();
    asleep.wakeAt = 10_500;
    expect(finalError(call, asleep, 1_000)).toMatchObject({ status: 503, code: 'no_available_key', headers: { 'retry-after': '10' } });
    const skipped = new Tally();
    skipped.skips.add('no deployment for gpt-4o');
    expect(finalError(call, skipped)).toMatchObject({ status: 400, code: 'unsupported_by_provider', message: expect.stringContaining('no deployment for gpt-4o') });
    const none = new Tally();
    expect(finalError(call, none)).toMatchObject({ status: 503, code: 'no_provider_key', message: expect.stringContaining('Level 3') });
    none.lastLevel = 4;
    expect(finalError(call, none).message).toContain('Level 4');
  });
});
