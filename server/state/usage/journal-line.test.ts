import { describe, expect, it } from 'vitest';
import type { UsageEvent } from '../../domain/usage/types';
import { encodeEvent, parseLine } from './journal';
import { sanitize } from './batch-rows';

const event = (extra: Partial<UsageEvent> = {}): UsageEvent => ({
  accountId: 7, ownerId: 1, dna: '.1.7.', model: 'whisper-1', level: 1, keyId: 3, endpoint: '/v1/audio/transcriptions',
  prompt: 100, completion: 0, reasoning: 0, cached: 0, creditUsed: 0.001, status: 'ok', at: new Date(Date.now() - 1000),
  requestId: 'req-1', durationMs: 12, firstByteMs: 5, ...extra,
});

describe('a journal line', () => {
  it('carries a unit-billed call\'s units through a replay, and a token call\'s line stays without them', () => {
    const units = { audio_seconds: 31.5, calls: 1 };
    const line = parseLine(encodeEvent(4, event({ units })).trimEnd());
    expect(line).toMatchObject({ kind: 'event', seq: 4, event: { units, requestId: 'req-1', durationMs: 12 } });
    const plain = encodeEvent(5, event());
    expect(JSON.parse(plain)).toHaveLength(18);
    expect(parseLine(plain.trimEnd())).toMatchObject({ kind: 'event', event: { units: undefined } });
  });

  it('is recorded with known unit kinds and finite positive quantities only', () => {
    const units = { images: 2, audio_seconds: Number.NaN, calls: -1, furlongs: 3 } as unknown as UsageEvent['units'];
    expect(sanitize(event({ units }), () => 'x').units).toEqual({ images: 2 });
    expect(sanitize(event({ units: { calls: 0 } }), () => 'x').units).toBeUndefined();
  });
});
