import { describe, expect, it } from 'vitest';
import { translation } from './index';
import { settleHostedTools, toolNames, type ToolRule } from './tools';
import { costOf, resolvePrice } from '../../domain/pricing/cost';

const fn = (name: string) => ({ type: 'function', name, parameters: { type: 'object', properties: {} } });
const ns = (name: string, ...fns: string[]) => ({ type: 'namespace', name, description: `${name} tools`, tools: fns.map(fn) });

describe('toolNames', () => {
  it("keeps a namespaced function's own name where no other tool has it, and qualifies it where one does", () => {
    const tools = [fn('spawn_agent'), ns('multi_agent_v1', 'spawn_agent', 'wait_agent'), ns('crm', 'wait_agent', 'find')];
    const names = toolNames(tools);
    expect(names.flat('spawn_agent')).toBe('spawn_agent');
    expect(names.flat('spawn_agent', 'multi_agent_v1')).toBe('multi_agent_v1__spawn_agent');
    expect(names.flat('wait_agent', 'multi_agent_v1')).toBe('multi_agent_v1__wait_agent');
    expect(names.flat('wait_agent', 'crm')).toBe('crm__wait_agent');
    expect(names.flat('find', 'crm')).toBe('find');
    expect(names.client('multi_agent_v1__spawn_agent')).toEqual({ name: 'spawn_agent', namespace: 'multi_agent_v1' });
    expect(names.client('find')).toEqual({ name: 'find', namespace: 'crm' });
    expect(names.client('spawn_agent')).toEqual({ name: 'spawn_agent' });
  });

  it('shortens a qualified name past 64 characters with a hash, still mapped back', () => {
    const long = 'n'.repeat(60);
    const names = toolNames([fn('go'), ns(long, 'go')]);
    const flat = names.flat('go', long);
    expect(flat.length).toBeLessThanOrEqual(64);
    expect(flat).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(names.client(flat)).toEqual({ name: 'go', namespace: long });
  });
});

describe('settleHostedTools', () => {
  const req = () => ({ model: 'm', messages: [], hosted_tools: [{ name: 'web_search', webSearch: {}, refusal: 'no web_search' }, { name: 'file_search', refusal: 'no file_search' }] });

  it('keeps a web search for an Anthropic key and drops the rest into the rule, once each', () => {
    const rule: ToolRule = { policy: 'drop', dropped: ['file_search'] };
    expect(settleHostedTools(req(), 'messages', rule).hosted_tools).toEqual([{ name: 'web_search', webSearch: {}, refusal: 'no web_search' }]);
    expect(rule.dropped).toEqual(['file_search']);
    const chat = settleHostedTools(req(), 'chat', rule);
    expect('hosted_tools' in chat).toBe(false);
    expect(rule.dropped).toEqual(['file_search', 'web_search']);
  });

  it('refuses the first tool the key lacks under refuse', () => {
    expect(() => settleHostedTools(req(), 'messages', { policy: 'refuse', dropped: [] })).toThrow('no file_search');
  });
});

describe('a Responses web search through an Anthropic key', () => {
  it("is Anthropic's web search tool upstream; Codex's cached-only search is not", () => {
    const t = translation('responses', 'messages')!;
    const rule: ToolRule = { policy: 'drop', dropped: [] };
    const body = t.request({ model: 'claude-x', input: 'hi', tools: [{ type: 'web_search', user_location: { type: 'approximate', country: 'NO', city: 'Oslo' } }] }, rule);
    expect(body.tools).toEqual([{ type: 'web_search_20250305', name: 'web_search', user_location: { type: 'approximate', city: 'Oslo', country: 'NO' } }]);
    expect(rule.dropped).toEqual([]);
    const cached = t.request({ model: 'claude-x', input: 'hi', tools: [{ type: 'web_search', external_web_access: false }] }, rule);
    expect(cached.tools).toBeUndefined();
    expect(rule.dropped).toEqual(['web_search']);
  });
});

describe('costOf with web searches', () => {
  it('bills each search at WebSearch per thousand, beside the tokens, with the Rates and Factor', () => {
    const price = resolvePrice('any-model', { ChatPricing: { 'any-model': { InputText: 2, OutputText: 8, WebSearch: 10 } } });
    const usage = { prompt: 1000, completion: 100, reasoning: 0, cached: 0, cacheWrite: 0, webSearches: 3 };
    expect(costOf(usage, price, 1, 1)).toBeCloseTo(0.002 + 0.0008 + 0.03, 15);
    expect(costOf(usage, price, 2, 1.5)).toBeCloseTo((0.002 + 0.0008 + 0.03) * 3, 15);
    expect(costOf({ ...usage, webSearches: 0 }, price, 1, 1)).toBeCloseTo(0.0028, 15);
  });
});
