import type { ProxyCall } from '../call';

/**
 * The request body sent upstream for a model: the client's bytes unless the model changed
 * (mapping, failover, a provider's own name) or the proxy adds stream usage; built once per
 * model and reused by the next attempt.
 */
export function bodyFor(c: ProxyCall, model: string): Buffer {
  if (c.body && c.bodyModel === model) return c.body;
  let body = c.raw;
  if (model !== c.requestedModel || c.injectUsage) {
    c.doc.model = model;
    if (c.injectUsage) {
      const so = c.doc.stream_options;
      c.doc.stream_options = { ...(typeof so === 'object' && so !== null ? so : {}), include_usage: true };
    }
    body = Buffer.from(JSON.stringify(c.doc));
  }
  c.body = body;
  c.bodyModel = model;
  return body;
}
