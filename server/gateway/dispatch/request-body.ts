import type { ProxyCall } from '../call';
import type { Translation } from '../formats/index';
import type { BodyEdit } from '../providers/types';
import { withoutGatewayReasoning } from '../formats/gateway-items';

/** The client's request as a key serving its format gets it: a Responses call without the gateway's reasoning items. */
const sameFormatDoc = (c: ProxyCall) => (c.endpoint === 'responses' && withoutGatewayReasoning(c.raw, c.doc)) || null;

/**
 * The request body sent upstream for one attempt, built once per model, upstream format and
 * body edit, and reused by the next attempt that needs the same:
 * - in the client's own format: the client's bytes unless the model changed (mapping, failover,
 *   a provider's own name), the proxy adds stream usage or a Responses call holds the gateway's
 *   reasoning items (left out: the call's doc keeps them for a key that translates);
 * - for a key answering in another format (`t`): the request translated (gateway/formats);
 *   throws Untranslatable when it holds what the key's format cannot say;
 * - for a key whose upstream wants it changed (`edit`, UpstreamTarget.edit): the above, edited.
 */
export function upstreamBody(c: ProxyCall, model: string, t?: Translation, edit?: BodyEdit): Buffer {
  // A plain model name for the client's format; otherwise a tag no model name can equal.
  const tag = t || edit ? `${edit?.id ?? ''}\n${t?.upstream ?? ''}\n${model}` : model;
  if (c.body && c.bodyModel === tag) {
    c.droppedTools = c.bodyDropped;
    return c.body;
  }
  const dropped: string[] = [];
  const body = t || edit ? Buffer.from(JSON.stringify(changedDoc(c, model, t, edit, dropped))) : sameFormatBody(c, model);
  c.body = body;
  c.bodyModel = tag;
  // What this body left out is what the answer it brings says it dropped (x-switchyard-dropped, the request log).
  c.bodyDropped = c.droppedTools = dropped;
  return body;
}

function sameFormatBody(c: ProxyCall, model: string): Buffer {
  // A Gemini call names its model in the path (a `gemini` key's target): its body goes as it came.
  if (c.params) return c.raw;
  const own = sameFormatDoc(c);
  if (model === c.requestedModel && !c.injectUsage && !own) return c.raw;
  c.doc.model = model;
  if (c.injectUsage) {
    const so = c.doc.stream_options;
    c.doc.stream_options = { ...(typeof so === 'object' && so !== null ? so : {}), include_usage: true };
  }
  return Buffer.from(JSON.stringify(own ? { ...c.doc, input: own.input } : c.doc));
}

function changedDoc(c: ProxyCall, model: string, t: Translation | undefined, edit: BodyEdit | undefined, dropped: string[]): Record<string, unknown> {
  // A Gemini call streams by its path's method, not by a body field: the canonical request says which.
  const client = c.params ? { ...c.doc, model, stream: c.params.stream !== null } : { ...c.doc, model };
  const doc = t ? t.request(client, { policy: c.owner.unsupportedTools, dropped }) : { ...(sameFormatDoc(c) ?? c.doc), model };
  edit?.apply(doc);
  return doc;
}
