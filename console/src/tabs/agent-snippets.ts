/**
 * The coding agents pointed at this gateway, as the Examples tab shows them and as the README's
 * quick start runs them (step 7; console/agent-snippets.test.ts holds the two equal): each in two
 * lines of environment (Gemini CLI also needs its settings to pick API-key sign-in). `key` is a
 * shell expression for the account key (`$SWITCHYARD_API_KEY`).
 */
export type Agent = 'claude' | 'codex' | 'gemini';
export const AGENTS: { id: Agent; label: string }[] = [
  { id: 'claude', label: 'Claude Code' }, { id: 'codex', label: 'Codex CLI' }, { id: 'gemini', label: 'Gemini CLI' },
];

export function agentSnippet(agent: Agent, base: string, key: string, run = ''): string {
  switch (agent) {
    case 'claude':
      return `export ANTHROPIC_BASE_URL=${base}
export ANTHROPIC_API_KEY=${key}
${run}claude -p 'Say hello'`;
    case 'codex':
      // Codex's own OpenAI provider ignores OPENAI_BASE_URL and tries a WebSocket first: a provider of its own, over HTTP.
      return `export OPENAI_API_KEY=${key}
export SWITCHYARD='model_providers.switchyard={name="Switchyard",base_url="${base}/v1",env_key="OPENAI_API_KEY"}'
${run}codex exec -c "$SWITCHYARD" -c model_provider=switchyard -m gpt-5.5 --skip-git-repo-check 'Say hello'`;
    case 'gemini':
      // Gemini CLI sends GEMINI_API_KEY to GOOGLE_GEMINI_BASE_URL only under API-key sign-in, which
      // a headless run takes from settings.json alone (the environment's pick is refused there);
      // headless, it also asks for the folder to be trusted (--skip-trust: for this run).
      return `# Sign in with an API key (this writes ~/.gemini/settings.json; in one of your own, set security.auth.selectedType)
mkdir -p ~/.gemini && echo '{"security":{"auth":{"selectedType":"gemini-api-key"}}}' > ~/.gemini/settings.json
export GOOGLE_GEMINI_BASE_URL=${base}
export GEMINI_API_KEY=${key}
${run}gemini --skip-trust -m gemini-2.5-flash -p 'Say hello'`;
  }
}
