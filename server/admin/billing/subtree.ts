import { sql, type AnyColumn, type SQL } from 'drizzle-orm';

export const DNA_PATH = /^(\.\d{1,10})+\.$/;

/**
 * `column` lies in the subtree at `dna` (the account at `dna` included): the range form of
 * `LIKE '<dna>%'`. DNA paths hold only digits and dots, so every path below `.1.42.` sorts
 * between it and `.1.42/`. Written with the pattern operators so the text_pattern_ops index
 * serves it even as a prepared statement with bound parameters (a generic plan cannot turn
 * `LIKE $1` into an index range).
 */
export function inSubtree(column: AnyColumn, dna: string): SQL {
  if (!DNA_PATH.test(dna)) throw new Error(`not a DNA path: ${dna}`);
  return sql`(${column} ~>=~ ${dna} and ${column} ~<~ ${dna.slice(0, -1) + '/'})`;
}
