/**
 * Every token class at its own price: audio in and out of a Chat Completions call, Anthropic's
 * one-hour cache writes (passed through and translated), with the real openai and
 * @anthropic-ai/sdk clients over loopback to the mock upstream, whole and streamed, each call
 * billed exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drain, keyedUser, nextLevel, secret, startProxyFixture, type ProxyFixture } from '../test-fixture';

let f: ProxyFixture;
// Prices of our own, so the bills below are arithmetic on the classes. The Claude one names no
// one-hour write price: it is twice the input, as Anthropic prices it.
const AUDIO_MODEL = 'gpt-audio-test';
const AUDIO = { InputText: 2.5, CachedText: 1.25, InputAudio: 40, OutputText: 10, OutputAudio: 80 };
const CLAUDE = 'claude-cache-test';
const CLAUDE_PRICE = { InputText: 3, CachedText: 0.3, CacheWrite: 3.75, OutputText: 15 };
const ONE_HOUR = 2 * CLAUDE_PRICE.InputText;

beforeAll(async () => {
  f = await startProxyFixture();
  await f.config({ PRICING: JSON.stringify({ ChatPricing: { [AUDIO_MODEL]: AUDIO, [CLAUDE]: CLAUDE_PRICE } }) });
});
afterAll(async () => { await f?.close(); });

const wav = Buffer.alloc(600, 1).toString('base64');

/** The account's usage records: `n` calls, each with these totals and exactly `credit`; no reservation left open. */
async function expectBilled(accountId: number, n: number, totals: Record<string, unknown>, credit: number) {
  const rows = await f.usage(accountId);
  expect(rows).toHaveLength(n);
  for (const row of rows) {
    expect(row).toMatchObject({ ...totals, status: 'ok' });
    expect(row.credit_used).toBeCloseTo(credit, 12);
  }
  expect(f.gw.gateway.proxy.admission.open).toBe(0);
}

describe('audio tokens of a Chat Completions call', () => {
  it('bills audio in and out at the audio prices, whole and streamed', async () => {
    const { up, user, client } = await keyedUser(f, 'audio-chat');
    // 1,200 in: 100 cached, 1,000 audio, 100 text; 700 out: 600 audio, 100 text.
    f.mock.behave(up, { text: 'Hello there.', usage: { prompt_tokens: 1200, completion_tokens: 700, cached_tokens: 100, audio_tokens: 1000, audio_output_tokens: 600 } });
    const params = {
      model: AUDIO_MODEL, modalities: ['text', 'audio'] as ('text' | 'audio')[], audio: { voice: 'alloy' as const, format: 'wav' as const },
      messages: [{ role: 'user' as const, content: [{ type: 'input_audio' as const, input_audio: { data: wav, format: 'wav' as const } }] }],
    };
    const whole = await client.chat.completions.create(params);
    expect(whole.usage).toMatchObject({ prompt_tokens_details: { audio_tokens: 1000 }, completion_tokens_details: { audio_tokens: 600 } });
    const streamed = await drain(await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } }));
    expect(streamed.error).toBeUndefined();
    expect(streamed.items.at(-1)?.usage).toMatchObject({ prompt_tokens: 1200, completion_tokens: 700 });

    const billed = (100 * AUDIO.CachedText + 1000 * AUDIO.InputAudio + 100 * AUDIO.InputText + 600 * AUDIO.OutputAudio + 100 * AUDIO.OutputText) / 1e6;
    await expectBilled(user.id, 2, { endpoint: '/v1/chat/completions', model: AUDIO_MODEL, prompt: 1200, completion: 700, cached: 100 }, billed);
  });
});

describe("Anthropic's one-hour cache writes", () => {
  // 4,050 in: 50 plain, 1,000 cache reads, 1,000 five-minute writes, 2,000 one-hour writes; 200 out.
  const usage = { prompt_tokens: 4050, completion_tokens: 200, cached_tokens: 1000, cache_write_tokens: 3000, cache_write_1h_tokens: 2000 };
  const billed = (50 * CLAUDE_PRICE.InputText + 1000 * CLAUDE_PRICE.CachedText + 1000 * CLAUDE_PRICE.CacheWrite + 2000 * ONE_HOUR + 200 * CLAUDE_PRICE.OutputText) / 1e6;

  async function claudeUser(label: string) {
    const up = secret(label);
    const level = nextLevel();
    await f.addKey(level, up, { config: { provider_type: 'anthropic' } });
    f.mock.behave(up, { text: 'Cached and answered.', usage });
    return f.account({ level });
  }

  it('bills them at twice the input through @anthropic-ai/sdk, whole and streamed, and passes cache_creation through', async () => {
    const user = await claudeUser('claude-1h');
    const client = f.anthropic(user.key);
    const params = {
      model: CLAUDE, max_tokens: 300,
      system: [{ type: 'text' as const, text: 'A long, stable system prompt.', cache_control: { type: 'ephemeral' as const, ttl: '1h' as const } }],
      messages: [{ role: 'user' as const, content: 'Hello' }],
    };
    const whole = await client.messages.create(params);
    expect(whole.usage).toMatchObject({ input_tokens: 50, cache_read_input_tokens: 1000, cache_creation_input_tokens: 3000, cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 } });
    const streamed = await client.messages.stream(params).finalMessage();
    expect(streamed.usage).toMatchObject({ cache_creation_input_tokens: 3000, output_tokens: 200 });

    await expectBilled(user.id, 2, { endpoint: '/v1/messages', model: CLAUDE, prompt: 4050, completion: 200, cached: 1000 }, billed);
  });

  it('bills them so when the openai SDK reaches Claude through translation, whole and streamed', async () => {
    const user = await claudeUser('claude-1h-openai');
    const client = f.openai(user.key);
    const params = { model: CLAUDE, max_tokens: 300, messages: [{ role: 'user' as const, content: 'Hello' }] };
    const whole = await client.chat.completions.create(params);
    expect(whole.usage).toMatchObject({ prompt_tokens: 4050, completion_tokens: 200, prompt_tokens_details: { cached_tokens: 1000 } });
    const streamed = await drain(await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } }));
    expect(streamed.error).toBeUndefined();

    await expectBilled(user.id, 2, { endpoint: '/v1/chat/completions', model: CLAUDE, prompt: 4050, completion: 200, cached: 1000 }, billed);
  });
});
