import { describe, expect, it } from 'vitest';
import { scrub, scrubHeaders, scrubText } from './scrub';
import { SseTap } from './sse';

const SECRET = 'sk-live-0123456789abcdefXYZ/+=';
const key = { secret: SECRET, provider: 'https://llm.owner.example:8443/openai/v1', config: { base_url: 'https://tokens.owner.example' } as Record<string, unknown> };

describe('scrubText', () => {
  it('takes out the secret in the forms an upstream echoes it, the Provider host, URLs and addresses', () => {
    const b64 = Buffer.from(SECRET).toString('base64');
    const text = `got ${SECRET}; encoded ${encodeURIComponent(SECRET)}; b64 ${b64}; url https://llm.owner.example:8443/openai/v1/chat?x=1; `
      + `host LLM.owner.example, token host tokens.owner.example, from 10.2.3.4:5000 and [fd00::1]:80`;
    expect(scrubText(text, key)).toBe('got [key]; encoded [key]; b64 [key]; url [url]; host [upstream], token host [upstream], from [address] and [address]');
  });

  it('keeps a JSON path such as messages[0] whole: only a bracketed IPv6 literal is an address', () => {
    expect(scrubText("Invalid type for 'messages[0]' at [::1]:8080 and [fd00::2]", key)).toBe("Invalid type for 'messages[0]' at [address] and [address]");
  });

  it('takes out anything that looks like a credential, keeping prose', () => {
    const text = 'Bearer authentication failed: Authorization: Bearer eyJhbGciOi.J9abc1 x-api-key: abc123def456 "api_key": "zzz999yyy" '
      + 'Incorrect API key provided: sk-proj-****abcd, gsk_0a1b2c3d4e5f, AIzaSyA1b2c3d4e5';
    expect(scrubText(text, key)).toBe('Bearer authentication failed: Authorization: Bearer [key] x-api-key: [key] "api_key": "[key]" '
      + 'Incorrect API key provided: [key], [key], [key]');
  });

  it('a credential sent with the request (an exchanged access token) counts as the secret', () => {
    expect(scrubText('token ya29.a0AfB_byC7 refused', key, { authorization: 'Bearer ya29.a0AfB_byC7' })).toBe('token [key] refused');
  });

  it('leaves a JSON error body valid JSON', () => {
    const body = JSON.stringify({ error: { message: `you sent "Bearer ${SECRET}" to https://llm.owner.example:8443/v1 \\ ok`, code: 'invalid_api_key' } });
    const out = scrubText(body, key);
    expect(JSON.parse(out)).toEqual({ error: { message: 'you sent "Bearer [key]" to [url] \\ ok', code: 'invalid_api_key' } });
  });

  it('scrub: one line, bounded; scrubHeaders: every value', () => {
    expect(scrub(`line one ${SECRET}\n\n  line two`, key, 20)).toBe('line one [key] line');
    expect(scrubHeaders({ location: 'https://llm.owner.example:8443/x', 'x-seen': [SECRET, 'plain'] }, key)).toEqual({ location: '[url]', 'x-seen': ['[key]', 'plain'] });
  });
});

describe('SseTap error events', () => {
  const ev = (o: unknown, event?: string) => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(o)}\n\n`;
  const content = ev({ choices: [{ index: 0, delta: { content: 'an error: sk-test-1234567890 is just text' } }] });

  it('scrubs an error event cut across chunks, and passes every other event byte for byte', () => {
    const tap = new SseTap('openai', false, (t) => scrubText(t, key));
    const error = ev({ error: { message: `bad key ${SECRET} at llm.owner.example` } });
    const all = Buffer.from(content + error);
    let out = '';
    for (let i = 0; i < all.length; i += 7) out += tap.push(all.subarray(i, i + 7)).toString();
    out += tap.end()?.toString() ?? '';
    expect(out).toBe(content + ev({ error: { message: 'bad key [key] at [upstream]' } }));
  });

  it('scrubs Anthropic error events and an unterminated last event; Responses events with "error":null pass', () => {
    const tap = new SseTap('anthropic', false, (t) => scrubText(t, key));
    const responses = ev({ type: 'response.created', response: { error: null, instructions: 'keep sk-abc-123456789' } }, 'response.created');
    expect(tap.push(Buffer.from(responses)).toString()).toBe(responses);
    const anthropic = `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: `x-api-key ${SECRET}` } })}`;
    expect(tap.push(Buffer.from(anthropic)).length).toBe(0);
    expect(tap.end()?.toString()).toBe(anthropic.replace(SECRET, '[key]'));
  });
});
