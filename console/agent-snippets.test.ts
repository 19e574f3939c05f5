/** The Examples tab's coding-agent, Gemini and Bedrock snippets are the README's steps 7 and 8, which test/readme runs. */
import { describe, expect, it } from 'vitest';
import { ProviderKeyCreate } from '../contract/keys/schemas';
import { markedBlocks, shellBlocks } from '../test/readme/blocks';
import { AGENTS, agentSnippet } from './src/tabs/agent-snippets';
import { genaiSnippet, KEY_BODIES, KEY_KINDS, providerKeySnippet } from './src/tabs/gemini-bedrock-snippets';

const README_GATEWAY = 'http://127.0.0.1:8080';

describe('coding-agent snippets', () => {
  it('are the README quick start\'s blocks, with the README\'s gateway and key', () => {
    const blocks = markedBlocks().filter((b) => b.kind === 'sh').map((b) => b.code);
    for (const { id } of AGENTS) expect(blocks, id).toContain(agentSnippet(id, README_GATEWAY, '$ALICE_KEY', 'npx '));
  });
});

describe('Gemini and Bedrock snippets', () => {
  it('the @google/genai call is the README\'s gemini.mjs, which the quick start runs', () => {
    const file = markedBlocks().find((b) => b.kind === 'js' && b.file === 'gemini.mjs');
    expect(file?.code).toBe(genaiSnippet(README_GATEWAY, 'process.env.ALICE_KEY', 'gemini-2.5-flash'));
  });

  it('each provider key\'s admin call is a README block, and its body is one the API accepts', () => {
    const blocks = shellBlocks();
    for (const { id } of KEY_KINDS) {
      const code = providerKeySnippet(id, README_GATEWAY, '$ROOT_KEY');
      expect(blocks, id).toContain(code);
      // What curl sends: the text between -d's quotes, which must be the body the snippet meant.
      const sent = JSON.parse(/-d '([\s\S]*)'$/.exec(code)![1]);
      expect(sent, id).toEqual(KEY_BODIES[id]);
      const parsed = ProviderKeyCreate.safeParse(sent);
      expect(parsed.success, `${id}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
      expect(parsed.data?.config?.provider_type).toBe(id);
    }
  });
});
