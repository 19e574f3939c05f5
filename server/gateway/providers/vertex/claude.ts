import type { BodyEdit, CallInfo, Endpoint, UpstreamTarget } from '../types';

/**
 * Claude on the cloud platform (`config.publisher: "anthropic"`): Anthropic's Messages body at
 * `{location}/publishers/anthropic/models/{model}:rawPredict` (`:streamRawPredict` for a
 * stream), the model in the path and not in the body, the API version in the body
 * (`anthropic_version`, the client's if it gave one), the client's `anthropic-beta` as a
 * header. Token counting is the `count-tokens` model's rawPredict, with the model kept in the
 * body. Answers and errors are Anthropic's wire format.
 */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

export const CLAUDE_SERVES: ReadonlySet<Endpoint> = new Set<Endpoint>(['messages', 'count_tokens']);

const withVersion = (doc: Record<string, unknown>) => {
  if (!doc.anthropic_version) doc.anthropic_version = VERTEX_ANTHROPIC_VERSION;
};

const RAW_PREDICT: BodyEdit = {
  id: 'vertex-raw-predict',
  apply(doc) {
    delete doc.model;
    withVersion(doc);
  },
};

const COUNT_TOKENS: BodyEdit = { id: 'vertex-count-tokens', apply: withVersion };

/** A Vertex model ID keeps its `@version` readable in the path, as Google's own clients send it. */
const modelSegment = (model: string) => encodeURIComponent(model).replace(/%40/g, '@');

export function claudeTarget(origin: string, location: string, authorization: string, call: CallInfo): UpstreamTarget {
  const beta = call.headers['anthropic-beta'];
  const headers: Record<string, string> = beta ? { authorization, 'anthropic-beta': beta } : { authorization };
  const models = `${location}/publishers/anthropic/models/`;
  if (call.endpoint === 'count_tokens') return { origin, path: `${models}count-tokens:rawPredict`, headers, format: 'anthropic', edit: COUNT_TOKENS };
  const verb = call.stream ? 'streamRawPredict' : 'rawPredict';
  return { origin, path: `${models}${modelSegment(call.model)}:${verb}`, headers, format: 'anthropic', edit: RAW_PREDICT };
}
