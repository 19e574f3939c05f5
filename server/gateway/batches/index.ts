/**
 * The batch routes (routes.ts) after authenticate and the caller's AllowIPs and Resources:
 * OpenAI's Batch API (openai.ts) and Anthropic's Message Batches (anthropic.ts), their
 * reservation (reserve.ts), their bill (settlement.ts) and the poller that finds their end
 * (poller.ts). See docs/proxy.md, "Files and batches".
 */
import type { ProxyCall } from '../call';
import type { BatchRoute } from './routes';
import { cancelOpenAiBatch, createOpenAiBatch, listOpenAiBatches, retrieveOpenAiBatch } from './openai';
import {
  cancelAnthropicBatch, createAnthropicBatch, deleteAnthropicBatch, listAnthropicBatches, retrieveAnthropicBatch, streamAnthropicResults, type AnthropicBatchDeps,
} from './anthropic';

export type BatchRouteDeps = AnthropicBatchDeps;

export { BATCH_ROUTES, type BatchRoute } from './routes';
export { BatchPoller } from './poller';

/** The client headers the batch routes read beyond the proxy's: where the client called this gateway (Anthropic's `results_url`). */
export const BATCH_HEADERS: readonly string[] = ['host', 'x-forwarded-host', 'x-forwarded-proto'];

export function answerBatch(d: BatchRouteDeps, c: ProxyCall, route: BatchRoute, id: string, query: string): Promise<void> {
  if (route.api === 'openai') {
    switch (route.action) {
      case 'create': return createOpenAiBatch(d, c);
      case 'list': return listOpenAiBatches(d, c, query);
      case 'retrieve': return retrieveOpenAiBatch(d, c, id);
      default: return cancelOpenAiBatch(d, c, id);
    }
  }
  switch (route.action) {
    case 'create': return createAnthropicBatch(d, c);
    case 'list': return listAnthropicBatches(d, c, query);
    case 'retrieve': return retrieveAnthropicBatch(d, c, id);
    case 'results': return streamAnthropicResults(d, c, id);
    case 'cancel': return cancelAnthropicBatch(d, c, id);
    default: return deleteAnthropicBatch(d, c, id);
  }
}
