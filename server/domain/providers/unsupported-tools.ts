import { MapperError } from '../mapping/mappers';

/**
 * UNSUPPORTED_TOOLS, what the proxy does with a tool the provider of a translated call cannot
 * run and has no equivalent of (a hosted tool on a chat-only key, an Anthropic server tool on an
 * OpenAI-format key): `drop` it (the default), saying so in the answer's `x-switchyard-dropped`
 * header and the request log, or `refuse` the call with 400 `unsupported_by_provider`.
 */
export type UnsupportedToolsPolicy = 'drop' | 'refuse';

export const DEFAULT_UNSUPPORTED_TOOLS: UnsupportedToolsPolicy = 'drop';

/** `drop` (the default; empty restores it) or `refuse`. */
export function parseUnsupportedTools(raw: string): UnsupportedToolsPolicy {
  const v = raw.trim();
  if (v === '') return DEFAULT_UNSUPPORTED_TOOLS;
  if (v === 'drop' || v === 'refuse') return v;
  throw new MapperError('UNSUPPORTED_TOOLS: must be "drop" or "refuse"');
}
