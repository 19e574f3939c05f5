import type { PooledKey } from '../../state/provider-keys/key-pool';
import { estimateInputTokens } from '../../domain/pricing/estimate';
import type { ProxyCall } from '../call';
import type { Delivered } from './attempt';

const JSON_HEAD = { 'content-type': 'application/json' };

/**
 * The input tokens the gateway tells a client its call has when the provider has not said yet:
 * count_tokens answered here, and a translated Anthropic stream's message_start.
 */
export const inputTokenEstimate = (c: ProxyCall): number => estimateInputTokens(c.doc, c.raw, c.model);

/**
 * `/v1/messages/count_tokens` on a key that has no such endpoint (any but Anthropic's), and
 * Gemini's `:countTokens` on any key (in Gemini's shape, `totalTokens`): the
 * gateway answers itself with the estimate admission uses for a request's input, an upper
 * bound rather than the provider's tokenizer's count, so a client sizing its context stays on
 * the safe side. Nothing goes upstream and nothing is billed.
 */
export function answerTokenEstimate(c: ProxyCall, key: PooledKey, level: number): Delivered {
  c.servedBy = key;
  c.servedLevel = level;
  c.servedModel = c.model;
  const tokens = inputTokenEstimate(c);
  c.ex.send(200, JSON_HEAD, JSON.stringify(c.endpoint === 'gemini_count' ? { totalTokens: tokens } : { input_tokens: tokens }));
  return { kind: 'delivered', status: 200, usage: null, complete: true, streamed: false, events: 0, abnormal: false, clientGone: false };
}
