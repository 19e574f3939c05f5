import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const README = path.join(ROOT, 'README.md');

/**
 * A README code block marked for the quick-start test by the HTML comment before it:
 * `<!-- readme-test: gateway -->` (the start command; the test starts the same server itself),
 * `<!-- readme-test: demo-upstream -->`, `<!-- readme-test: sh -->` (run in the reader's shell,
 * in order), `<!-- readme-test: js hello.mjs -->` (saved under that name for a later sh block).
 */
export interface MarkedBlock {
  kind: 'gateway' | 'demo-upstream' | 'sh' | 'js';
  /** The file name a `js` block is saved as. */
  file?: string;
  lang: string;
  code: string;
  /** 1-based line of the marker, for messages. */
  line: number;
}

const MARKED = /<!-- readme-test: ([a-z-]+)(?: (\S+))? -->\n```(\w+)\n([\s\S]*?)\n```/g;
const KINDS = new Set(['gateway', 'demo-upstream', 'sh', 'js']);

export function markedBlocks(markdown = readFileSync(README, 'utf8')): MarkedBlock[] {
  const out: MarkedBlock[] = [];
  for (const m of markdown.matchAll(MARKED)) {
    if (!KINDS.has(m[1])) throw new Error(`README: unknown readme-test kind "${m[1]}"`);
    const line = markdown.slice(0, m.index).split('\n').length;
    out.push({ kind: m[1] as MarkedBlock['kind'], file: m[2], lang: m[3], code: m[4], line });
  }
  // A marker the pattern did not pair with a block would silently drop a step.
  const markers = markdown.match(/<!-- readme-test:/g)?.length ?? 0;
  if (markers !== out.length) throw new Error(`README: ${markers} readme-test markers but ${out.length} marked code blocks`);
  return out;
}

/** Every fenced shell block of the README, marked or not. */
export function shellBlocks(markdown = readFileSync(README, 'utf8')): string[] {
  return [...markdown.matchAll(/```(?:sh|bash)\n([\s\S]*?)\n```/g)].map((m) => m[1]);
}

/** The whole text of one `## Heading` section. */
export function section(heading: string, markdown = readFileSync(README, 'utf8')): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`README has no "## ${heading}" section`);
  const rest = markdown.slice(start + 1);
  const end = rest.indexOf('\n## ', 4);
  return end < 0 ? rest : rest.slice(0, end);
}
