/** What was sent, enough to replay it by hand (the seed replays it exactly). */
export interface SentRequest {
  index: number;
  method: string;
  path: string;
  headers: Record<string, string> | string[];
  body?: string | Buffer;
  /** Free text: the mutation or framing case. */
  note?: string;
}

export interface Finding {
  /** Groups repeats of one defect: e.g. `GET /x-users/{identifier} → 500`. */
  key: string;
  detail: string;
  request?: SentRequest;
  /** The route, when the key leaves it out (one defect seen on many routes). */
  where?: string;
}

const BODY_PREFIX = 300;

export function describeRequest(r: SentRequest): string {
  const headers = Array.isArray(r.headers)
    ? pairs(r.headers)
    : Object.entries(r.headers);
  const shown = headers.map(([k, v]) => `${k}: ${redact(k, v)}`).join(' | ');
  let body = '';
  if (r.body !== undefined && r.body.length > 0) {
    const text = typeof r.body === 'string' ? r.body : r.body.toString('latin1');
    body = `\n      body (${r.body.length} bytes): ${JSON.stringify(text.slice(0, BODY_PREFIX))}${text.length > BODY_PREFIX ? '…' : ''}`;
  }
  return `#${r.index} ${r.method} ${clip(r.path, 400)}${r.note ? `  [${r.note}]` : ''}\n      headers: ${clip(shown, 600)}${body}`;
}

function pairs(flat: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
  return out;
}

/** Keys are test-made, but a report is read by people: show which key, not the key. */
function redact(name: string, value: string): string {
  if (!/^(authorization|x-api-key)$/i.test(name)) return clip(value, 200);
  if (/^Basic /i.test(value)) return 'Basic …';
  return value.replace(/sk-[A-Za-z0-9]{8,}/g, (k) => `${k.slice(0, 8)}…${k.slice(-4)}`);
}

function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…(${s.length} chars)` : s;
}

/** Findings of one pass, grouped by defect, with the first few requests of each. */
export class Findings {
  private readonly groups = new Map<string, { count: number; examples: Finding[]; where: Set<string> }>();

  constructor(readonly title: string, readonly seed: number, readonly replay: string) {}

  add(f: Finding): void {
    let g = this.groups.get(f.key);
    if (!g) this.groups.set(f.key, (g = { count: 0, examples: [], where: new Set() }));
    g.count++;
    if (f.where) g.where.add(f.where);
    if (g.examples.length < 3) g.examples.push(f);
  }

  get size(): number {
    return this.groups.size;
  }

  keys(): string[] {
    return [...this.groups.keys()];
  }

  /** The first example of each group, e.g. to reduce it to a minimal request. */
  firstExamples(): Finding[] {
    return [...this.groups.values()].map((g) => g.examples[0]);
  }

  /** Adds a line under a group (a reduced reproduction). */
  annotate(key: string, line: string): void {
    const g = this.groups.get(key);
    if (g) g.examples.unshift({ key, detail: line });
  }

  report(): string {
    const lines = [`${this.title}: ${this.groups.size} distinct failure(s), seed ${this.seed} (${this.replay})`];
    for (const [key, g] of this.groups) {
      lines.push(`  ✗ ${key}  (${g.count}×)`);
      if (g.where.size) lines.push(`    on: ${[...g.where].sort().join(', ')}`);
      for (const e of g.examples) {
        lines.push(`    - ${e.detail}`);
        if (e.request) lines.push(`      ${describeRequest(e.request)}`);
      }
    }
    return lines.join('\n');
  }

  /** Throws the whole report when anything failed, so the test output shows every defect at once. */
  assertNone(): void {
    if (this.groups.size) throw new Error(this.report());
  }
}
