import { describe, expect, it } from 'vitest';
import { mapModel } from './map-model';
import { accountRow, callFor, ownerRouting } from './test-support';

describe('map model', () => {
  const owner = ownerRouting({ MODEL_MAPPER: 'gpt-3.5*=gpt-4o-mini, alias=gpt-4o', LEVEL_MAPPER: 'gpt-4o*=5' });
  const mapped = (requested: string, row = accountRow(), ancestorMappers: string[] = []) => {
    const c = callFor({ row, owner, ancestorMappers, body: { model: requested } });
    mapModel(c);
    return [c.model, c.level];
  };

  it('maps with the account, then its ancestors nearest first, then the Owner, one step only', () => {
    expect(mapped('gpt-3.5-turbo')).toEqual(['gpt-4o-mini', 5]);
    expect(mapped('gpt-3.5-turbo', accountRow(), ['gpt-3.5*=o4-mini', 'gpt-3.5*=o3'])).toEqual(['o4-mini', 1]);
    expect(mapped('gpt-3.5-turbo', accountRow({ modelMapper: 'gpt-3.5-turbo=o3' }), ['gpt-3.5*=o4-mini'])).toEqual(['o3', 1]);
    // alias → gpt-4o; the Owner's gpt-4o entries are not applied a second time
    expect(mapped('alias', accountRow({ modelMapper: 'gpt-4o=never' }))).toEqual(['gpt-4o', 5]);
    expect(mapped('unmapped', accountRow({ level: 9 }))).toEqual(['unmapped', 9]);
  });

  it('starts on the account LevelMapper, then the Owner LEVEL_MAPPER, then the account Level', () => {
    expect(mapped('gpt-4o', accountRow({ level: 2, levelMapper: 'gpt-4o=7' }))).toEqual(['gpt-4o', 7]);
    expect(mapped('gpt-4o', accountRow({ level: 2 }))).toEqual(['gpt-4o', 5]);
    expect(mapped('claude-x', accountRow({ level: 2 }))).toEqual(['claude-x', 2]);
  });
});
