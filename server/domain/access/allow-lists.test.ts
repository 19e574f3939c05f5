import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../contract/errors';
import { MapperError } from '../mapping/mappers';
import {
  ANY, assertWithin, canonicalEntry, editList, ipRange, listTokens, parseAllowIps, parseAllowLevels, parseAllowModels,
  parseResourceList, parseResourcePaths, parseResources,
} from './allow-lists';

const refusal = (fn: () => unknown) => {
  try { fn(); } catch (err) { return err; }
  throw new Error('expected a refusal');
};

describe('the grammar', () => {
  it('splits on white space and commas', () => {
    expect(listTokens(' 1, 2,,3\n4 ')).toEqual(['1', '2', '3', '4']);
    expect(listTokens('')).toEqual([]);
  });

  it('reads IP entries: an address, or a range with its prefix length within the family', () => {
    expect(ipRange('10.0.0.0/8')).toEqual({ type: 'ipv4', address: '10.0.0.0', bits: 8, max: 32 });
    expect(ipRange('192.0.2.7')).toEqual({ type: 'ipv4', address: '192.0.2.7', bits: 32, max: 32 });
    expect(ipRange('2001:db8::/32')).toEqual({ type: 'ipv6', address: '2001:db8::', bits: 32, max: 128 });
    for (const bad of ['10.0.0.0/33', '10.0.0.0/', '10.0.0.0//', '10.0.0.0/8/9', '10.0.0.0/1e1', '10.0.0.0/0x8', 'garbage', '::/129', '']) {
      expect(ipRange(bad), bad).toBeNull();
    }
  });

  it('gives each field its stored form, or null', () => {
    expect(canonicalEntry('AllowLevels', '007')).toBe('7');
    expect(canonicalEntry('AllowLevels', '1001')).toBeNull();
    expect(canonicalEntry('AllowModels', 'gpt-4o*')).toBe('gpt-4o*');
    expect(canonicalEntry('AllowModels', '-gpt')).toBeNull();
    expect(canonicalEntry('Resources', '/v1/embed*')).toBe('/v1/embed*');
    expect(canonicalEntry('Resources', 'v1/chat')).toBeNull();
    expect(canonicalEntry('Resources', `/${'a'.repeat(200)}`)).toBeNull();
    expect(canonicalEntry('AllowIPs', '10.0.0.0/8')).toBe('10.0.0.0/8');
  });
});

describe('matching (the proxy)', () => {
  it('AllowIPs: addresses and CIDR of both families, * and -*', () => {
    const ips = parseAllowIps('118.23.21.0/24, 119.24.12.11 2001:db8::/32 -10.0.0.1');
    expect(ips.allows('118.23.21.77')).toBe(true);
    expect(ips.allows('118.23.22.1')).toBe(false);
    expect(ips.allows('119.24.12.11')).toBe(true);
    expect(ips.allows('2001:db8::5')).toBe(true);
    expect(ips.allows('10.0.0.1')).toBe(false);
    expect(ips.allows('not an ip')).toBe(false);
    expect(parseAllowIps('')).toBe(ANY);
    expect(parseAllowIps('10.0.0.1 *')).toBe(ANY);
    expect(parseAllowIps('-*').allows('1.2.3.4')).toBe(false);
    expect(parseAllowIps('-*').allows('127.0.0.1')).toBe(true);
    expect(parseAllowIps('-*').allows('::1')).toBe(true);
  });

  it('an entry the grammar refuses grants nothing, and a list of only such entries nothing at all', () => {
    expect(parseAllowIps('garbage').allows('127.0.0.1')).toBe(false);
    // Read as /0 before the grammar was one: the whole address space.
    expect(parseAllowIps('10.0.0.0//').allows('8.8.8.8')).toBe(false);
    expect(parseAllowIps('10.0.0.0/1e1 192.0.2.7').allows('10.1.0.0')).toBe(false);
    expect(parseAllowLevels('1001 2').allows(1001)).toBe(false);
    expect(parseAllowLevels('1001 2').allows(2)).toBe(true);
    expect(parseResources('chat').allows('/v1/chat/completions')).toBe(false);
  });

  it('AllowModels: exact names and patterns', () => {
    const m = parseAllowModels('gpt-4* claude-3-haiku');
    expect([m.allows('gpt-4o'), m.allows('claude-3-haiku'), m.allows('claude-3-opus')]).toEqual([true, true, false]);
    expect(parseAllowModels('-*').allows('gpt-4o')).toBe(false);
    expect(parseAllowModels('*').allows('x')).toBe(true);
  });

  it('AllowLevels', () => {
    const l = parseAllowLevels('1, 3 03');
    expect([l.allows(1), l.allows(2), l.allows(3)]).toEqual([true, false, true]);
    expect(parseAllowLevels('-*').allows(1)).toBe(false);
  });

  it('Resources: prefixes, a trailing *, the short aliases; -* allows no path', () => {
    const r = parseResources('/v1/chat/completions /v1/embed*');
    expect([r.allows('/v1/chat/completions'), r.allows('/chat/completions'), r.allows('/v1/embeddings'), r.allows('/v1/messages')]).toEqual([true, true, true, false]);
    expect(parseResources('-*').allows('/v1/chat/completions')).toBe(false);
    expect(parseResources('*')).toBe(ANY);
    expect(parseResources('')).toBe(ANY);
  });

  it('the Owner RESOURCES list matches the same way', () => {
    const r = parseResourceList(parseResourcePaths('/v1/chat/*, /v1/models'));
    expect([r.allows('/chat/completions'), r.allows('/v1/models'), r.allows('/v1/embeddings')]).toEqual([true, true, false]);
    expect(parseResourceList([])).toBe(ANY);
  });
});

describe('checking and editing (the admin API)', () => {
  it('applies edits left to right and stores entries in their canonical form', () => {
    expect(editList('AllowLevels', '', '01 2 2')).toBe('1 2');
    expect(editList('AllowLevels', '1 2', '-2')).toBe('1');
    expect(editList('AllowLevels', '1', '-1')).toBe('-*');
    expect(editList('AllowLevels', '1', '*')).toBe('');
    expect(editList('AllowLevels', '1', '')).toBe('');
    expect(editList('AllowModels', '-*', 'gpt-4o')).toBe('gpt-4o');
    expect(editList('AllowIPs', '10.0.0.0/8', '-* 192.0.2.7')).toBe('192.0.2.7');
    expect(editList('Resources', '', '-*')).toBe('-*');
  });

  it('refuses an entry the grammar does not accept, naming field and entry', () => {
    const err = refusal(() => editList('AllowIPs', '', '10.0.0.0/33')) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect([err.status, err.message]).toEqual([400, 'AllowIPs: "10.0.0.0/33" is not an IP address or CIDR range']);
    expect((refusal(() => editList('AllowLevels', '', '1001')) as ApiError).message).toBe('AllowLevels: "1001" is not a Level (0-1000)');
    expect((refusal(() => editList('Resources', '', 'chat')) as ApiError).message).toContain('is not a path');
    expect((refusal(() => editList('AllowModels', '', 'gpt-4o? claude')) as ApiError).status).toBe(400);
  });

  it('what a stored list grants on write is what the proxy lets through', () => {
    const stored = editList('AllowIPs', '', '10.0.0.0/8 2001:db8::1');
    expect(parseAllowIps(stored).allows('10.200.0.1')).toBe(true);
    expect(parseAllowIps(stored).allows('2001:db8::1')).toBe(true);
    expect(parseAllowIps(editList('Resources', '/v1/', '-/v1/')).allows('127.0.0.1')).toBe(true);
    expect(parseResources(editList('Resources', '/v1/', '-/v1/')).allows('/v1/models')).toBe(false);
  });

  it('keeps a child within its parent', () => {
    expect(() => assertWithin('AllowIPs', '10.1.0.0/16 10.2.3.4', '10.0.0.0/8')).not.toThrow();
    expect(() => assertWithin('AllowIPs', '10.0.0.0/7', '10.0.0.0/8')).toThrow(/not within/);
    expect(() => assertWithin('AllowIPs', '2001:db8::1', '10.0.0.0/8')).toThrow(/not within/);
    expect(() => assertWithin('AllowModels', 'gpt-4o-mini', 'gpt-4*')).not.toThrow();
    expect(() => assertWithin('AllowModels', 'claude-3', 'gpt-4*')).toThrow(/not within/);
    expect(() => assertWithin('Resources', '/v1/chat/completions', '/v1/chat/*')).not.toThrow();
    expect(() => assertWithin('AllowLevels', '', '1 2')).toThrow(/cannot be unrestricted/);
    expect(() => assertWithin('AllowLevels', '1', '-*')).toThrow(/allows nothing/);
    expect(() => assertWithin('AllowLevels', '-*', '-*')).not.toThrow();
    expect(() => assertWithin('AllowLevels', '5', '')).not.toThrow();
    expect((refusal(() => assertWithin('AllowLevels', '3', '1 2')) as ApiError).apiCode).toBe('wider_than_parent');
  });

  it('the Owner RESOURCES: checked paths without repeats, refusals as MapperError naming the field', () => {
    expect(parseResourcePaths('/v1/chat/completions, /v1/embeddings /v1/chat/completions')).toEqual(['/v1/chat/completions', '/v1/embeddings']);
    expect(parseResourcePaths('')).toEqual([]);
    const err = refusal(() => parseResourcePaths('/v1/ chat', 'Resources'));
    expect(err).toBeInstanceOf(MapperError);
    expect((err as Error).message).toBe('Resources: "chat" is not a path');
  });
});
