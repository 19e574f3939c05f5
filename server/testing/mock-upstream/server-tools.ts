import { mockId, splitText, type Frame } from './common';

/**
 * The tools the providers run themselves, as the mock upstream checks and answers them.
 *
 * Anthropic refuses a tool whose `type` it does not know (a server tool's misspelt or future
 * version, an OpenAI tool shape such as `function`) with 400 invalid_request_error, in its
 * pydantic wording: "tools.1: Input tag 'web_fetch_20250910' found using 'type' does not match any
 * of the expected tags: 'bash_20250124', …, 'custom', …" (the API's answer quoted in
 * anthropics/anthropic-sdk-go#235 and anthropics/claude-code#61624). The tags are those of
 * `@anthropic-ai/sdk`'s ToolUnion (1.12.0).
 */
const ANTHROPIC_TOOL_TAGS = [
  'bash_20250124', 'browser_toolset_20260801', 'code_execution_20250522', 'code_execution_20250825', 'code_execution_20260120', 'code_execution_20260521',
  'computer_toolset_20260801', 'custom', 'memory_20250818', 'text_editor_20250124', 'text_editor_20250429', 'text_editor_20250728',
  'tool_search_tool_bm25', 'tool_search_tool_bm25_20251119', 'tool_search_tool_regex', 'tool_search_tool_regex_20251119',
  'web_fetch_20250910', 'web_fetch_20260209', 'web_fetch_20260309', 'web_fetch_20260318', 'web_search_20250305', 'web_search_20260209', 'web_search_20260318',
];
const KNOWN = new Set(ANTHROPIC_TOOL_TAGS);

/** Anthropic's refusal of the first tool of an unknown type; null when every tool passes. */
export function anthropicToolProblem(tools: unknown): string | null {
  if (!Array.isArray(tools)) return null;
  for (const [i, t] of tools.entries()) {
    const type = (t as { type?: unknown })?.type;
    if (type === undefined || (typeof type === 'string' && KNOWN.has(type))) continue;
    return `tools.${i}: Input tag '${String(type)}' found using 'type' does not match any of the expected tags: ${ANTHROPIC_TOOL_TAGS.map((x) => `'${x}'`).join(', ')}`;
  }
  return null;
}

/**
 * OpenAI's Chat Completions takes only `function` and `custom` tools; any other type (a Responses
 * hosted tool such as `web_search`) is 400 invalid_value on `tools[i].type` (API reference,
 * Chat Completions "tools": "A list of tools the model may call. You can provide either custom
 * tools or function tools").
 */
export function chatToolProblem(tools: unknown): { message: string; param: string } | null {
  if (!Array.isArray(tools)) return null;
  for (const [i, t] of tools.entries()) {
    const type = (t as { type?: unknown })?.type;
    if (type === 'function' || type === 'custom') continue;
    return { message: `Invalid value: '${String(type)}'. Supported values are: 'function' and 'custom'.`, param: `tools[${i}].type` };
  }
  return null;
}

/** A web search the mock runs when the request offers Anthropic's web search tool: the query and the pages it finds. */
export interface MockWebSearch {
  query: string;
  results: { url: string; title: string }[];
}

/** The request offers Anthropic's web search tool (any version). */
export const offersWebSearch = (tools: unknown): boolean =>
  Array.isArray(tools) && tools.some((t) => typeof t?.type === 'string' && t.type.startsWith('web_search_'));

/**
 * What Anthropic answers for one search it ran (docs.claude.com, "Web search tool": a
 * `server_tool_use` block with the query, then a `web_search_tool_result` block with the results,
 * each with its `encrypted_content`, before the text; the usage counts it in
 * `server_tool_use.web_search_requests`).
 */
export function webSearchBlocks(w: MockWebSearch): { id: string; use: Record<string, unknown>; result: Record<string, unknown> } {
  const id = mockId('srvtoolu_');
  return {
    id,
    use: { type: 'server_tool_use', id, name: 'web_search', input: { query: w.query } },
    result: {
      type: 'web_search_tool_result', tool_use_id: id,
      content: w.results.map((r) => ({ type: 'web_search_result', url: r.url, title: r.title, encrypted_content: `enc_${Buffer.from(r.url).toString('base64')}`, page_age: null })),
    },
  };
}

/** The same search as Anthropic streams it: the tool use with its query as input_json_delta, then the result block whole. */
export function webSearchFrames(w: MockWebSearch, index: number): Frame[] {
  const b = webSearchBlocks(w);
  const ev = (type: string, fields: Record<string, unknown>): Frame => ({ event: type, data: { type, ...fields } });
  return [
    ev('content_block_start', { index, content_block: { ...b.use, input: {} } }),
    ...splitText(JSON.stringify(b.use.input), 2).map((p) => ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: p } })),
    ev('content_block_stop', { index }),
    ev('content_block_start', { index: index + 1, content_block: b.result }),
    ev('content_block_stop', { index: index + 1 }),
  ];
}
