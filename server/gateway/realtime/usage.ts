import type { TokenUsage } from '../../domain/pricing/cost';

const int = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

/**
 * A realtime `response.done` usage in our terms (costOf bills it as it bills a chat answer).
 * Its input details count cached tokens within each kind, so the uncached audio and image are
 * what is left of each once the cache's share is taken; a cache that does not say its kinds
 * is audio beyond the text it names.
 */
export function realtimeUsage(u: any): TokenUsage {
  const inD = u?.input_token_details ?? {};
  const cachedD = inD.cached_tokens_details ?? {};
  const outD = u?.output_token_details ?? {};
  const cachedText = int(cachedD.text_tokens);
  const cachedImage = int(cachedD.image_tokens);
  const cachedAudio = int(cachedD.audio_tokens) || Math.max(0, int(inD.cached_tokens) - cachedText - cachedImage);
  const textIn = int(inD.text_tokens);
  const audio = int(inD.audio_tokens);
  const image = int(inD.image_tokens);
  const textOut = int(outD.text_tokens);
  const audioOut = int(outD.audio_tokens);
  return {
    prompt: Math.max(int(u?.input_tokens), textIn + audio + image),
    completion: Math.max(int(u?.output_tokens), textOut + audioOut),
    reasoning: 0,
    cached: Math.max(int(inD.cached_tokens), cachedText + cachedAudio + cachedImage),
    cachedAudio,
    cacheWrite: 0,
    audioIn: Math.max(0, audio - cachedAudio),
    imageIn: Math.max(0, image - cachedImage),
    audioOut,
  };
}
