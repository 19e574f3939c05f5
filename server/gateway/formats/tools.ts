import { createHash } from 'node:crypto';
import type { ProviderEndpoint } from '../providers/types';
import { DEFAULT_UNSUPPORTED_TOOLS, type UnsupportedToolsPolicy } from '../../domain/providers/unsupported-tools';
import { Untranslatable, type ChatRequest, type Json, type WebSearchCall } from './types';

/**
 * The one home of the rule for tools a provider lacks, on a translated call (docs/proxy.md,
 * "Hosted and grouped tools"):
 * - a Responses `namespace` tool becomes its functions under names the answer maps back, so the
 *   client sees its own names and namespace (`toolNames`);
 * - a tool the provider would run itself (OpenAI's hosted tools, Anthropic's server tools) is read
 *   into a neutral `HostedTool`; the target runs it when it has an equivalent (a web search on an
 *   Anthropic key), else the Owner's UNSUPPORTED_TOOLS drops it (the default, named in the
 *   answer's `x-switchyard-dropped` header and the request log) or refuses it with today's message
 *   (`settleHostedTools`).
 * A call in the key's own format keeps all its tools: the provider itself runs or refuses them.
 */

/** What one translated request does with the tools its provider lacks, and the names it dropped (for the header and the request log). */
export interface ToolRule {
  policy: UnsupportedToolsPolicy;
  dropped: string[];
}

export interface WebSearchOptions {
  maxUses?: number;
  allowedDomains?: string[];
  blockedDomains?: string[];
  userLocation?: Json;
}

/** A tool the provider runs itself, as a client format's reader found it. */
export interface HostedTool {
  /** What the header and the request log call it: the tool's name (Anthropic) or its type (Responses). */
  name: string;
  /** Set when it is a web search another format can run; absent for a tool no other format has. */
  webSearch?: WebSearchOptions;
  /** The 400 it gets under UNSUPPORTED_TOOLS=refuse: the message a call with it got before it could be dropped. */
  refusal: string;
}

/** The canonical request's hosted tools, beside its function tools (an extension of the canonical form, as thinking_blocks are). */
export const hostedToolsOf = (req: ChatRequest): HostedTool[] => (Array.isArray(req.hosted_tools) ? (req.hosted_tools as HostedTool[]) : []);

/**
 * The canonical request with the hosted tools `upstream` can run kept (its provider format
 * writes them), the others dropped into `rule.dropped` or refused (Untranslatable), per the
 * rule's policy; without a rule, the default policy.
 */
export function settleHostedTools(req: ChatRequest, upstream: ProviderEndpoint, rule: ToolRule | undefined): ChatRequest {
  const hosted = hostedToolsOf(req);
  if (req.hosted_tools === undefined) return req;
  const { hosted_tools: _, ...rest } = req;
  const kept: HostedTool[] = [];
  for (const t of hosted) {
    if (upstream === 'messages' && t.webSearch) kept.push(t);
    else if ((rule?.policy ?? DEFAULT_UNSUPPORTED_TOOLS) === 'refuse') throw new Untranslatable(t.refusal);
    else if (rule && !rule.dropped.includes(t.name)) rule.dropped.push(t.name);
  }
  const out: ChatRequest = kept.length ? { ...rest, hosted_tools: kept } : rest;
  // A choice of a tool that is gone, or among tools that are all gone, asks for nothing the provider can do.
  const chosen = (out.tool_choice as Json | undefined)?.function?.name;
  if (typeof chosen === 'string' && hosted.some((t) => t.name === chosen && !kept.includes(t))) delete out.tool_choice;
  if (!kept.length && !(Array.isArray(out.tools) && out.tools.length)) {
    delete out.tools;
    delete out.tool_choice;
    delete out.parallel_tool_calls;
  }
  return out;
}

// ---- OpenAI Responses ------------------------------------------------------------------------

/** Responses tools the provider runs itself: none has an equivalent on a chat key; web search has one on an Anthropic key. */
const RESPONSES_HOSTED = new Set(['web_search', 'web_search_preview', 'web_search_preview_2025_03_11', 'web_search_2025_08_26', 'file_search', 'code_interpreter', 'image_generation', 'mcp']);

/** A Responses tool the provider runs itself, as a HostedTool; null for any other tool. */
export function responsesHostedTool(t: Json): HostedTool | null {
  const type = String(t?.type);
  if (!RESPONSES_HOSTED.has(type)) return null;
  const name = type.startsWith('web_search') ? 'web_search' : type;
  const tool: HostedTool = { name, refusal: `a key without the Responses API has no ${type} tool` };
  // `external_web_access: false` asks for cached pages only (Codex's default), which Anthropic's live search cannot promise.
  if (name === 'web_search' && t.external_web_access !== false) {
    const domains = t.filters?.allowed_domains;
    tool.webSearch = {
      ...(Array.isArray(domains) && domains.length ? { allowedDomains: domains.map(String) } : {}),
      ...(t.user_location && typeof t.user_location === 'object' ? { userLocation: t.user_location } : {}),
    };
  }
  return tool;
}

/** A function's name inside a namespace, as the client calls it. */
export interface ClientToolName {
  name: string;
  namespace?: string;
}

/** The names the provider sees for a request's namespaced functions, both ways. */
export interface ToolNames {
  /** The provider's name for a function the client names (with its namespace, when it has one). */
  flat(name: string, namespace?: unknown): string;
  /** The client's name (and namespace) for a name the provider answered with. */
  client(flat: string): ClientToolName;
}

const PLAIN: ToolNames = { flat: (name) => name, client: (name) => ({ name }) };

/** OpenAI's and Anthropic's limit on a function name: letters, digits, `_` and `-`, at most 64. */
const MAX_NAME = 64;

const memo = new WeakMap<object, ToolNames>();

/**
 * The provider's names for the functions of a request's `namespace` tools: the function's own
 * name where no other tool has it (what the namespace's instructions call it), else
 * `<namespace>__<name>`, shortened with a hash past 64 characters. Deterministic from the
 * request's tools, so the answer (whole or streamed, or kept for previous_response_id) maps
 * back from the request alone.
 */
export function toolNames(tools: unknown): ToolNames {
  if (!Array.isArray(tools) || !tools.some((t) => t?.type === 'namespace')) return PLAIN;
  const hit = memo.get(tools);
  if (hit) return hit;
  const taken = new Set<string>();
  for (const t of tools) if (t?.type !== 'namespace' && typeof t?.name === 'string') taken.add(t.name);
  const counts = new Map<string, number>();
  for (const ns of tools) if (ns?.type === 'namespace' && Array.isArray(ns.tools)) for (const f of ns.tools) counts.set(String(f?.name), (counts.get(String(f?.name)) ?? 0) + 1);
  const toFlat = new Map<string, string>();
  const toClient = new Map<string, ClientToolName>();
  for (const ns of tools) {
    if (ns?.type !== 'namespace' || !Array.isArray(ns.tools)) continue;
    const namespace = String(ns.name);
    for (const f of ns.tools) {
      const name = String(f?.name);
      let flat = !taken.has(name) && counts.get(name) === 1 ? name : `${namespace}__${name}`;
      if (flat.length > MAX_NAME || taken.has(flat)) flat = `${flat.slice(0, MAX_NAME - 9)}_${createHash('sha256').update(`${namespace}\n${name}`).digest('hex').slice(0, 8)}`;
      taken.add(flat);
      toFlat.set(`${namespace}\n${name}`, flat);
      toClient.set(flat, { name, namespace });
    }
  }
  const names: ToolNames = {
    flat: (name, namespace) => (typeof namespace === 'string' ? toFlat.get(`${namespace}\n${name}`) ?? name : name),
    client: (flat) => toClient.get(flat) ?? { name: flat },
  };
  memo.set(tools, names);
  return names;
}

/** A Responses function tool (top-level or inside a namespace) as a canonical one, under the provider's name. */
function functionTool(t: Json, name: string): Json {
  return { type: 'function', function: { name, ...(t.description ? { description: t.description } : {}), parameters: t.parameters ?? { type: 'object', properties: {} }, ...(typeof t.strict === 'boolean' ? { strict: t.strict } : {}) } };
}

/** A Responses request's tools as canonical function tools and hosted tools. */
export function responsesTools(tools: Json[]): { functions: Json[]; hosted: HostedTool[] } {
  const names = toolNames(tools);
  const functions: Json[] = [];
  const hosted: HostedTool[] = [];
  const noTool = (type: unknown) => new Untranslatable(`a key without the Responses API has no ${String(type)} tool`);
  for (const t of tools) {
    if (t?.type === 'function') functions.push(functionTool(t, t.name));
    else if (t?.type === 'namespace') {
      for (const f of Array.isArray(t.tools) ? t.tools : []) {
        if (f?.type !== 'function') throw noTool(f?.type);
        functions.push(functionTool(f, names.flat(f.name, t.name)));
      }
    } else {
      const h = responsesHostedTool(t);
      if (!h) throw noTool(t?.type);
      hosted.push(h);
    }
  }
  return { functions, hosted };
}

// ---- Anthropic ---------------------------------------------------------------------------------

/** Anthropic's server tools (the provider runs them; `@anthropic-ai/sdk`'s ToolUnion lists their versions). */
const ANTHROPIC_SERVER_TOOL = /^(web_search|web_fetch|code_execution|tool_search_tool_regex|tool_search_tool_bm25)_\d{8}$/;

/** An Anthropic server tool as a HostedTool; null for any other tool type. */
export function anthropicHostedTool(t: Json): HostedTool | null {
  const m = ANTHROPIC_SERVER_TOOL.exec(String(t?.type));
  if (!m) return null;
  const tool: HostedTool = { name: typeof t.name === 'string' && t.name ? t.name : m[1], refusal: `an OpenAI-format key has no Anthropic server tool ${String(t.type)}` };
  if (m[1] === 'web_search') {
    tool.webSearch = {
      ...(typeof t.max_uses === 'number' ? { maxUses: t.max_uses } : {}),
      ...(Array.isArray(t.allowed_domains) ? { allowedDomains: t.allowed_domains } : {}),
      ...(Array.isArray(t.blocked_domains) ? { blockedDomains: t.blocked_domains } : {}),
      ...(t.user_location && typeof t.user_location === 'object' ? { userLocation: t.user_location } : {}),
    };
  }
  return tool;
}

/** A kept web search as Anthropic's web search tool (docs.claude.com, "Web search tool"). */
export function anthropicWebSearchTool(w: WebSearchOptions): Json {
  return {
    type: 'web_search_20250305', name: 'web_search',
    ...(w.maxUses !== undefined ? { max_uses: w.maxUses } : {}),
    ...(w.allowedDomains ? { allowed_domains: w.allowedDomains } : {}),
    ...(w.blockedDomains ? { blocked_domains: w.blockedDomains } : {}),
    ...(w.userLocation ? { user_location: { type: 'approximate', ...pick(w.userLocation, ['city', 'region', 'country', 'timezone']) } } : {}),
  };
}

function pick(o: Json, keys: string[]): Json {
  const out: Json = {};
  for (const k of keys) if (typeof o[k] === 'string') out[k] = o[k];
  return out;
}

/** The query of Anthropic's server_tool_use input for a web search (its JSON text when streamed). */
export function searchQuery(input: unknown): string {
  let v = input;
  if (typeof v === 'string') {
    try { v = JSON.parse(v); } catch { return ''; }
  }
  const q = (v as Json | null)?.query;
  return typeof q === 'string' ? q : '';
}

/** Anthropic's web_search_tool_result content (results, or an error object) as a neutral search. */
export function webSearchCall(id: string, query: string, content: unknown): WebSearchCall {
  if (!Array.isArray(content)) return { id, query, sources: [], failed: true };
  return { id, query, sources: content.filter((r) => r?.type === 'web_search_result' && typeof r.url === 'string').map((r) => r.url as string) };
}

/** The web searches of a whole Anthropic answer, in order: each server_tool_use paired with its result. */
export function anthropicWebSearches(blocks: Json[]): WebSearchCall[] {
  const queries = new Map<string, string>();
  const out: WebSearchCall[] = [];
  for (const b of blocks) {
    if (b?.type === 'server_tool_use' && b.name === 'web_search') queries.set(String(b.id), searchQuery(b.input));
    else if (b?.type === 'web_search_tool_result') out.push(webSearchCall(String(b.tool_use_id), queries.get(String(b.tool_use_id)) ?? '', b.content));
  }
  return out;
}
