import { describe, expect, it } from 'vitest';
import { createLogger } from './log';

describe('logger', () => {
  it('writes one JSON object per line with time, severity and event first', () => {
    const lines: string[] = [];
    createLogger((l) => lines.push(l), 'info').warn('provider_key_closed', { key: 3, owner: 1 });
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]);
    expect(Object.keys(line)).toEqual(['time', 'level', 'event', 'key', 'owner']);
    expect(line).toMatchObject({ level: 'warn', event: 'provider_key_closed', key: 3, owner: 1 });
  });

  it('never lets a field pass for the severity, the event or the time', () => {
    const lines: string[] = [];
    createLogger((l) => lines.push(l), 'info').warn('something', { level: 1, event: 'other', time: 0 });
    expect(JSON.parse(lines[0])).toMatchObject({ level: 'warn', event: 'something', field_level: 1, field_event: 'other', field_time: 0 });
  });

  it('drops lines below the minimum severity', () => {
    const lines: string[] = [];
    const log = createLogger((l) => lines.push(l), 'warn');
    log.info('quiet');
    log.error('loud');
    expect(lines.map((l) => JSON.parse(l).event)).toEqual(['loud']);
  });
});
