import { createHash } from 'node:crypto';
import { catalogueModel, type CatalogueModel } from '../../domain/pricing/catalogue';
import type { ProviderEndpoint } from '../providers/types';
import type { ChatRequest, Json } from './types';

/**
 * A translated request made valid for the model it reaches. A client in one format sends what
 * its own provider takes (Claude Code: a 150-character JSON `metadata.user_id`, thinking,
 * `max_tokens` 32,000); written in another provider's format for another model, the same
 * values can be refused there. Only a body the gateway wrote is fitted: a call in the key's
 * own format goes upstream byte for byte, as its client sent it.
 *
 * Per model, from the catalogue's facts (`domain/pricing/catalogue.ts`: reasoning, sampling
 * temperature, output limit); a model it does not know is left as asked. Per provider format,
 * from its documented limits:
 * - the end user's ID longer than the provider takes becomes its SHA-256 (64 hex characters):
 *   the same user always the same ID, and nothing of it readable upstream;
 * - reasoning (`reasoning_effort`, and so Anthropic's `thinking`) only for a model that reasons,
 *   and for Anthropic only when the tool choice is not forced (its thinking allows auto or none);
 * - output limits at most the model's;
 * - `temperature` and `top_p` left out for a model that takes none (OpenAI's o-series and gpt-5).
 */

/**
 * The longest end-user ID per provider format: OpenAI's chat `user` 64 characters (its 400
 * "Invalid 'user': string too long. Expected a string with maximum length 64"), Anthropic's
 * `metadata.user_id` 256 (its API reference: maxLength 256).
 */
export const USER_ID_LIMIT = { chat: 64, messages: 256 } as const;

/** Anthropic's smallest thinking budget; the budget must also stay below max_tokens. */
const MIN_THINKING_BUDGET = 1024;

/** `id` as it is when the provider takes it, else its SHA-256 in hex. */
export function fittedUserId(id: string, limit: number): string {
  return id.length <= limit ? id : createHash('sha256').update(id).digest('hex');
}

const positive = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0;

function capOutput(body: Json, field: string, limit: number | null): void {
  if (limit !== null && positive(body[field]) && body[field] > limit) body[field] = limit;
}

/** The most output a call can ask of the model: its output limit, never above its context window. */
const outputLimit = (m: CatalogueModel): number | null =>
  m.outputLimit !== null && m.contextLimit !== null ? Math.min(m.outputLimit, m.contextLimit) : m.outputLimit;

/** OpenAI's o-series and gpt-5 names, for a model the catalogue does not know yet. */
const OPENAI_REASONING_NAME = /^(?:.*\/)?(?:o\d|gpt-5)/;

/**
 * OpenAI's reasoning models refuse max_tokens ("Use 'max_completion_tokens' instead"), which
 * other OpenAI-format providers mostly want; a request asking for reasoning is sent it too,
 * since a provider that reasons on request follows OpenAI's newer field.
 */
function openaiReasoning(model: unknown, m: CatalogueModel | null): boolean {
  if (m) return m.provider === 'openai' && m.reasoning === true;
  return typeof model === 'string' && OPENAI_REASONING_NAME.test(model);
}

/** A Chat Completions body for an OpenAI-format key. */
function fitChat(body: Json, m: CatalogueModel | null): void {
  if (typeof body.user === 'string') body.user = fittedUserId(body.user, USER_ID_LIMIT.chat);
  if (m?.temperature === false) {
    delete body.temperature;
    delete body.top_p;
  }
  if (body.max_tokens !== undefined && body.max_completion_tokens === undefined && (openaiReasoning(body.model, m) || body.reasoning_effort != null)) {
    body.max_completion_tokens = body.max_tokens;
    delete body.max_tokens;
  }
  if (!m) return;
  capOutput(body, 'max_tokens', outputLimit(m));
  capOutput(body, 'max_completion_tokens', outputLimit(m));
}

/** A Messages body for an Anthropic key. */
function fitMessages(body: Json, m: CatalogueModel | null): void {
  const meta = body.metadata;
  if (meta && typeof meta.user_id === 'string') body.metadata = { ...meta, user_id: fittedUserId(meta.user_id, USER_ID_LIMIT.messages) };
  if (!m) return;
  capOutput(body, 'max_tokens', outputLimit(m));
  const budget = body.thinking?.budget_tokens;
  if (positive(budget) && positive(body.max_tokens) && budget >= body.max_tokens) {
    // Capped below its thinking budget: the budget shrinks under it, or thinking goes when it cannot.
    if (body.max_tokens - 1 >= MIN_THINKING_BUDGET) body.thinking = { ...body.thinking, budget_tokens: body.max_tokens - 1 };
    else delete body.thinking;
  }
}

/**
 * A canonical request written by `write` for `upstream`, fitted to its model: reasoning is
 * left out of the canonical request for a model without it, before the writer turns it into
 * a thinking budget (which would raise max_tokens and drop the temperature); the rest is
 * fitted in the written body, as the provider will read it.
 */
export function fitToModel(upstream: ProviderEndpoint, req: ChatRequest, write: (req: ChatRequest) => Json): Json {
  const m = typeof req.model === 'string' ? catalogueModel(req.model) : null;
  // Anthropic thinks only when the model may choose its tools: a forced choice (any, a named tool) goes without thinking.
  const forced = upstream === 'messages' && (req.tool_choice === 'required' || (typeof req.tool_choice === 'object' && req.tool_choice !== null));
  if ((m?.reasoning === false || forced) && req.reasoning_effort !== undefined) {
    req = { ...req };
    delete req.reasoning_effort;
  }
  const body = write(req);
  if (upstream === 'chat') fitChat(body, m);
  else if (upstream === 'messages') fitMessages(body, m);
  return body;
}
