import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log';
import type { UsageEvent } from '../../domain/usage/types';
import { encodeEvent, parseLine, UsageJournal } from './journal';
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

  it('carries the tools a call dropped through a replay, with or without units, recorded without commas', () => {
    const droppedTools = ['web_search', 'code_execution'];
    expect(parseLine(encodeEvent(6, event({ droppedTools })).trimEnd())).toMatchObject({ kind: 'event', event: { units: undefined, droppedTools } });
    expect(parseLine(encodeEvent(7, event({ droppedTools, units: { web_searches: 2 } })).trimEnd())).toMatchObject({ kind: 'event', event: { units: { web_searches: 2 }, droppedTools } });
    expect(sanitize(event({ droppedTools: ['a,b', '', 'c'] }), () => 'x').droppedTools).toEqual(['ab', 'c']);
    expect(sanitize(event(), () => 'x').droppedTools).toBeUndefined();
  });

  it('carries a provider batch\'s ID and lines through a replay; lines written before them still read', () => {
    const batch = parseLine(encodeEvent(8, event({ batchId: 'batch_abc', batchLines: 3 })).trimEnd());
    expect(batch).toMatchObject({ kind: 'event', event: { batchId: 'batch_abc', batchLines: 3, units: undefined, droppedTools: undefined } });
    const both = parseLine(encodeEvent(9, event({ batchId: 'msgbatch_x', batchLines: 1, droppedTools: ['t'], units: { calls: 1 } })).trimEnd());
    expect(both).toMatchObject({ kind: 'event', event: { batchId: 'msgbatch_x', batchLines: 1, droppedTools: ['t'], units: { calls: 1 } } });
    // A line of an older version (no batch fields) reads as a call.
    const old = JSON.stringify([10, 7, 1, '.1.7.', 'gpt-4o', 1, 3, '/v1/chat/completions', 1, 2, 0, 0, 0.1, 'ok', Date.now(), 'req-2', 5, 1, null, ['x']]);
    expect(parseLine(old)).toMatchObject({ kind: 'event', event: { droppedTools: ['x'], batchId: undefined, batchLines: undefined } });
    expect(sanitize(event({ batchId: 'batch_abc', batchLines: 3 }), () => 'x')).toMatchObject({ batchId: 'batch_abc', batchLines: 3 });
    expect(sanitize(event(), () => 'x').batchId).toBeUndefined();
  });

  it('is recorded with known unit kinds and finite positive quantities only', () => {
    const units = { images: 2, audio_seconds: Number.NaN, calls: -1, furlongs: 3 } as unknown as UsageEvent['units'];
    expect(sanitize(event({ units }), () => 'x').units).toEqual({ images: 2 });
    expect(sanitize(event({ units: { calls: 0 } }), () => 'x').units).toBeUndefined();
  });
});

describe('a journal position', () => {
  // A recorder that spills starts reading back at position(): taken while a sync is under way,
  // it once left out the lines being written, so a spill re-read events memory already held
  // and never reached its last ones (the outage test saw 989 written twice and 989 lost).
  it('is where the next line starts, also while a sync is writing the lines before it', async () => {
    const dir = mkdtempSync(`${os.tmpdir()}/sy-journal-pos-`);
    const j = await UsageJournal.open(dir, 'db', createLogger(() => {}, 'error'));
    try {
      let bytes = 0;
      const syncs: Promise<void>[] = [];
      for (let i = 1; i <= 300; i++) {
        const line = encodeEvent(i, event({ requestId: `pos-${i}` }));
        j.appendEvent(i, event({ requestId: `pos-${i}` }));
        bytes += Buffer.byteLength(line);
        if (i % 7 === 0) syncs.push(j.sync());
        // Let a sync begin (it takes the pending lines) without finishing its write.
        await Promise.resolve();
        await Promise.resolve();
        expect(j.position().offset).toBe(bytes);
      }
      await Promise.all(syncs);
      await j.sync();
      expect(statSync(j.segmentPath(0)).size).toBe(bytes);
      expect(j.position().offset).toBe(bytes);
    } finally {
      await j.close(true);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
