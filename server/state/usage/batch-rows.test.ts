import { describe, expect, it } from 'vitest';
import { aggregate, subtreeRollups } from './batch-rows';
import type { UsageEvent } from '../../domain/usage/types';

const event = (fields: Partial<UsageEvent> = {}): UsageEvent => ({
  accountId: 7, ownerId: 1, dna: '.1.7.', model: 'gpt-4o', level: 1, keyId: 3, endpoint: '/v1/chat/completions',
  prompt: 10, completion: 5, reasoning: 0, cached: 0, creditUsed: 0.5, status: 'ok', at: new Date(), ...fields,
});

describe('a provider batch\'s record in the rollups', () => {
  it('keeps a batch\'s record on rows of its own, its lines counted as requests, for the account and each ancestor', () => {
    const daily = aggregate([event(), event({ batchId: 'batch_1', batchLines: 4, prompt: 400, creditUsed: 1 }), event({ batchId: 'batch_2', batchLines: 2, prompt: 200, creditUsed: 0.25 })]);
    expect(daily.map((d) => [d.model, d.requests, d.prompt, d.creditUsed])).toEqual([['gpt-4o', 1, 10, 0.5], ['gpt-4o (batch)', 6, 600, 1.25]]);
    const up = subtreeRollups(daily);
    expect(up.filter((r) => r.ancestorId === 1).map((r) => [r.model, r.requests])).toEqual([['gpt-4o', 1], ['gpt-4o (batch)', 6]]);
  });
});
