import { PatternTable, parseModelMapper, type PatternEntry } from './mappers';

/**
 * The model a request for `requested` is routed and billed as: the account's ModelMapper, its
 * ancestors' nearest first, then the Owner's MODEL_MAPPER; one step only. The proxy's map-model
 * stage and the model list's prices both read it here, so a listed price is the billed one.
 */
export function routedModel(requested: string, accountMappers: readonly PatternTable<string>[], ownerMapper: PatternTable<string>): string {
  for (const table of accountMappers) {
    const model = table.match(requested);
    if (model !== undefined) return model;
  }
  return ownerMapper.match(requested) ?? requested;
}

/**
 * ModelMapper texts (the account's, then its ancestors' within the tenant, nearest first) as
 * the tables routedModel reads; unreadable text maps nothing rather than failing the call.
 */
export function modelMapperTables(texts: readonly string[]): PatternTable<string>[] {
  const tables: PatternTable<string>[] = [];
  for (const text of texts) {
    if (!text) continue;
    let entries: PatternEntry<string>[] = [];
    try { entries = parseModelMapper(text); } catch { /* validated on write; a bad legacy value maps nothing */ }
    if (entries.length) tables.push(new PatternTable(entries));
  }
  return tables;
}
