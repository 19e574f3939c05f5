import type { UnitTokens } from '../../domain/pricing/units';

const int = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

/** A realtime `response.done` usage in units: uncached and cached input by kind, output by kind. */
export function realtimeTokens(u: any): UnitTokens {
  const inD = u?.input_token_details ?? {};
  const cachedD = inD.cached_tokens_details ?? {};
  const outD = u?.output_token_details ?? {};
  const cachedText = int(cachedD.text_tokens);
  const cachedAudio = int(cachedD.audio_tokens) || Math.max(0, int(inD.cached_tokens) - cachedText);
  const textIn = Math.max(0, int(inD.text_tokens) - cachedText);
  const audioIn = Math.max(0, int(inD.audio_tokens) - cachedAudio);
  return { cachedText, cachedAudio, textIn, audioIn, imageIn: int(inD.image_tokens), textOut: int(outD.text_tokens), audioOut: int(outD.audio_tokens), imageOut: 0 };
}
