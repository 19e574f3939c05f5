import type { ProxyCall } from '../call';
import type { Translation } from '../formats/index';
import type { BodyEdit } from '../providers/types';
import { withoutGatewayReasoning } from '../formats/responses';

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
  if (c.body && c.bodyModel === tag) return c.body;
  const body = t || edit ? Buffer.from(JSON.stringify(changedDoc(c, model, t, edit))) : sameFormatBody(c, model);
  c.body = body;
  c.bodyModel = tag;
  return body;
}

function sameFormatBody(c: ProxyCall, model: string): Buffer {
  const own = sameFormatDoc(c);
  if (model === c.requestedModel && !c.injectUsage && !own) return c.raw;
  c.doc.model = model;
  if (c.injectUsage) {
    const so = c.doc.stream_options;
    c.doc.stream_options = { ...(typeof so === 'object' && so !== null ? so : {}), include_usage: true };
  }
  return Buffer.from(JSON.stringify(own ? { ...c.doc, input: own.input } : c.doc));
}

function changedDoc(c: ProxyCall, model: string, t: Translation | undefined, edit: BodyEdit | undefined): Record<string, unknown> {
  const doc = t ? t.request({ ...c.doc, model }) : { ...(sameFormatDoc(c) ?? c.doc), model };
  edit?.apply(doc);
  return doc;
}
