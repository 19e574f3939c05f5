import type { UpstreamClient } from '../../adapters/upstream-http/client';
import { requestWhole } from '../../adapters/upstream-http/whole';
import type { Logger } from '../../core/log';
import { inputText, modelLimits } from '../../domain/pricing/estimate';
import { countedBound, countInputTokens, encodingOf, loadTextCounter, type EncodingName } from '../../domain/pricing/token-count';
import type { KeyPool, PooledKey } from '../../state/provider-keys/key-pool';
import type { ProxyCall } from '../call';
import { levelPlan } from '../dispatch/levels';
import { translation } from '../formats/index';
import type { SwitchOver } from '../key-health/switch-over';
import type { ProviderKinds } from '../providers/registry';
import { isSkip, type Endpoint } from '../providers/types';

/**
 * Counting a call's input, for admission, when the byte bound alone would refuse it
 * (stages/admission.ts): OpenAI's models with their tokenizer, here in the process
 * (domain/pricing/token-count.ts); other models with the count endpoint of a key that serves
 * them and has one — Anthropic's `/v1/messages/count_tokens`, Claude on Vertex's
 * `count-tokens:rawPredict`, an Anthropic-format standard key's — within COUNT_DEADLINE_MS.
 * Gemini's countTokens (issue 31) is one more `InputCounter` kind, found the same way.
 * A count that fails or is late leaves the byte bound, so the call is refused as before.
 */

export interface CountDeps {
  pool: Pick<KeyPool, 'keys' | 'sleepingUntil'>;
  kinds: Pick<ProviderKinds, 'of'>;
  upstream: UpstreamClient;
  /** The Levels a model is tried on (SWITCH_OVER); without it, its start Level alone. */
  switchOver?: Pick<SwitchOver, 'isSwitched'>;
  log?: Pick<Logger, 'debug' | 'info'>;
}

/** How long a key's count may take, token exchange included, before the byte bound stands. */
export const COUNT_DEADLINE_MS = 2000;

/** Routes billed by tokens whose input is a prompt (not realtime's session, whose responses admission holds by their own estimate). */
const COUNTED: ReadonlySet<Endpoint> = new Set<Endpoint>(['chat', 'responses', 'messages', 'completions', 'embeddings', 'gemini', 'gemini_embed']);
/** Routes a key's count endpoint can count: those translated to Anthropic's Messages. */
const KEY_COUNTED: ReadonlySet<Endpoint> = new Set<Endpoint>(['chat', 'responses', 'messages', 'gemini']);

/** How one model's input can be counted for a call. */
export type InputCounter =
  | { kind: 'tokenizer'; encoding: EncodingName }
  | { kind: 'key'; key: PooledKey };

/**
 * How `model`'s input can be counted for this call, or null (the byte bound stands). Cheap and
 * synchronous: nothing is loaded or sent.
 */
export function inputCounter(d: Partial<CountDeps>, c: ProxyCall, model: string): InputCounter | null {
  if (!COUNTED.has(c.endpoint) || c.upload) return null;
  const encoding = encodingOf(model);
  if (encoding) return { kind: 'tokenizer', encoding };
  if (!KEY_COUNTED.has(c.endpoint) || !d.pool || !d.kinds || !d.upstream) return null;
  const key = countingKey(d as CountDeps, c, model);
  return key ? { kind: 'key', key } : null;
}

/**
 * A key that would serve `model` for this call and counts tokens itself: on the Levels the call
 * may reach (as dispatch plans them), awake. A count is the model's, whichever key serves it.
 */
function countingKey(d: CountDeps, c: ProxyCall, model: string): PooledKey | null {
  const now = Date.now();
  const ownerId = c.row.ownerId;
  const start = model === c.model ? c.level : c.profile.levelMapper.match(model) ?? c.owner.levelMapper.match(model) ?? c.row.level;
  const levels = d.switchOver ? levelPlan(start, c.owner.switchOver, ownerId, d.switchOver, c.profile.levels, now) : [start];
  for (const level of levels) {
    for (const key of d.pool.keys(ownerId, level)) {
      if (d.pool.sleepingUntil(key.id, now) !== null) continue;
      if (d.kinds.of(key).serves(key, model).has('count_tokens')) return key;
    }
  }
  return null;
}

/** The call's input bound on `model` by `counter`, or null when it cannot be counted (the byte bound stands). */
export async function countInput(d: Partial<CountDeps>, c: ProxyCall, model: string, counter: InputCounter): Promise<number | null> {
  const context = modelLimits(model, c.owner.defaultOutputLimit).context;
  if (counter.kind === 'tokenizer') {
    const count = await loadTextCounter(counter.encoding);
    return countInputTokens(inputText(c.doc, model, context), count, context);
  }
  const counted = await keyCount(d as CountDeps, c, model, counter.key);
  return counted === null ? null : countedBound(counted, 0, context);
}

/** The fields Anthropic's count_tokens takes; any other (max_tokens, stream, metadata…) it refuses as an extra input. */
const COUNT_FIELDS = ['messages', 'system', 'tools', 'tool_choice', 'thinking', 'mcp_servers'] as const;

/** The call as an Anthropic count_tokens body: the client's Messages request, or its translation into one. */
function countBody(c: ProxyCall, model: string): Record<string, unknown> | null {
  let doc = c.doc;
  if (c.endpoint !== 'messages') {
    const t = translation(c.endpoint, 'messages');
    if (!t) return null;
    // What the translation cannot carry (or a malformed body) is dispatch's to refuse: the count just does not happen.
    try {
      doc = t.request({ ...c.doc, model }) as Record<string, unknown>;
    } catch {
      return null;
    }
  }
  const body: Record<string, unknown> = { model };
  for (const f of COUNT_FIELDS) if (doc[f] !== undefined) body[f] = doc[f];
  return body;
}

const LATE = Symbol('late');

/** The key's own count of the call's input tokens, or null (logged without the upstream's words, which may name its host). */
async function keyCount(d: CountDeps, c: ProxyCall, model: string, key: PooledKey): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof LATE>((resolve) => { timer = setTimeout(resolve, COUNT_DEADLINE_MS, LATE); });
  try {
    const n = await Promise.race([askKey(d, c, model, key), late]);
    if (n === LATE) throw new CountFailure('no answer within the deadline');
    d.log?.debug('input_counted', { request: c.id, key: key.id, model, input_tokens: n });
    return n;
  } catch (err) {
    const reason = err instanceof CountFailure ? err.message : (err as { code?: unknown })?.code ? String((err as { code: unknown }).code) : 'request failed';
    d.log?.info('input_count_failed', { request: c.id, key: key.id, model, reason });
    return null;
  } finally {
    clearTimeout(timer);
  }
}

class CountFailure extends Error {}

async function askKey(d: CountDeps, c: ProxyCall, model: string, key: PooledKey): Promise<number> {
  const prepared = await d.kinds.of(key).prepare(key, { endpoint: 'count_tokens', model, headers: c.ex.headers, stream: false });
  if (isSkip(prepared)) throw new CountFailure('the key cannot count');
  const body = countBody(c, prepared.model ?? model);
  if (!body) throw new CountFailure('the request cannot be put as a token count');
  prepared.edit?.apply(body);
  const bytes = Buffer.from(JSON.stringify(body));
  const wire = prepared.wire;
  const res = await requestWhole(d.upstream, {
    origin: prepared.origin,
    path: prepared.path,
    method: 'POST',
    headers: wire?.sign ? await wire.sign(prepared.path, prepared.headers, bytes) : prepared.headers,
    contentType: 'application/json',
    body: bytes,
    headersTimeout: COUNT_DEADLINE_MS,
    bodyTimeout: COUNT_DEADLINE_MS,
  }, 64 * 1024);
  if (res.status !== 200) throw new CountFailure(`upstream answered ${res.status}`);
  let n: unknown;
  try {
    n = (JSON.parse((wire?.answer ? wire.answer(res.body) : res.body).toString('utf8')) as { input_tokens?: unknown })?.input_tokens;
  } catch {
    throw new CountFailure('the answer is not JSON');
  }
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw new CountFailure('the answer has no input_tokens');
  return n;
}
