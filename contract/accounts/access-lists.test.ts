import { isIP } from 'node:net';
import { describe, expect, it } from 'vitest';
import { canonicalEntry, ipFamily, ipRange } from './access-lists';

/** The grammar runs in the browser too, so it cannot use node:net; it must agree with it. */
describe('ipFamily', () => {
  const samples = [
    '10.0.0.1', '255.255.255.255', '0.0.0.0', '192.0.2.7', '256.1.1.1', '1.2.3', '1.2.3.4.5', '01.2.3.4', '1.2.3.-4', ' 1.2.3.4', '1..2.3',
    '::', '::1', '1::', '2001:db8::', '2001:db8::8a2e:370:7334', '2001:0db8:0000:0000:0000:ff00:0042:8329', '::ffff:192.0.2.7',
    '1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7::', '::2:3:4:5:6:7:8', '1::2::3', ':1::', '1::2:', 'g::1', '12345::1',
    '1:2:3:4:5:6:1.2.3.4', '1:2:3:4:5:6:7:1.2.3.4', '1.2.3.4::', '::1.2.3.4', 'fe80::1:2', ':', '', 'localhost', '1:2',
  ];
  it.each(samples)('%s as node:net does', (s) => {
    expect(ipFamily(s)).toBe(isIP(s));
  });
});

describe('canonicalEntry', () => {
  it('takes addresses and CIDR ranges, nothing else, for AllowIPs', () => {
    expect(ipRange('2001:db8::/32')).toEqual({ type: 'ipv6', address: '2001:db8::', bits: 32, max: 128 });
    for (const ok of ['10.0.0.0/8', '192.0.2.7', '::1', '2001:db8::/128']) expect(canonicalEntry('AllowIPs', ok), ok).toBe(ok);
    for (const bad of ['10.0.0.0/33', '10.0.0', 'example.com', '10.0.0.0/', '::1/129']) expect(canonicalEntry('AllowIPs', bad), bad).toBeNull();
  });
});
