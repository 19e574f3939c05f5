/**
 * The provider families Switchyard knows by name, the one table of them: which hosts serve a
 * family, which model names belong to it, and the LEVEL_MAPPER pattern a new provider key of
 * the family brings. The admin API reads it to complete LEVEL_MAPPER when a key is added and
 * to name `owned_by` in the model list; the proxy's standard provider reads it to treat a key
 * on Anthropic's hosts as Anthropic.
 */
export interface ProviderFamily {
  /** As `owned_by` shows it: `openai`, `anthropic`, … */
  readonly name: string;
  /** The family's domains: a host is the domain or a subdomain of it. */
  readonly domains: readonly string[];
  /** The model names of the family (and the first names of its other offerings). */
  readonly models: RegExp;
  /** The LEVEL_MAPPER entry added for a new key of the family, when none covers it yet. */
  readonly levelPattern: string;
}

export const PROVIDER_FAMILIES: readonly ProviderFamily[] = [
  {
    name: 'openai', domains: ['openai.com'], levelPattern: 'gpt-*',
    models: /^(gpt-|o\d|chatgpt-|text-embedding-3|text-embedding-ada|dall-e|whisper|tts-|omni-moderation|davinci|babbage)/,
  },
  { name: 'anthropic', domains: ['anthropic.com'], levelPattern: 'claude-*', models: /^claude/ },
  { name: 'google', domains: ['googleapis.com'], levelPattern: 'gemini-*', models: /^(gemini|gemma|text-embedding-004|imagen)/ },
  { name: 'deepseek', domains: ['deepseek.com'], levelPattern: 'deepseek-*', models: /^deepseek/ },
  { name: 'mistral', domains: ['mistral.ai'], levelPattern: 'mistral-*', models: /^(mistral|codestral|ministral|pixtral|magistral)/ },
  { name: 'xai', domains: ['x.ai'], levelPattern: 'grok-*', models: /^grok/ },
  { name: 'cohere', domains: ['cohere.com', 'cohere.ai'], levelPattern: 'command-*', models: /^(command|embed-|rerank-)/ },
  { name: 'perplexity', domains: ['perplexity.ai'], levelPattern: 'sonar*', models: /^sonar/ },
];

const ANTHROPIC = PROVIDER_FAMILIES.find((f) => f.name === 'anthropic')!;

const within = (host: string, domain: string) => host === domain || host.endsWith(`.${domain}`);

/** The family of a provider host (`api.openai.com`, `api.openai.com:443`, any letter case). */
export function familyOfHost(host: string): ProviderFamily | undefined {
  const bare = host.toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
  return PROVIDER_FAMILIES.find((f) => f.domains.some((d) => within(bare, d)));
}

/** The family a model name belongs to (`gpt-4o` → openai). */
export function familyOfModel(model: string): ProviderFamily | undefined {
  return PROVIDER_FAMILIES.find((f) => f.models.test(model));
}

/** Anthropic's own hosts, where the standard provider speaks Anthropic's API. */
export function isAnthropicHost(host: string): boolean {
  return familyOfHost(host) === ANTHROPIC;
}
