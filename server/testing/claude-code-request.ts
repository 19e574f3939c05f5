/**
 * Test-only: a request shaped like Claude Code's first call of a session (about 115 KB of JSON):
 * a long system prompt in markdown, a few dozen tools with long descriptions and JSON schemas,
 * and a first user turn carrying its system reminders. Built from varied English and code, so a
 * tokenizer sees text of the kind it will meet (about a quarter of the bytes as tokens), not
 * one repeated phrase. Deterministic: the same arguments give the same bytes.
 */

const SENTENCES = [
  'You are an interactive CLI tool that helps users with software engineering tasks.',
  'Use the instructions below and the tools available to you to assist the user.',
  'IMPORTANT: Assist with defensive security tasks only; refuse to create or improve code that may be used maliciously.',
  'When the user asks about your capabilities, check the documentation before you answer.',
  'Keep your responses short, since they will be displayed on a command line interface.',
  'Answer the user\'s question directly, without elaboration, explanation, or details.',
  'Only use emojis if the user explicitly requests it; avoid using emojis in all communication unless asked.',
  'When you run a non-trivial bash command, explain what the command does and why you are running it.',
  'Before you edit a file, read it first: the edit tool fails on a file it has not seen in this conversation.',
  'Prefer editing existing files in the codebase; never write new files unless they are required.',
  'Follow the conventions of the surrounding code: its libraries, naming, typing and framework choices.',
  'NEVER assume that a given library is available, even if it is well known; check package.json first.',
  'When you create a new component, first look at existing components to see how they are written.',
  'Always follow security best practices: never introduce code that exposes or logs secrets and keys.',
  'Use the TodoWrite tool to plan the task if it requires multiple steps, and mark each item as you go.',
  'Run the lint and typecheck commands (e.g. npm run lint, npm run typecheck, ruff) when you are done.',
  'NEVER commit changes unless the user explicitly asks you to; it is very important to only commit when asked.',
  'The pattern matching uses ripgrep syntax: literal braces need escaping (use `interface\\{\\}` to find `interface{}` in Go code).',
  'Results are returned sorted by modification time, most recent first, limited to 250 entries by default.',
  'When you reference specific functions or pieces of code include the pattern file_path:line_number.',
  'Example: "Clients are marked as failed in the `connectToServer` function in src/services/process.ts:712."',
  'The command argument is required; you can specify an optional timeout in milliseconds (up to 600000ms / 10 minutes).',
  'If the output exceeds 30000 characters, output will be truncated before being returned to you.',
  'Avoid using Bash with the `find`, `grep`, `cat`, `head`, `tail`, `sed`, `awk`, or `echo` commands.',
  'When issuing multiple commands, use the \'&&\' operator to chain them together when each depends on the one before.',
  'Try to maintain your current working directory throughout the session by using absolute paths and avoiding `cd`.',
  'The file_path parameter must be an absolute path, not a relative path; lines longer than 2000 characters are truncated.',
  'It is always better to speculatively read multiple files as a batch that are potentially useful.',
  'Use this tool when you need to ask the user questions during execution, to gather preferences or clarify instructions.',
  'function handleRequest(req: Request): Promise<Response> { return router.dispatch(req.method, req.url, req.body); }',
  'const result = await fetch(`${baseUrl}/v1/items?limit=${limit}&cursor=${cursor}`, { headers: { authorization } });',
  'for i, line in enumerate(open(path, encoding="utf-8")): print(f"{i + 1:>6}\\t{line.rstrip()}")',
];

/** A paragraph of `n` sentences from the list, starting at `seed`; numbered so no two paragraphs repeat. */
function paragraph(seed: number, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(SENTENCES[(seed * 7 + i * 3) % SENTENCES.length]);
  return `${out.join(' ')} (${seed})`;
}

/** `chars` characters or a little more of markdown: headings, paragraphs and bullet lists. */
function prose(seed: number, chars: number): string {
  let text = '';
  for (let i = 0; text.length < chars; i++) {
    const s = seed * 31 + i;
    if (i % 5 === 0) text += `\n# ${SENTENCES[s % SENTENCES.length].split(' ').slice(0, 4).join(' ')}\n`;
    text += i % 3 === 2 ? `- ${paragraph(s, 1)}\n- ${paragraph(s + 1, 1)}\n` : `${paragraph(s, 3)}\n\n`;
  }
  return text;
}

const TOOL_NAMES = [
  'Task', 'Bash', 'Glob', 'Grep', 'ExitPlanMode', 'Read', 'Edit', 'MultiEdit', 'Write', 'NotebookEdit', 'WebFetch',
  'TodoWrite', 'WebSearch', 'BashOutput', 'KillShell', 'SlashCommand', 'AskUserQuestion', 'Skill',
  'mcp__ide__getDiagnostics', 'mcp__ide__executeCode', 'ListMcpResourcesTool', 'ReadMcpResourceTool',
];

interface Tool { name: string; description: string; input_schema: Record<string, unknown> }

function tools(descriptionChars: number): Tool[] {
  return TOOL_NAMES.map((name, i) => {
    const properties: Record<string, unknown> = {};
    for (let j = 0; j < 3 + (i % 5); j++) {
      properties[`${['file_path', 'pattern', 'command', 'description', 'timeout', 'offset', 'limit', 'old_string'][j % 8]}${j >= 8 ? j : ''}`] = j % 4 === 3
        ? { type: 'number', description: paragraph(i * 11 + j, 1) }
        : j % 4 === 2 ? { type: 'array', items: { type: 'object', properties: { content: { type: 'string', minLength: 1 }, status: { type: 'string', enum: ['pending', 'in_progress', 'completed'] } }, required: ['content', 'status'], additionalProperties: false }, description: paragraph(i * 13 + j, 1) }
          : { type: 'string', description: paragraph(i * 17 + j, 1) };
    }
    return {
      name,
      description: prose(i + 100, i < 6 ? descriptionChars * 3 : descriptionChars),
      input_schema: { type: 'object', properties, required: Object.keys(properties).slice(0, 1), additionalProperties: false, $schema: 'http://json-schema.org/draft-07/schema#' },
    };
  });
}

export interface ClaudeCodeShape {
  model: string;
  max_tokens: number;
  system: string;
  user: string;
  tools: Tool[];
}

/** The parts of the request, about 115 KB once written in Anthropic's format. */
export function claudeCodeShape(model: string, scale = 1): ClaudeCodeShape {
  return {
    model,
    max_tokens: 32_000,
    system: `You are Claude Code, Anthropic's official CLI for Claude.\n${prose(1, Math.round(18_000 * scale))}`,
    user: `<system-reminder>\nAs you answer the user's questions, you can use the following context:\n${prose(2, Math.round(4_700 * scale))}</system-reminder>\nFix the failing test in server/gateway/stages/admission.test.ts`,
    tools: tools(Math.round(1_800 * scale)),
  };
}

/** Claude Code's request in Anthropic's Messages format, as it sends it. */
export function claudeCodeMessages(model: string, scale = 1) {
  const s = claudeCodeShape(model, scale);
  return {
    model: s.model,
    max_tokens: s.max_tokens,
    system: [
      { type: 'text' as const, text: 'You are Claude Code, Anthropic\'s official CLI for Claude.', cache_control: { type: 'ephemeral' as const } },
      { type: 'text' as const, text: s.system, cache_control: { type: 'ephemeral' as const } },
    ],
    messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: s.user }] }],
    tools: s.tools.map((t) => ({ ...t, input_schema: { ...t.input_schema, type: 'object' as const } })),
    metadata: { user_id: 'user_0f9e8d7c6b5a49382716a5b4c3d2e1f00f9e8d7c6b5a49382716a5b4c3d2e1f0_account__session_2c0f1a6e-7d3b-4c58-9e21-6b8f0d4a3c77' },
  };
}

/** The same request in OpenAI's Chat Completions format (a client like it on an OpenAI model). */
export function claudeCodeChat(model: string, scale = 1) {
  const s = claudeCodeShape(model, scale);
  return {
    model: s.model,
    max_tokens: s.max_tokens,
    messages: [{ role: 'system' as const, content: s.system }, { role: 'user' as const, content: s.user }],
    tools: s.tools.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.input_schema } })),
  };
}
