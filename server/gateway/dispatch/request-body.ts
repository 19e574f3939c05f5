import type { ProxyCall } from '../call';
import type { Translation } from '../formats/index';
import type { BodyEdit } from '../providers/types';
import { withoutGatewayReasoning } from '../formats/responses';

/** The client's request as a key serving its format gets it: a Responses call without the gateway's reasoning items. */
const sameFormatDoc = (c: ProxyCall) => (c.endpoint === 'responses' && withoutGatewayReasoning(c.raw, c.doc)) || null;

/**
 * The request body sent upstream for a model: the client's bytes unless the model changed
 * (mapping, failover, a provider's own name), the proxy adds stream usage or a Responses call
 * holds the gateway's reasoning items; built once per model and reused by the next attempt.
 */
export function bodyFor(c: ProxyCall, model: string): Buffer {
  if (c.body && c.bodyModel === model) return c.body;
  let body = c.raw;
  // A copy: the call's doc keeps those items for a key that translates (their signatures).
  const own = sameFormatDoc(c);
  if (model !== c.requestedModel || c.injectUsage || own) {
    c.doc.model = model;
    if (c.injectUsage) {
      const so = c.doc.stream_options;
      c.doc.stream_options = { ...(typeof so === 'object' && so !== null ? so : {}), include_usage: true };
    }
    body = Buffer.from(JSON.stringify(own ? { ...c.doc, input: own.input } : c.doc));
  }
  c.body = body;
  c.bodyModel = model;
  return body;
}

/**
 * The request body for a key answering in another format: the client's request translated
 * (gateway/formats), built once per upstream format and model. Throws Untranslatable when
 * the request holds what the key's format cannot say.
 */
export function translatedBody(c: ProxyCall, t: Translation, model: string): Buffer {
  // A tag no model name can equal: the format and the model, apart.
  const tag = `${t.upstream}\n${model}`;
  if (c.body && c.bodyModel === tag) return c.body;
  const body = Buffer.from(JSON.stringify(t.request({ ...c.doc, model })));
  c.body = body;
  c.bodyModel = tag;
  return body;
}

/**
 * The request body for a key whose upstream wants it changed (UpstreamTarget.edit): the client's
 * request, or its translation, with the model and the edit, built once per edit, format and model.
 */
export function editedBody(c: ProxyCall, t: Translation | undefined, model: string, edit: BodyEdit): Buffer {
  const tag = `${edit.id}\n${t?.upstream ?? ''}\n${model}`;
  if (c.body && c.bodyModel === tag) return c.body;
  const doc = t ? t.request({ ...c.doc, model }) : { ...(sameFormatDoc(c) ?? c.doc), model };
  edit.apply(doc);
  const body = Buffer.from(JSON.stringify(doc));
  c.body = body;
  c.bodyModel = tag;
  return body;
}
