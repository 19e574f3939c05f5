/**
 * Which provider API a request to the mock upstream is for, by its path: OpenAI's, Anthropic's,
 * Azure-style deployments and the Vertex-style cloud platform (OpenAI-compatible chat and Claude).
 */
import { chatCompletions, embeddings, responses, type Call } from './openai';
import { countTokens, messages } from './anthropic';
import { completions, imageGenerations, moderations, rerank, speech } from './media';
import { imageEdits, transcriptions } from './uploads';

type Family = 'openai' | 'anthropic';

export interface Route {
  family: Family;
  handle: (c: Call) => void | Promise<void>;
  /** Extra recorded fields and the model to echo when the body has none. */
  deployment?: string;
  project?: string;
  location?: string;
  vertex?: boolean;
  /** Claude on Vertex: the model named in the path, and whether the verb was `:streamRawPredict`. */
  rawPredict?: { model: string; stream: boolean };
}

const AZURE = /\/openai\/deployments\/([^/]+)\/(chat\/completions|embeddings|completions|images\/generations|images\/edits|audio\/speech|audio\/transcriptions|audio\/translations)$/;
/** The OpenAI routes beyond chat, responses and embeddings (mock-upstream/media.ts), by their path below `/v1`. */
const MEDIA: Record<string, (c: Call) => void | Promise<void>> = {
  completions, moderations, rerank, 'images/generations': imageGenerations, 'audio/speech': speech,
  'audio/transcriptions': transcriptions, 'audio/translations': transcriptions, 'images/edits': imageEdits, 'images/variations': imageEdits,
};
const VERTEX = /\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/endpoints\/openapi\/chat\/completions$/;
const VERTEX_CLAUDE = /\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/anthropic\/models\/([^/:]+):(rawPredict|streamRawPredict)$/;

/** Any path prefix is accepted before `/v1/...`, as for a Provider URL with a base path. */
export function routeOf(path: string): Route | null {
  let m = VERTEX.exec(path);
  if (m) return { family: 'openai', handle: chatCompletions, project: decodeURIComponent(m[1]), location: decodeURIComponent(m[2]), vertex: true };
  m = VERTEX_CLAUDE.exec(path);
  if (m) {
    const model = decodeURIComponent(m[3]);
    const counts = model === 'count-tokens';
    return {
      family: 'anthropic', handle: counts ? (c: Call) => countTokens(c, true) : messages, project: decodeURIComponent(m[1]), location: decodeURIComponent(m[2]), vertex: true,
      rawPredict: counts ? undefined : { model, stream: m[4] === 'streamRawPredict' },
    };
  }
  m = AZURE.exec(path);
  if (m) return { family: 'openai', handle: m[2] === 'embeddings' ? embeddings : MEDIA[m[2]] ?? chatCompletions, deployment: decodeURIComponent(m[1]) };
  const media = /\/v1\/(completions|moderations|rerank|images\/generations|images\/edits|images\/variations|audio\/speech|audio\/transcriptions|audio\/translations)$/.exec(path);
  if (media) return { family: 'openai', handle: MEDIA[media[1]] };
  if (path.endsWith('/v1/chat/completions')) return { family: 'openai', handle: chatCompletions };
  if (path.endsWith('/v1/responses')) return { family: 'openai', handle: responses };
  if (path.endsWith('/v1/embeddings')) return { family: 'openai', handle: embeddings };
  if (path.endsWith('/v1/messages')) return { family: 'anthropic', handle: messages };
  if (path.endsWith('/v1/messages/count_tokens')) return { family: 'anthropic', handle: countTokens };
  return null;
}

/**
 * What Vertex refuses in a Claude body: a `model` beside the one in the path (count-tokens
 * alone wants it in the body), no `anthropic_version`, a stream asked of the other verb.
 */
export function vertexClaudeProblem(body: Record<string, unknown>, raw: Route['rawPredict']): string | null {
  if (raw && 'model' in body) return 'model: Extra inputs are not permitted';
  if (!raw && typeof body.model !== 'string') return 'model: Field required';
  if (typeof body.anthropic_version !== 'string') return 'anthropic_version: Field required';
  if (raw && (body.stream === true) !== raw.stream) return `stream: ${raw.stream ? 'streamRawPredict needs "stream": true' : 'rawPredict cannot stream; use streamRawPredict'}`;
  return null;
}
