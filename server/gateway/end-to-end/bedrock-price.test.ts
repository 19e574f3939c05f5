/**
 * What a call on a Bedrock key costs: the key's `models` sends the client's model upstream as a
 * Bedrock model ID, and the call is billed at that ID's own catalogue price where the catalogue
 * has one (Bedrock's regional inference profiles cost more than Anthropic's list price), else at
 * the client-facing model's; the Owner's PRICING for the client's model goes over either.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogueModel } from '../../domain/pricing/catalogue';
import { secret, startProxyFixture, nextLevel, type ProxyFixture } from '../test-fixture';

let f: ProxyFixture;
const usage = { prompt_tokens: 1200, completion_tokens: 300 };
/** A model the Owner prices in PRICING, for the last test only. */
const OWNER_PRICED = 'claude-haiku-4-5';
const OWNER_PRICE = { InputText: 2, OutputText: 7 };

beforeAll(async () => {
  f = await startProxyFixture();
  await f.config({ PRICING: JSON.stringify({ ChatPricing: { [OWNER_PRICED]: OWNER_PRICE } }) });
});
afterAll(async () => { await f?.close(); });

/** The catalogue's input and output price of a name (USD per million tokens), which must exist. */
function listPrice(name: string): { input: number; output: number } {
  const m = catalogueModel(name);
  if (!m) throw new Error(`the catalogue has no ${name}`);
  return { input: m.price.InputText, output: m.price.OutputText };
}
const cost = (p: { input: number; output: number }) => (usage.prompt_tokens * p.input + usage.completion_tokens * p.output) / 1e6;

/** One call of `model` on a Bedrock key whose `models` sends it as `bedrockId`; the usage row it left. */
async function callThrough(model: string, bedrockId: string) {
  const level = nextLevel();
  const up = secret('bedrock-price');
  await f.addKey(level, up, { config: { provider_type: 'bedrock', region: 'us-east-1', models: { [model]: bedrockId } } });
  f.mock.behave(up, { usage, text: 'Priced on Bedrock.' });
  const user = await f.account({ level });
  const answer = await f.anthropic(user.key).messages.create({ model, max_tokens: 500, messages: [{ role: 'user', content: 'Hi' }] });
  expect(answer.usage).toMatchObject({ input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens });
  expect(f.mock.requests.at(-1)!.path).toBe(`/model/${encodeURIComponent(bedrockId)}/invoke`);
  const rows = await f.usage(user.id);
  expect(rows).toHaveLength(1);
  // The record names the model the client called, whatever ID went upstream.
  expect(rows[0]).toMatchObject({ model, prompt: usage.prompt_tokens, completion: usage.completion_tokens });
  return rows[0];
}

describe('a call on a Bedrock key', () => {
  it('is billed at the Bedrock ID\'s own catalogue price where the catalogue has it', async () => {
    const model = 'claude-sonnet-4-5';
    const profile = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
    const own = listPrice(`aws/${profile}`);
    // Otherwise this test could not tell the two prices apart.
    expect(own).not.toEqual(listPrice(model));
    const row = await callThrough(model, profile);
    expect(row.credit_used).toBeCloseTo(cost(own), 12);
  });

  it('is billed at the client-facing model\'s price when the catalogue lacks the Bedrock ID', async () => {
    const model = 'claude-sonnet-4-5';
    // A custom model's ID: not in the catalogue.
    const custom = 'us.anthropic.claude-house-tuned-v1:0';
    expect(catalogueModel(`aws/${custom}`)).toBeNull();
    const row = await callThrough(model, custom);
    expect(row.credit_used).toBeCloseTo(cost(listPrice(model)), 12);
  });

  it('is billed at the Owner\'s PRICING for the client\'s model over the Bedrock ID\'s catalogue price', async () => {
    const profile = 'us.anthropic.claude-haiku-4-5-20251001-v1:0';
    expect(catalogueModel(`aws/${profile}`)).not.toBeNull();
    const row = await callThrough(OWNER_PRICED, profile);
    expect(row.credit_used).toBeCloseTo(cost({ input: OWNER_PRICE.InputText, output: OWNER_PRICE.OutputText }), 12);
  });
});
