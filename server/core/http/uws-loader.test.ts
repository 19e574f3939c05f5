import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { binaryFile, chooseUwsBinary, shippedBinaries, supportedNode, type UwsRuntime } from './uws-loader';

const debian12: UwsRuntime = { platform: 'linux', arch: 'x64', abi: 115, nodeMajor: 20, glibc: '2.36' };
const debian13: UwsRuntime = { ...debian12, glibc: '2.41' };
const node = (major: number, abi: number) => ({ nodeMajor: major, abi });

describe('choosing the uWebSockets.js binary', () => {
  it('loads each supported Node line where its glibc allows', () => {
    expect(chooseUwsBinary(debian12)).toEqual({ ok: true, file: 'uws_linux_x64_115.node' });
    expect(chooseUwsBinary({ ...debian13, ...node(20, 115) })).toEqual({ ok: true, file: 'uws_linux_x64_115.node' });
    expect(chooseUwsBinary({ ...debian13, ...node(22, 127) })).toEqual({ ok: true, file: 'uws_linux_x64_127.node' });
    expect(chooseUwsBinary({ ...debian13, ...node(24, 137) })).toEqual({ ok: true, file: 'uws_linux_x64_137.node' });
    expect(chooseUwsBinary({ ...debian13, glibc: '2.38', ...node(24, 137) })).toEqual({ ok: true, file: 'uws_linux_x64_137.node' });
    expect(chooseUwsBinary({ ...debian13, arch: 'arm64', ...node(22, 127) })).toEqual({ ok: true, file: 'uws_linux_arm64_127.node' });
    expect(chooseUwsBinary({ platform: 'darwin', arch: 'arm64', ...node(24, 137) })).toEqual({ ok: true, file: 'uws_darwin_arm64_137.node' });
    expect(chooseUwsBinary({ platform: 'win32', arch: 'x64', ...node(22, 127) })).toEqual({ ok: true, file: 'uws_win32_x64_127.node' });
  });

  it('names the glibc a newer Node needs and the ways out, in one line', () => {
    const r24 = chooseUwsBinary({ ...debian12, ...node(24, 137) });
    expect(r24).toEqual({
      ok: false,
      reason: 'uWebSockets.js has no native binary for Node 24 (ABI 137) with glibc 2.36 on linux-x64; this build needs glibc ≥ 2.38 — run Node 20, or a system with glibc 2.38+ (Debian 13, Ubuntu 24.04)',
    });
    const r22 = chooseUwsBinary({ ...debian12, ...node(22, 127) });
    expect(r22.ok).toBe(false);
    expect(!r22.ok && r22.reason).toMatch(/^uWebSockets\.js has no native binary for Node 22 \(ABI 127\) with glibc 2\.36 on linux-x64; this build needs glibc ≥ 2\.38 — run Node 20, or/);
    // 2.37 is not 2.38, and 2.4 is not 2.40: versions compare by number, not text.
    expect(chooseUwsBinary({ ...debian12, glibc: '2.37', ...node(24, 137) }).ok).toBe(false);
    expect(chooseUwsBinary({ ...debian12, glibc: '2.4', ...node(24, 137) }).ok).toBe(false);
  });

  it('asks for a newer system when no supported Node loads on this glibc', () => {
    expect(chooseUwsBinary({ ...debian12, glibc: '2.17' })).toEqual({
      ok: false,
      reason: 'uWebSockets.js has no native binary for Node 20 (ABI 115) with glibc 2.17 on linux-x64; this build needs glibc ≥ 2.27 — run on a system with glibc 2.27+ (Debian 10, Ubuntu 18.04)',
    });
  });

  it('refuses Node lines Switchyard does not support, naming one that runs here', () => {
    for (const [major, abi] of [[18, 108], [21, 120], [23, 131], [25, 141]]) {
      const choice = chooseUwsBinary({ ...debian12, ...node(major, abi) });
      expect(choice).toEqual({
        ok: false,
        reason: `uWebSockets.js: Node ${major} (ABI ${abi}) is not supported (Switchyard runs on Node 20, 22 and 24) — with glibc 2.36 on linux-x64, run Node 20`,
      });
    }
    const mac = chooseUwsBinary({ platform: 'darwin', arch: 'x64', ...node(23, 131) });
    expect(!mac.ok && mac.reason).toMatch(/on darwin-x64, run Node 20, 22 or 24$/);
  });

  it('refuses platforms, libcs and architectures without a binary', () => {
    const musl = chooseUwsBinary({ ...debian12, glibc: undefined });
    expect(!musl.ok && musl.reason).toBe('uWebSockets.js has no native binary for musl libc (Alpine) on linux-x64 — run Switchyard on a glibc system (Debian, Ubuntu)');
    const bsd = chooseUwsBinary({ platform: 'freebsd', arch: 'x64', ...node(20, 115) });
    expect(!bsd.ok && bsd.reason).toMatch(/^uWebSockets\.js has no native binary for freebsd-x64 — run Switchyard on linux-x64, /);
    const winArm = chooseUwsBinary({ platform: 'win32', arch: 'arm64', ...node(20, 115) });
    expect(winArm.ok).toBe(false);
    // 32-bit ARM Linux has a Node 20 binary only.
    expect(chooseUwsBinary({ ...debian12, arch: 'arm' })).toEqual({ ok: true, file: 'uws_linux_arm_115.node' });
    expect(chooseUwsBinary({ ...debian12, arch: 'arm', ...node(22, 127) })).toEqual({
      ok: false,
      reason: 'uWebSockets.js has no native binary for Node 22 (ABI 127) on linux-arm — run Node 20',
    });
  });
});

describe('the table matches the installed distribution', () => {
  const pkgDir = path.dirname(createRequire(import.meta.url).resolve('uWebSockets.js/package.json'));

  /** The highest GLIBC_x.y symbol version a shared object asks for is the glibc it needs. */
  function glibcNeeded(file: string): string {
    const text = readFileSync(file).toString('latin1');
    const versions = [...text.matchAll(/GLIBC_(\d+)\.(\d+)(?:\.\d+)?\0/g)].map((m) => [Number(m[1]), Number(m[2])] as const);
    versions.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const top = versions[versions.length - 1];
    return top ? `${top[0]}.${top[1]}` : 'none';
  }

  it('ships every binary the table names, needing exactly the glibc it says', () => {
    for (const [target, byAbi] of Object.entries(shippedBinaries)) {
      const [platform, arch] = target.split('-');
      for (const [abi, need] of Object.entries(byAbi)) {
        const file = path.join(pkgDir, binaryFile(platform, arch, Number(abi)));
        expect(existsSync(file), file).toBe(true);
        if (need !== null) expect(glibcNeeded(file), file).toBe(need);
      }
    }
  });

  it('has a linux-x64 binary for every supported Node line', () => {
    for (const { abi } of supportedNode) expect(shippedBinaries['linux-x64'][abi]).toBeTypeOf('string');
  });
});
