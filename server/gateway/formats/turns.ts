import { Untranslatable, type ChatRequest, type Json } from './types';

/**
 * Chat request fields a provider with turns of content blocks (Anthropic, Bedrock Converse) has
 * no equivalent of, with the values that ask for nothing (absent or null always do): anything
 * else is refused rather than dropped, so nothing the client asked for is silently ignored.
 */
const CHAT_ONLY: Record<string, unknown> = {
  n: 1, logprobs: false, top_logprobs: 0, frequency_penalty: 0, presence_penalty: 0,
  audio: undefined, modalities: undefined, prediction: undefined, logit_bias: undefined, functions: undefined, web_search_options: undefined,
};

/** Refuses a chat field `provider` (e.g. `an Anthropic key`) could not honour. */
export function refuseChatOnly(req: ChatRequest, provider: string): void {
  for (const f in CHAT_ONLY) {
    const v = (req as Json)[f];
    if (v !== undefined && v !== null && v !== CHAT_ONLY[f]) throw new Untranslatable(`${provider} has no ${f}`);
  }
}

/**
 * Messages whose user and assistant turns alternate, as both providers require: blocks of the
 * role that spoke last (tool results followed by the user's next words) join its turn.
 */
export function alternatingTurns(): { messages: Json[]; add: (role: 'user' | 'assistant', blocks: Json[]) => void } {
  const messages: Json[] = [];
  return {
    messages,
    add(role, blocks) {
      if (blocks.length === 0) return;
      const last = messages.at(-1);
      if (last?.role === role) last.content.push(...blocks);
      else messages.push({ role, content: blocks });
    },
  };
}
