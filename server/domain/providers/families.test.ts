import { describe, expect, it } from 'vitest';
import { cataloguedModelNames } from '../pricing/catalogue';
import { globToRegExp } from '../mapping/mappers';
import { PROVIDER_FAMILIES, familyOfHost, familyOfModel, isAnthropicHost } from './families';

describe('provider families', () => {
  it('finds a family by its domains and their subdomains, whatever the port and letter case', () => {
    expect(familyOfHost('api.openai.com')?.name).toBe('openai');
    expect(familyOfHost('API.OpenAI.com:443')?.name).toBe('openai');
    expect(familyOfHost('openai.com')?.levelPattern).toBe('gpt-*');
    expect(familyOfHost('api.anthropic.com')?.levelPattern).toBe('claude-*');
    expect(familyOfHost('us-central1-aiplatform.googleapis.com')?.name).toBe('google');
    expect(familyOfHost('api.cohere.ai')?.name).toBe('cohere');
    expect(familyOfHost('api.cohere.com')?.name).toBe('cohere');
    expect(familyOfHost('api.x.ai')?.name).toBe('xai');
  });

  it('does not take a look-alike host for a family', () => {
    for (const host of ['notopenai.com', 'openai.com.example.net', 'anthropic.community', 'max.ai', '127.0.0.1:8080', 'localhost']) {
      expect(familyOfHost(host), host).toBeUndefined();
    }
    expect(isAnthropicHost('api.anthropic.com')).toBe(true);
    expect(isAnthropicHost('anthropic.com')).toBe(true);
    expect(isAnthropicHost('myanthropic.com')).toBe(false);
    expect(isAnthropicHost('api.openai.com')).toBe(false);
  });

  it('finds a model\'s family by its name', () => {
    expect(familyOfModel('gpt-4o')?.name).toBe('openai');
    expect(familyOfModel('o3-mini')?.name).toBe('openai');
    expect(familyOfModel('text-embedding-3-small')?.name).toBe('openai');
    expect(familyOfModel('claude-sonnet-4-5')?.name).toBe('anthropic');
    expect(familyOfModel('gemini-2.5-pro')?.name).toBe('google');
    expect(familyOfModel('codestral-latest')?.name).toBe('mistral');
    expect(familyOfModel('sonar-pro')?.name).toBe('perplexity');
    expect(familyOfModel('house-model')).toBeUndefined();
  });

  it('the LEVEL_MAPPER pattern of a family covers only names of that family', () => {
    for (const f of PROVIDER_FAMILIES) {
      const re = globToRegExp(f.levelPattern);
      const covered = cataloguedModelNames().filter((m) => re.test(m));
      for (const m of covered) expect(familyOfModel(m)?.name, `${f.levelPattern} covers ${m}`).toBe(f.name);
    }
  });

  it('names the family of the models people call most', () => {
    const common = ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-5', 'o3', 'o4-mini', 'text-embedding-3-small', 'claude-sonnet-4-5', 'claude-haiku-4-5',
      'gemini-2.5-pro', 'gemini-2.5-flash', 'text-embedding-004', 'deepseek-chat', 'mistral-large-latest', 'grok-4', 'command-a', 'sonar-pro'];
    const unnamed = common.filter((m) => !familyOfModel(m));
    expect(unnamed).toEqual([]);
  });
});
