import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { APIError } from 'openai';
import { drain, hello, secret, sleep, startProxyFixture, type ProxyFixture } from '../test-fixture';

let f: ProxyFixture;
beforeAll(async () => { f = await startProxyFixture({ streamIdleTimeoutMs: 400 }); });
afterAll(async () => { await f?.close(); });

const streamChat = (key: string, opts: { signal?: AbortSignal } = {}) =>
  f.openai(key).chat.completions.create({ model: 'gpt-4o', messages: hello, stream: true }, opts);

describe('streams the upstream breaks after the first byte', () => {
  it('a cut stream ends with an error the openai SDK raises, billed as abnormal for what was delivered', async () => {
    const up = secret('cut');
    await f.addKey(70, up);
    const user = await f.account({ level: 70 });
    f.mock.behave(up, { chunks: 6, cutAfterChunks: 2, text: 'aaaaaabbbbbbccccccddddddeeeeeeffffff' });
    const n = f.mock.requests.length;
    const { items, error } = await drain(await streamChat(user.key));
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).message).toMatch(/interrupted/);
    expect(items.map((c) => c.choices[0]?.delta.content).join('')).toBe('aaaaaabbbbbb');
    // Not retried: the client already had bytes.
    expect(f.mock.requests.length - n).toBe(1);
    const [row] = await f.usage(user.id);
    expect(row.status).toBe('abnormal');
    expect(row.completion).toBe(2);
    expect(row.prompt).toBeGreaterThan(0);
    expect(row.credit_used).toBeGreaterThan(0);
  });

  it('a raw client sees no clean end: the connection closes without the terminating chunk', async () => {
    const up = secret('cut-raw');
    await f.addKey(71, up);
    const user = await f.account({ level: 71 });
    f.mock.behave(up, { chunks: 4, cutAfterChunks: 1 });
    const res = await fetch(`${f.gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: hello, stream: true }),
    });
    expect(res.status).toBe(200);
    const text = await res.text().then((t) => ({ t, err: null as unknown }), (err) => ({ t: '', err }));
    expect(text.err).toBeInstanceOf(TypeError);
  });

  it('a cut Anthropic stream raises in @anthropic-ai/sdk and bills the input tokens it announced', async () => {
    const up = secret('cut-anthropic');
    await f.addKey(72, up, { config: { provider_type: 'anthropic' } });
    const user = await f.account({ level: 72 });
    f.mock.behave(up, { chunks: 5, cutAfterChunks: 2, usage: { prompt_tokens: 300, completion_tokens: 40 } });
    const stream = await f.anthropic(user.key).messages.create({ model: 'claude-haiku-4-5', max_tokens: 50, messages: hello, stream: true });
    const { items, error } = await drain(stream);
    expect(error).toBeDefined();
    expect((error as Error).constructor.name).toBe('APIError');
    expect(items.filter((e) => e.type === 'content_block_delta')).toHaveLength(2);
    const [row] = await f.usage(user.id);
    expect(row).toMatchObject({ status: 'abnormal', prompt: 300, endpoint: '/v1/messages' });
    expect(row.completion).toBeGreaterThanOrEqual(2);
    expect(row.completion).toBeLessThan(40);
  });

  it('a stalled stream is cut after STREAM_IDLE_TIMEOUT_MS and raises in the SDK', async () => {
    const up = secret('stall');
    await f.addKey(73, up);
    const user = await f.account({ level: 73 });
    f.mock.behave(up, { chunks: 5, stallAfterChunks: 1 });
    const started = Date.now();
    const { items, error } = await drain(await streamChat(user.key));
    const took = Date.now() - started;
    expect(error).toBeInstanceOf(APIError);
    expect(items).toHaveLength(1);
    expect(took).toBeGreaterThanOrEqual(350);
    expect(took).toBeLessThan(3000);
    const [row] = await f.usage(user.id);
    expect(row.status).toBe('abnormal');
  });
});

describe('backpressure', () => {
  it('relays a large stream to a slow reader whole and in order', async () => {
    const up = secret('big');
    await f.addKey(76, up);
    const user = await f.account({ level: 76 });
    const text = Array.from({ length: 200 }, (_, i) => `<${i}>` + 'x'.repeat(10_000)).join('');
    f.mock.behave(up, { chunks: 200, text });
    const res = await fetch(`${f.gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: hello, stream: true }),
    });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let raw = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      raw += decoder.decode(value, { stream: true });
      await sleep(2);
    }
    const events = raw.split('\n\n').filter((e) => e.startsWith('data: {'));
    const content = events.map((e) => JSON.parse(e.slice(6)).choices[0]?.delta?.content ?? '').join('');
    expect(content).toBe(text);
    expect(raw.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect((await f.usage(user.id))[0].status).toBe('ok');
  });
});

describe('streams that fail before the first byte', () => {
  it('are retried on the next key; the client gets one whole stream, billed once', async () => {
    const cut = secret('cut-early');
    const good = secret('cut-early-good');
    await f.addKey(74, cut);
    const goodId = await f.addKey(74, good);
    f.mock.behave(cut, { cutAfterChunks: 0 });
    const user = await f.account({ level: 74 });
    for (let i = 0; i < 2; i++) {
      const { items, error } = await drain(await streamChat(user.key));
      expect(error).toBeUndefined();
      expect(items.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('This is a mock answer from gpt-4o.');
    }
    expect(f.mock.requests.some((r) => r.credential === cut)).toBe(true);
    const rows = await f.usage(user.id);
    expect(rows.map((r) => [r.key_id, r.status])).toEqual([[goodId, 'ok'], [goodId, 'ok']]);
  });
});

describe('a client that goes away', () => {
  it('aborts the upstream request mid-stream and is billed for what it got', async () => {
    // An upstream that notes when its response is closed before it finished.
    const closedEarly: number[] = [];
    const upstream = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let i = 0;
      const timer = setInterval(() => {
        res.write(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: `c${i}` } }] })}\n\n`);
        if (++i === 30) { clearInterval(timer); res.end('data: [DONE]\n\n'); }
      }, 100);
      res.on('close', () => { clearInterval(timer); if (!res.writableFinished) closedEarly.push(Date.now()); });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    try {
      await f.addKey(75, secret('client-abort'), { provider: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` });
      const user = await f.account({ level: 75 });
      const stream = await streamChat(user.key);
      let got = 0;
      for await (const c of stream) {
        if (c.choices[0]?.delta.content) got++;
        if (got === 2) break;
      }
      const leftAt = Date.now();
      while (closedEarly.length === 0 && Date.now() - leftAt < 2000) await sleep(20);
      expect(closedEarly).toHaveLength(1);
      expect(closedEarly[0] - leftAt).toBeLessThan(1000);
      const rows = await f.usage(user.id);
      expect(rows).toHaveLength(1);
      expect(rows[0].status).toBe('abnormal');
      expect(rows[0].completion).toBeLessThan(10);
    } finally {
      upstream.closeAllConnections();
      upstream.close();
    }
  });
});
