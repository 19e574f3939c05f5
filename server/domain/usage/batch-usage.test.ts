import { describe, expect, it } from 'vitest';
import { fromRollupModel, rollupModel } from './batch-usage';

describe('batch usage in the rollups', () => {
  it('marks a provider batch\'s model and reads the mark back; a call\'s model is as it was', () => {
    expect(rollupModel('gpt-4o', 'batch_1')).toBe('gpt-4o (batch)');
    expect(rollupModel('gpt-4o', undefined)).toBe('gpt-4o');
    expect(fromRollupModel('gpt-4o (batch)')).toEqual({ model: 'gpt-4o', batch: true });
    expect(fromRollupModel('gpt-4o')).toEqual({ model: 'gpt-4o', batch: false });
    expect(fromRollupModel(' (batch)')).toEqual({ model: ' (batch)', batch: false });
  });
});
