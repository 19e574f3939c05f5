import type { SignatureV4 } from '@smithy/signature-v4';
import type { PooledKey } from '../../../state/provider-keys/key-pool';
import { keyBase, UpstreamSetupError, type BodyEdit, type CallInfo, type Prepared, type ProviderEndpoint, type ProviderKind, type UpstreamWire } from '../types';
import { createSigner, signedHeaders } from './sign';
import { EventStreamDeframer } from './event-stream';
import { bedrockError } from './errors';

/**
 * `bedrock` (AWS Bedrock's runtime, Provider `https://bedrock-runtime.{region}.amazonaws.com`):
 * - Authentication: with `config.access_key_id` every request is signed with SigV4 (service
 *   `bedrock`, the key's `region`, and the session token when given, stored write-only beside
 *   the config as a Vertex private key is), the SecretKey being the secret access key
 *   (sign.ts); without it the SecretKey is a Bedrock API key, sent as Bearer.
 * - The model: `config.models[<client's model>]` (a Bedrock model ID or inference profile),
 *   else the client's model as it is.
 * - Claude (`anthropic.…`, `us.anthropic.…`, an ARN naming one) is Anthropic's Messages API at
 *   `/model/{id}/invoke` and `/invoke-with-response-stream` ("Anthropic Claude Messages API",
 *   Bedrock user guide): the body without `model` and `stream` (the path says both), with
 *   `anthropic_version: "bedrock-2023-05-31"` and the client's `anthropic-beta` header as
 *   `anthropic_beta`. Its stream is AWS event-stream framing (event-stream.ts). count_tokens is
 *   Bedrock's CountTokens (`/model/{id}/count-tokens`). OpenAI-format clients are translated.
 * - Any other model (Nova, Llama, Mistral, DeepSeek, gpt-oss…) is Converse at
 *   `/model/{id}/converse` and `/converse-stream` ("Converse", Bedrock API reference): every
 *   client format is translated to it (formats/converse.ts), its stream framed the same way.
 *   Bedrock's CountTokens counts Claude models only, so a token count for another model is the
 *   gateway's estimate.
 * - Errors are AWS's, read as Anthropic's (errors.ts).
 * Which of the two a key speaks depends on the model (`serves(key, model)`).
 */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';
export const EVENT_STREAM = 'application/vnd.amazon.eventstream';

const CLAUDE_SERVES: ReadonlySet<ProviderEndpoint> = new Set<ProviderEndpoint>(['messages', 'count_tokens']);
const CONVERSE_SERVES: ReadonlySet<ProviderEndpoint> = new Set<ProviderEndpoint>(['converse']);

/** A Claude model ID, a cross-region inference profile (`us.`, `eu.`, `apac.`, `global.`), or an ARN naming one. */
export const isClaude = (id: string) => /(^|[./])anthropic\./.test(id);
/** CountTokens takes the foundation model, not a cross-region inference profile. */
const foundationModel = (id: string) => id.replace(/^(?:us|eu|apac|us-gov|jp|au|ca|global)\.(?=anthropic\.)/, '');

interface BedrockTarget {
  origin: string;
  basePath: string;
  /** API-key auth: the fixed Authorization header. */
  headers: Record<string, string>;
  signer: SignatureV4 | null;
  wire: UpstreamWire;
}

const targets = new WeakMap<PooledKey, BedrockTarget>();
const modelMaps = new WeakMap<PooledKey, Readonly<Record<string, string>>>();

/** The key's `models` setting: client model → Bedrock model ID or inference profile (read without the credentials, which may be incomplete). */
function modelsOf(key: PooledKey): Readonly<Record<string, string>> {
  let models = modelMaps.get(key);
  if (!models) {
    const m: Record<string, string> = {};
    const c = key.config;
    if (c.models && typeof c.models === 'object') for (const [k, v] of Object.entries(c.models)) if (typeof v === 'string' && v) m[k] = v;
    modelMaps.set(key, (models = m));
  }
  return models;
}

/** The Bedrock model ID a routed model reaches on this key. */
const bedrockId = (key: PooledKey, model: string): string => (Object.hasOwn(modelsOf(key), model) ? modelsOf(key)[model] : model);

/** The region of the config, else of a `bedrock-runtime.{region}.amazonaws.com` Provider. */
function regionOf(key: PooledKey): string {
  const c = key.config;
  if (typeof c.region === 'string' && c.region) return c.region;
  return /^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com$/.exec(keyBase(key).host)?.[1] ?? '';
}

function targetOf(key: PooledKey): BedrockTarget {
  let t = targets.get(key);
  if (!t) {
    const c = key.config;
    const b = keyBase(key);
    const accessKeyId = typeof c.access_key_id === 'string' && c.access_key_id ? c.access_key_id : null;
    const region = regionOf(key);
    if (accessKeyId && !region) throw new UpstreamSetupError('auth', 'the Bedrock key has an access key ID but no region');
    const signer = accessKeyId
      ? createSigner(region, { accessKeyId, secretAccessKey: key.secret, sessionToken: key.privateKey || undefined })
      : null;
    const origin = b.origin;
    t = {
      origin,
      basePath: b.basePath,
      headers: signer ? {} : { authorization: `Bearer ${key.secret}` },
      signer,
      wire: {
        sign: signer ? (path, headers, body) => signedHeaders(signer, origin, path, headers, body) : undefined,
        streamType: EVENT_STREAM,
        deframe: () => new EventStreamDeframer(),
        error: bedrockError,
      },
    };
    targets.set(key, t);
  }
  return t;
}

/** The Messages body as InvokeModel takes it. */
function invokeDoc(doc: Record<string, unknown>, beta: string[] | null): void {
  delete doc.model;
  delete doc.stream;
  doc.anthropic_version = BEDROCK_ANTHROPIC_VERSION;
  if (beta) doc.anthropic_beta = beta;
}

const betaOf = (headers: Record<string, string>): string[] | null => {
  const list = (headers['anthropic-beta'] ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  return list.length ? list : null;
};

const edits = new Map<string, BodyEdit>();

/** One edit per beta list (the body cache tells edits apart by ID). */
function invokeEdit(beta: string[] | null, count: boolean): BodyEdit {
  const id = `bedrock-${count ? 'count' : 'invoke'}:${beta?.join(',') ?? ''}`;
  let e = edits.get(id);
  if (!e) {
    e = {
      id,
      apply(doc) {
        invokeDoc(doc, beta);
        if (!count) return;
        // CountTokens takes the InvokeModel body, base64 ("CountTokens", Bedrock API reference); InvokeModel needs max_tokens.
        if (typeof doc.max_tokens !== 'number') doc.max_tokens = 1;
        const body = Buffer.from(JSON.stringify(doc)).toString('base64');
        for (const k of Object.keys(doc)) delete doc[k];
        doc.input = { invokeModel: { body } };
      },
    };
    if (edits.size < 256) edits.set(id, e);
  }
  return e;
}

/** CountTokens' `{"inputTokens":N}` as Anthropic's `{"input_tokens":N}`. */
function countAnswer(body: Buffer): Buffer {
  try {
    const n = JSON.parse(body.toString('utf8'))?.inputTokens;
    if (typeof n === 'number') return Buffer.from(JSON.stringify({ input_tokens: n }));
  } catch { /* relayed as it came: the reader finds no count */ }
  return body;
}

export const bedrockKind: ProviderKind = {
  type: 'bedrock',
  catalogue: 'aws',
  serves: (key, model) => (isClaude(bedrockId(key, model)) ? CLAUDE_SERVES : CONVERSE_SERVES),
  prepare(key: PooledKey, call: CallInfo): Prepared {
    const id = bedrockId(key, call.model);
    if (!(isClaude(id) ? CLAUDE_SERVES : CONVERSE_SERVES).has(call.endpoint)) return { skip: `a Bedrock key has no ${call.endpoint} endpoint for ${id}` };
    const t = targetOf(key);
    if (call.endpoint === 'converse') {
      // The translated body names neither the model nor the stream: the path does (formats/converse.ts).
      const path = `${t.basePath}/model/${encodeURIComponent(id)}/${call.stream ? 'converse-stream' : 'converse'}`;
      return { origin: t.origin, path, headers: t.headers, model: id, format: 'converse', wire: t.wire };
    }
    const beta = betaOf(call.headers);
    if (call.endpoint === 'count_tokens') {
      const path = `${t.basePath}/model/${encodeURIComponent(foundationModel(id))}/count-tokens`;
      return { origin: t.origin, path, headers: t.headers, model: id, format: 'anthropic', edit: invokeEdit(beta, true), wire: { ...t.wire, answer: countAnswer } };
    }
    const verb = call.stream ? 'invoke-with-response-stream' : 'invoke';
    return { origin: t.origin, path: `${t.basePath}/model/${encodeURIComponent(id)}/${verb}`, headers: t.headers, model: id, format: 'anthropic', edit: invokeEdit(beta, false), wire: t.wire };
  },
};
