import { translatedErrorBody } from '../errors';
import { MalformedRequest } from './shape';
import { Untranslatable, type Json } from './types';
import type { Translation } from './index';

/**
 * Gemini's `:embedContent` and `:batchEmbedContents` (what the SDK's `embedContent` calls) ⇄
 * OpenAI's `/v1/embeddings`, the canonical form of embeddings as Chat Completions is of
 * generation: each request's text parts are one input, the vectors come back in order.
 * `taskType` and `title` have no OpenAI equivalent and are left out (docs/proxy.md).
 */

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The embed requests of a body: the batch's `requests`, or the body itself for `:embedContent`. */
const requestsOf = (doc: Json): unknown[] => (Array.isArray(doc.requests) ? doc.requests : [doc]);

/** What is wrong with an embedContent or batchEmbedContents body, as the 400 says it; null when it is usable. */
export function embedBodyProblem(doc: Json): string | null {
  if (doc.requests !== undefined && !Array.isArray(doc.requests)) return 'requests: expected an array of EmbedContentRequest objects';
  const requests = requestsOf(doc);
  if (requests.length === 0) return 'requests: at least one request';
  for (let i = 0; i < requests.length; i++) {
    const r = requests[i];
    const at = Array.isArray(doc.requests) ? `requests[${i}].` : '';
    if (!isObject(r)) return `requests[${i}]: expected an EmbedContentRequest object`;
    if (!isObject(r.content) || !Array.isArray(r.content.parts)) return `${at}content.parts: required (an array of Part objects)`;
  }
  return null;
}

function inputOf(r: Json, at: string): string {
  let text = '';
  (r.content.parts as unknown[]).forEach((p, i) => {
    if (!isObject(p) || typeof p.text !== 'string') throw new Untranslatable(`${at}content.parts[${i}]: only text can be embedded on this key`);
    text += p.text;
  });
  return text;
}

/** A Gemini embed body as an OpenAI embeddings request. */
export function embedRequest(doc: Json): Json {
  const problem = embedBodyProblem(doc);
  if (problem) throw new MalformedRequest(problem);
  const requests = requestsOf(doc) as Json[];
  const batch = Array.isArray(doc.requests);
  const input = requests.map((r, i) => inputOf(r, batch ? `requests[${i}].` : ''));
  const dims = new Set(requests.map((r) => r.outputDimensionality));
  if (dims.size > 1) throw new Untranslatable('requests: one outputDimensionality for every request of a batch on this key');
  const [dimensions] = dims;
  return { model: doc.model, input, ...(typeof dimensions === 'number' ? { dimensions } : {}) };
}

/** An OpenAI embeddings answer as Gemini's: `embeddings` for a batch, `embedding` for one. */
export function embedResponse(res: Json, request: Json): Json {
  const data = (Array.isArray(res.data) ? [...res.data] : []) as Json[];
  data.sort((a, b) => (Number(a.index) || 0) - (Number(b.index) || 0));
  const vectors = data.map((d) => ({ values: Array.isArray(d.embedding) ? d.embedding : [] }));
  return Array.isArray(request.requests) ? { embeddings: vectors } : { embedding: vectors[0] ?? { values: [] } };
}


export const geminiEmbeddings: Translation = {
  client: 'gemini_embed',
  upstream: 'embeddings',
  request: (doc) => embedRequest(doc),
  response: (body, ctx) => Buffer.from(JSON.stringify(embedResponse(JSON.parse(body.toString('utf8')), ctx.request))),
  error: (status, body) => translatedErrorBody('gemini', status, body),
  // Embeddings never stream (the route does not read `stream`).
  stream: () => { throw new Error('embeddings do not stream'); },
};
