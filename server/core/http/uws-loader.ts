/**
 * Which uWebSockets.js native binary this runtime can load, decided from facts alone so that a
 * start-up on the wrong Node or libc fails with one line that names the cause and the fix,
 * not a dlopen stack or a silent slide onto the slow JavaScript server.
 *
 * The table describes the installed distribution (package.json's `uWebSockets.js`, see
 * docs/decisions.md "Runtime"): the Node lines Switchyard supports, the platforms it ships
 * binaries for, and the glibc each Linux binary needs (its highest GLIBC_ symbol version;
 * uws-loader.test.ts re-reads the installed binaries so a swapped package cannot drift).
 */

export interface UwsRuntime {
  platform: string;
  arch: string;
  /** process.versions.modules: the Node ABI a native addon is built against. */
  abi: number;
  /** Node's major version, for the message when the ABI is not one we know. */
  nodeMajor: number;
  /** glibc of the running process; undefined on Linux means another libc (musl). */
  glibc?: string;
}

export type UwsChoice = { ok: true; file: string } | { ok: false; reason: string };

/** The Node lines Switchyard supports, by the ABI their native addons are built against. */
export const supportedNode: ReadonlyArray<{ node: number; abi: number }> = [
  { node: 20, abi: 115 },
  { node: 22, abi: 127 },
  { node: 24, abi: 137 },
];

/** platform-arch → ABI → the glibc that binary needs (null: not a glibc platform). */
export const shippedBinaries: Readonly<Record<string, Readonly<Record<number, string | null>>>> = {
  'linux-x64': { 115: '2.27', 127: '2.38', 137: '2.38' },
  'linux-arm64': { 115: '2.27', 127: '2.38', 137: '2.38' },
  'linux-arm': { 115: '2.28' },
  'darwin-x64': { 115: null, 127: null, 137: null },
  'darwin-arm64': { 115: null, 127: null, 137: null },
  'win32-x64': { 115: null, 127: null, 137: null },
};

/**
 * Node ABIs whose binary answers 505 to a request line that arrives in more than one read, cut
 * anywhere from its fourth byte on (uWebSockets issue #1776, fixed upstream in v20.66: the
 * Node 22 and 24 binaries have the fix, the Node 20 one predates it). No build on the registry
 * whose Node 20 binary loads below glibc 2.38 has it (docs/decisions.md, "Runtime");
 * uws-parser-limits.test.ts pins it, so a binary that changes it fails there.
 */
export const splitRequestLine505: ReadonlySet<number> = new Set([115]);

/** Systems that first shipped a glibc, to turn a version into something a person can install. */
const glibcSystems: Record<string, string> = {
  '2.27': 'Debian 10, Ubuntu 18.04',
  '2.28': 'Debian 10, Ubuntu 20.04',
  '2.38': 'Debian 13, Ubuntu 24.04',
};

export function binaryFile(platform: string, arch: string, abi: number): string {
  return `uws_${platform}_${arch}_${abi}.node`;
}

export function chooseUwsBinary(rt: UwsRuntime): UwsChoice {
  const target = `${rt.platform}-${rt.arch}`;
  const shipped = shippedBinaries[target];
  if (!shipped) {
    return fail(`uWebSockets.js has no native binary for ${target} — run Switchyard on ${list(Object.keys(shippedBinaries), 'or')}`);
  }
  const isLinux = rt.platform === 'linux';
  if (isLinux && !rt.glibc) {
    return fail(`uWebSockets.js has no native binary for musl libc (Alpine) on ${target} — run Switchyard on a glibc system (Debian, Ubuntu)`);
  }
  const loads = (abi: number) => {
    const need = shipped[abi];
    return need !== undefined && (need === null || atLeast(rt.glibc!, need));
  };
  const supported = supportedNode.find((s) => s.abi === rt.abi);
  if (supported && loads(supported.abi)) return { ok: true, file: binaryFile(rt.platform, rt.arch, rt.abi) };

  // The fix: another supported Node line whose binary loads here, else a newer system.
  const loadable = supportedNode.filter((s) => loads(s.abi));
  const otherNode = loadable.length > 0 ? `run Node ${list(loadable.map((s) => String(s.node)), 'or')}` : undefined;
  const newerSystem = (glibc: string) => `a system with glibc ${glibc}+${glibcSystems[glibc] ? ` (${glibcSystems[glibc]})` : ''}`;
  const easiest = supportedNode
    .filter((s) => typeof shipped[s.abi] === 'string')
    .sort((a, b) => (atLeast(shipped[a.abi]!, shipped[b.abi]!) ? 1 : -1))[0];
  const elsewhere = easiest ? `run Node ${easiest.node} on ${newerSystem(shipped[easiest.abi]!)}` : `run Switchyard on ${list(Object.keys(shippedBinaries), 'or')}`;
  const where = isLinux ? `with glibc ${rt.glibc} on ${target}` : `on ${target}`;

  if (!supported) {
    const lines = list(supportedNode.map((s) => String(s.node)), 'and');
    return fail(`uWebSockets.js: Node ${rt.nodeMajor} (ABI ${rt.abi}) is not supported (Switchyard runs on Node ${lines}) — ${where}, ${otherNode ?? elsewhere}`);
  }
  const node = `Node ${supported.node} (ABI ${rt.abi})`;
  const need = shipped[supported.abi];
  if (typeof need !== 'string') {
    return fail(`uWebSockets.js has no native binary for ${node} on ${target} — ${otherNode ?? elsewhere}`);
  }
  const fix = otherNode ? `${otherNode}, or ${newerSystem(need)}` : `run on ${newerSystem(need)}`;
  return fail(`uWebSockets.js has no native binary for ${node} ${where}; this build needs glibc ≥ ${need} — ${fix}`);
}

/** The facts of the running process. glibc comes from Node's own diagnostic report header. */
export function currentRuntime(): UwsRuntime {
  return {
    platform: process.platform,
    arch: process.arch,
    abi: Number(process.versions.modules),
    nodeMajor: Number(process.versions.node.split('.')[0]),
    glibc: process.platform === 'linux' ? runtimeGlibc() : undefined,
  };
}

function runtimeGlibc(): string | undefined {
  const report = process.report as NodeJS.ProcessReport & { excludeNetwork?: boolean };
  // The report would otherwise resolve every open socket's peer name; none matter here.
  const excluded = report.excludeNetwork;
  report.excludeNetwork = true;
  try {
    const header = (report.getReport() as { header?: { glibcVersionRuntime?: string } }).header;
    return header?.glibcVersionRuntime;
  } finally {
    report.excludeNetwork = excluded;
  }
}

function atLeast(have: string, need: string): boolean {
  const a = have.split('.').map(Number);
  const b = need.split('.').map(Number);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d > 0;
  }
  return true;
}

function list(items: string[], last: 'or' | 'and'): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} ${last} ${items[items.length - 1]}`;
}

function fail(reason: string): UwsChoice {
  return { ok: false, reason };
}
