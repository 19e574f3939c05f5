// The layer map (docs/architecture.md) as rules: `npm run check:layers`.
// A layer may import itself and the layers listed for it; lower layers never import higher ones.
// Paths are relative to the folder the cruise runs from, so test/layers runs these same rules on
// a small tree laid out like this one.
const path = require('node:path');

/** Test code: exempt from the layer rules (it may wire anything together), never imported by production code. */
const testCode = ['\\.test\\.tsx?$', '^server/testing/', '(^|/)test-support\\.ts$', '(^|/)test-fixture\\.ts$'];

/** Every folder of ours; npm packages and Node built-ins are outside the layer map. */
const ours = '^(contract|server|console|bench|scripts|test|clients)/';

/** Each layer and what it may import (itself included). */
const layers = {
  'server/core': ['contract'],
  'server/domain': ['contract'],
  'server/adapters': ['server/core', 'server/domain', 'contract'],
  'server/state': ['server/adapters', 'server/domain', 'server/core', 'contract'],
  'server/gateway': ['server/state', 'server/adapters', 'server/domain', 'server/core', 'contract'],
  'server/admin': ['server/state', 'server/adapters', 'server/domain', 'server/core', 'contract'],
  'server/app': ['server/gateway', 'server/admin', 'server/state', 'server/adapters', 'server/domain', 'server/core', 'contract'],
  'console/src': ['contract'],
  contract: [],
};

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const under = (folders) => `^(${folders.map(escape).join('|')})/`;

const layerRules = Object.entries(layers).map(([layer, allowed]) => ({
  name: `layer:${layer}`,
  comment: allowed.length
    ? `${layer} imports only ${allowed.join(', ')} (docs/architecture.md)`
    : `${layer} imports nothing of ours (docs/architecture.md)`,
  severity: 'error',
  from: { path: under([layer]), pathNot: testCode },
  to: { path: ours, pathNot: under([layer, ...allowed]) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'layer:unknown',
      comment: 'every folder under server/ is a layer of the map: add a new one to .dependency-cruiser.cjs and docs/architecture.md',
      severity: 'error',
      from: {
        path: '^server/',
        pathNot: [...testCode, `^server/(${['core', 'domain', 'adapters', 'state', 'gateway', 'admin', 'app', 'testing'].join('|')})/`],
      },
      to: {},
    },
    {
      name: 'no-test-code-in-production',
      comment: 'production code never imports tests or test support (server/testing, test-support.ts, test-fixture.ts)',
      severity: 'error',
      from: { path: under(['contract', 'server', 'console/src']), pathNot: testCode },
      to: { path: [...testCode, '^test/'] },
    },
    {
      name: 'transport-seam',
      comment: 'the gateway answers through its ClientExchange port (server/gateway/transport.ts); uWebSockets.js stays in server/core/http',
      severity: 'error',
      from: { path: '^server/gateway/' },
      to: { path: ['(^|/)uWebSockets\\.js(/|$)', '(^|/)@trufflesuite/uws-js-unofficial(/|$)'] },
    },
    {
      name: 'no-cycle-across-layers',
      comment: 'a cycle through modules of more than one layer',
      severity: 'error',
      from: { path: '^(contract|console/src|server/[^/]+)/', pathNot: testCode },
      to: { circular: true, via: { pathNot: '^$1/' } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a layer that names a higher layer's types depends on it.
    tsPreCompilationDeps: true,
    // Absolute, so a cruise run from another folder (test/layers' fixture tree) resolves the same way.
    tsConfig: { fileName: path.join(__dirname, 'tsconfig.json') },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
  },
};
