/**
 * The layer rules bite: dependency-cruiser runs with the project's own .dependency-cruiser.cjs
 * over fixture/, a small tree laid out like the project (each file named for what it does), and
 * reports exactly the forbidden imports in it. The fixture typechecks and is outside the real
 * check's folders, so it changes neither `tsc` nor `npm run check:layers`.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const FIXTURE = path.join(import.meta.dirname, 'fixture');

interface Cruise {
  modules: { source: string; dependencies: { resolved: string; couldNotResolve: boolean }[] }[];
  summary: { violations: { from: string; to: string; rule: { name: string; severity: string } }[] };
}

let cruise: Cruise;
beforeAll(async () => {
  const { stdout } = await promisify(execFile)(
    path.join(ROOT, 'node_modules/.bin/depcruise'),
    ['contract', 'server', 'console/src', '--config', path.join(ROOT, '.dependency-cruiser.cjs'), '--output-type', 'json', '--no-cache'],
    { cwd: FIXTURE, maxBuffer: 16 * 1024 * 1024, timeout: 60_000 },
  ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' })); // it exits non-zero on violations
  cruise = JSON.parse(stdout) as Cruise;
});

/** npm packages resolve through the checkout's node_modules, a few folders up from the fixture. */
const shortName = (resolved: string): string => resolved.replace(/^(\.\.\/)+node_modules\//, 'node_modules/');
const violations = (): string[] =>
  cruise.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${shortName(v.to)}`).sort();
const imports = (): string[] =>
  cruise.modules.flatMap((m) => m.dependencies.map((d) => `${m.source} → ${shortName(d.resolved)}`));

describe('npm run check:layers rules on a fixture tree', () => {
  it('resolves every import of the fixture, so a missing report is never a missing edge', () => {
    const unresolved = cruise.modules.flatMap((m) => m.dependencies.filter((d) => d.couldNotResolve).map((d) => `${m.source} → ${d.resolved}`));
    expect(unresolved).toEqual([]);
    expect(cruise.modules.map((m) => m.source)).toContain('server/core/bad.ts');
  });

  it('reports each forbidden import, and nothing else', () => {
    expect(violations()).toEqual([
      'layer:console/src: console/src/reaches-server.ts → server/core/log-line.ts',
      'layer:contract: contract/reaches-up.ts → server/core/log-line.ts',
      'layer:server/adapters: server/adapters/cycle-b.ts → server/state/cycle-a.ts',
      'layer:server/admin: server/admin/reaches-gateway.ts → server/gateway/pipeline.ts',
      'layer:server/app: server/app/uses-testing.ts → server/testing/helper.ts',
      'layer:server/core: server/core/bad.ts → server/admin/service.ts',
      'layer:server/gateway: server/gateway/reaches-admin.ts → server/admin/service.ts',
      'layer:unknown: server/extra/outside.ts → server/core/log-line.ts',
      'no-cycle-across-layers: server/adapters/cycle-b.ts → server/state/cycle-a.ts',
      'no-test-code-in-production: server/admin/uses-support.ts → server/admin/accounts/test-support.ts',
      'no-test-code-in-production: server/app/uses-testing.ts → server/testing/helper.ts',
      'transport-seam: server/gateway/uses-uws.ts → node_modules/uWebSockets.js/uws.js',
    ]);
  });

  it('lets each layer import the layers below it, tests import anything, and a layer hold a cycle of its own', () => {
    const allowed = [
      'server/core/log-line.ts → contract/plan.ts',
      'server/domain/rule.ts → contract/plan.ts',
      'server/adapters/store.ts → server/core/log-line.ts',
      'server/adapters/store.ts → server/domain/rule.ts',
      'server/state/cache.ts → server/adapters/store.ts',
      'server/state/cache.ts → contract/plan.ts',
      'server/gateway/pipeline.ts → server/state/cache.ts',
      'server/admin/service.ts → server/state/cache.ts',
      'server/app/main.ts → server/gateway/pipeline.ts',
      'server/app/main.ts → server/admin/service.ts',
      'server/admin/accounts/test-support.ts → server/gateway/pipeline.ts',
      'server/admin/accounts/test-support.ts → server/testing/helper.ts',
      'server/testing/helper.ts → server/app/main.ts',
      'server/gateway/ring-a.ts → server/gateway/ring-b.ts',
      'server/gateway/ring-b.ts → server/gateway/ring-a.ts',
      'console/src/view.ts → contract/plan.ts',
    ];
    expect(imports()).toEqual(expect.arrayContaining(allowed));
    const reported = new Set(cruise.summary.violations.map((v) => `${v.from} → ${shortName(v.to)}`));
    expect(allowed.filter((edge) => reported.has(edge))).toEqual([]);
  });
});
