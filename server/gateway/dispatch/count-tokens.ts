import type { PooledKey } from '../../state/provider-keys/key-pool';
import { estimateInputTokens } from '../../domain/pricing/estimate';
import type { ProxyCall } from '../call';
import type { Delivered } from './attempt';

const JSON_HEAD = { 'content-type': 'application/json' };

/**
 * `/v1/messages/count_tokens` on a key that has no such endpoint (any but Anthropic's): the
 * gateway answers itself with the estimate admission uses for a request's input, an upper
 * bound rather than the provider's tokenizer's count, so a client sizing its context stays on
 * the safe side. Nothing goes upstream and nothing is billed.
 */
export function answerTokenEstimate(c: ProxyCall, key: PooledKey, level: number): Delivered {
  c.servedBy = key;
  c.servedLevel = level;
  c.servedModel = c.model;
  c.ex.send(200, JSON_HEAD, JSON.stringify({ input_tokens: estimateInputTokens(c.doc, c.raw, c.model) }));
  return { kind: 'delivered', status: 200, usage: null, complete: true, streamed: false, events: 0, abnormal: false, clientGone: false };
}
