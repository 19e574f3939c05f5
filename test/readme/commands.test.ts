/**
 * Every other command and fact of the README that can be checked without a long run: npm
 * scripts exist, the files they run exist, `npm run openapi:check` passes, the configuration
 * table matches what the server reads and its defaults, linked files exist.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { readSettings } from '../../server/core/settings';
import { needs } from '../../server/testing/requirements';
import { README, ROOT, section, shellBlocks } from './blocks';

const readme = readFileSync(README, 'utf8');
const scripts = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts as Record<string, string>;

/** `npm run x`, `npm start`, `npm test`, `npm ci` as they appear in the README's shell blocks. */
const npmCommands = (): string[] => shellBlocks(readme).flatMap((b) => [...b.matchAll(/\bnpm (run [\w:-]+|start|test|ci)\b/g)].map((m) => m[1]));

describe('README commands', () => {
  it('name npm scripts that exist, and the files those scripts run exist', () => {
    const commands = new Set(npmCommands());
    expect(commands.size).toBeGreaterThan(8);
    for (const c of commands) {
      if (c === 'ci') continue;
      const name = c.replace(/^run /, '');
      expect(scripts, `npm ${c}`).toHaveProperty([name]);
      // `tsx file.ts`, `node --import tsx file.ts`, `node dist/main.mjs` (built by `npm run build`).
      for (const m of scripts[name].matchAll(/(?:^|\s)((?:bench|scripts|server|test)\/[\w/.-]+\.ts)\b/g)) {
        expect(existsSync(path.join(ROOT, m[1])), `${name} runs ${m[1]}`).toBe(true);
      }
    }
    for (const c of ['start', 'test', 'run bench:proxy', 'run bench:dashboard', 'run bench:usage', 'run bench:streams', 'run bench:footprint', 'run openapi', 'run clients', 'run openapi:check', 'run demo:upstream']) expect(commands, c).toContain(c);
  });

  it('npm run openapi:check passes on the committed files', needs('java', { timeout: 120_000 }), async () => {
    const run = await promisify(execFile)('npm', ['run', '--silent', 'openapi:check'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    expect(run.stdout).toContain('openapi:check: openapi/openapi.json and clients/ match the contract');
  });

  it('list, in the configuration table, every variable the server reads, with its real default', () => {
    const rows = [...section('Configuration', readme).matchAll(/^\| `([A-Z_]+)` \| ([^|]+) \|/gm)].map((m) => ({ name: m[1], def: m[2].trim() }));
    expect(rows.length).toBeGreaterThan(20);
    const settingsSource = readFileSync(path.join(ROOT, 'server/core/settings.ts'), 'utf8');
    const read = new Set([...settingsSource.matchAll(/env\.([A-Z_]+)/g)].map((m) => m[1]));
    expect(readFileSync(path.join(ROOT, 'server/core/log.ts'), 'utf8')).toContain('process.env.LOG_LEVEL');
    read.add('LOG_LEVEL');
    expect(rows.map((r) => r.name).sort()).toEqual([...read].sort());

    const defaults = readSettings({}) as unknown as Record<string, unknown>;
    const field = (name: string) => name.toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    let compared = 0;
    for (const { name, def } of rows) {
      if (!(field(name) in defaults)) continue;
      compared++;
      const actual = defaults[field(name)];
      if (def === 'unset') expect(actual === undefined || actual === false, name).toBe(true);
      else if (name === 'DATA_DIR') expect(actual).toBe(path.resolve(def.replace(/`/g, '')));
      else expect(String(actual), name).toBe(def.replace(/`/g, ''));
    }
    // Every variable but LOG_LEVEL is a field of the settings.
    expect(compared).toBe(rows.length - 1);
  });

  it('point at files and folders that exist', () => {
    const linked = [...readme.matchAll(/\]\(((?:docs|clients|server|console|contract|scripts|test|bench)\/[^)#\s]+)/g)].map((m) => m[1]);
    const named = [...readme.matchAll(/`((?:docs|console|server|scripts|test|bench|clients|openapi|contract|\.ci)\/[\w./-]*)`/g)].map((m) => m[1]);
    expect(linked.length + named.length).toBeGreaterThan(5);
    // Written by the tests themselves, so absent from a fresh clone.
    const generated = new Set(['console/screenshots/']);
    for (const p of [...linked, ...named].filter((x) => !generated.has(x))) expect(existsSync(path.join(ROOT, p)), p).toBe(true);
    for (const dir of ['clients/typescript', 'clients/python']) expect(existsSync(path.join(ROOT, dir, 'README.md')), dir).toBe(true);
    for (const folder of [...section('Layout', readme).matchAll(/^\| `([\w.]+)\/` \|/gm)].map((m) => m[1])) {
      expect(existsSync(path.join(ROOT, folder)), folder).toBe(true);
    }
  });
});
