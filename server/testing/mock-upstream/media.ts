import { answerText, estimateTokens, mockId, nowSeconds, playStream, sendJson, sleep, splitText, usageFor, type Frame } from './common';
import { openaiError, type Call } from './openai';

/** `POST /v1/completions`: legacy and fill-in-the-middle (`suffix`) completions, whole or streamed. */
export async function completions(c: Call): Promise<void> {
  const prompt = Array.isArray(c.body.prompt) ? c.body.prompt.join('\n') : typeof c.body.prompt === 'string' ? c.body.prompt : '';
  if (c.body.prompt === undefined) return openaiError(c.res, 400, "'prompt' is a required property");
  const text = answerText(c.behaviour, c.model);
  const u = usageFor(c.behaviour, prompt + (typeof c.body.suffix === 'string' ? c.body.suffix : ''), text);
  const usage = { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, total_tokens: u.prompt_tokens + u.completion_tokens };
  const id = mockId('cmpl-');
  const created = nowSeconds();
  if (c.body.stream !== true) {
    sendJson(c.res, 200, { id, object: 'text_completion', created, model: c.model, choices: [{ text, index: 0, logprobs: null, finish_reason: 'stop' }], usage });
    return;
  }
  const includeUsage = (c.body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): Frame => ({ data: { id, object: 'text_completion', created, model: c.model, choices, ...(includeUsage ? { usage: null } : {}), ...extra } });
  const content = splitText(text, c.behaviour.chunks ?? 3).map((t) => chunk([{ text: t, index: 0, logprobs: null, finish_reason: null }]));
  const tail: Frame[] = [chunk([{ text: '', index: 0, logprobs: null, finish_reason: 'stop' }])];
  if (includeUsage) tail.push(chunk([], { usage }));
  tail.push({ data: '[DONE]' });
  await playStream(c.req, c.res, c.behaviour, { head: [], content, tail });
}

const CATEGORIES = ['harassment', 'hate', 'self-harm', 'sexual', 'violence'];

/** `POST /v1/moderations`: one result per input; text containing "attack" is flagged as violence. */
export function moderations(c: Call): void {
  const raw = c.body.input;
  const inputs = Array.isArray(raw) ? raw : [raw];
  if (raw === undefined) return openaiError(c.res, 400, "'input' is a required property");
  const results = inputs.map((i) => {
    const t = typeof i === 'string' ? i : JSON.stringify(i);
    const violent = /attack/i.test(t);
    return {
      flagged: violent,
      categories: Object.fromEntries(CATEGORIES.map((k) => [k, k === 'violence' && violent])),
      category_scores: Object.fromEntries(CATEGORIES.map((k) => [k, k === 'violence' && violent ? 0.91 : 0.001])),
    };
  });
  sendJson(c.res, 200, { id: mockId('modr-'), model: c.model, results });
}

/**
 * `POST /v1/rerank`, in the Cohere/Jina shape OpenAI-compatible providers expose: documents
 * scored by the words they share with the query; `meta.billed_units` and `usage` as they report them.
 */
export function rerank(c: Call): void {
  const query = typeof c.body.query === 'string' ? c.body.query : '';
  const docs = Array.isArray(c.body.documents) ? c.body.documents : null;
  if (!query || !docs) return openaiError(c.res, 400, "'query' and 'documents' are required");
  const words = new Set(query.toLowerCase().split(/\W+/).filter(Boolean));
  const texts = docs.map((d) => (typeof d === 'string' ? d : typeof (d as { text?: unknown })?.text === 'string' ? (d as { text: string }).text : JSON.stringify(d)));
  const scored = texts.map((t, index) => {
    const w = t.toLowerCase().split(/\W+/).filter(Boolean);
    const hits = w.filter((x) => words.has(x)).length;
    return { index, relevance_score: w.length ? hits / w.length : 0 };
  }).sort((a, b) => b.relevance_score - a.relevance_score);
  const topN = typeof c.body.top_n === 'number' ? c.body.top_n : scored.length;
  const results = scored.slice(0, topN).map((r) => (c.body.return_documents === true ? { ...r, document: { text: texts[r.index] } } : r));
  const tokens = c.behaviour.usage?.prompt_tokens ?? texts.reduce((n, t) => n + estimateTokens(t), estimateTokens(query));
  sendJson(c.res, 200, {
    id: mockId('rerank-'), model: c.model, results,
    meta: { billed_units: { search_units: Math.max(1, Math.ceil(texts.length / 100)) } },
    usage: { total_tokens: tokens },
  });
}

/** A tiny deterministic PNG-like payload standing in for an image. */
const imageBytes = (seed: string) => Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.from(seed)]).toString('base64');

/** gpt-image models report tokens; dall-e ones do not. */
const reportsTokens = (model: string) => model.startsWith('gpt-image');

/** Image token usage as gpt-image reports it: output tokens by size and quality, as its price page counts them. */
export function imageUsage(model: string, prompt: string, n: number, size: string, quality: string, inputImages = 0) {
  const big = size === '1024x1536' || size === '1536x1024';
  const per = { low: big ? 400 : 272, medium: big ? 1584 : 1056, high: big ? 6240 : 4160 }[quality] ?? 1056;
  const text = estimateTokens(prompt);
  const image = inputImages * 323;
  return reportsTokens(model)
    ? { input_tokens: text + image, input_tokens_details: { text_tokens: text, image_tokens: image }, output_tokens: per * n, total_tokens: text + image + per * n }
    : undefined;
}

/** Answers an image request (generation, edit or variation) whole or as gpt-image's event stream. */
export async function answerImages(c: Call, prompt: string, fields: Record<string, unknown>, inputImages = 0): Promise<void> {
  const n = typeof fields.n === 'number' ? fields.n : Number(fields.n ?? 1) || 1;
  const size = typeof fields.size === 'string' && fields.size !== 'auto' ? fields.size : '1024x1024';
  const quality = typeof fields.quality === 'string' && fields.quality !== 'auto' ? fields.quality : reportsTokens(c.model) ? 'medium' : 'standard';
  const usage = imageUsage(c.model, prompt, n, size, quality, inputImages);
  const data = Array.from({ length: n }, (_, i) => ({ b64_json: imageBytes(`${c.model}:${i}:${prompt}`) }));
  if (fields.stream !== true && fields.stream !== 'true') {
    sendJson(c.res, 200, { created: nowSeconds(), data, ...(reportsTokens(c.model) ? { size, quality, output_format: 'png', background: 'opaque', usage } : {}) });
    return;
  }
  const content: Frame[] = data.map((d, i) => ({ event: 'image_generation.partial_image', data: { type: 'image_generation.partial_image', b64_json: d.b64_json, partial_image_index: i, size, quality } }));
  const tail: Frame[] = [{ event: 'image_generation.completed', data: { type: 'image_generation.completed', b64_json: data[n - 1].b64_json, created_at: nowSeconds(), size, quality, output_format: 'png', background: 'opaque', usage } }];
  await playStream(c.req, c.res, c.behaviour, { head: [], content, tail });
}

/** `POST /v1/images/generations`. */
export function imageGenerations(c: Call): Promise<void> {
  const prompt = typeof c.body.prompt === 'string' ? c.body.prompt : '';
  if (!prompt) return Promise.resolve(openaiError(c.res, 400, "'prompt' is a required property"));
  return answerImages(c, prompt, c.body);
}

/** Bytes of mock audio per input character (about what 24 kHz speech at 48 kbit/s takes). */
export const SPEECH_BYTES_PER_CHAR = 400;

/** The mock audio for a text: deterministic bytes, SPEECH_BYTES_PER_CHAR per character. */
export function speechAudio(text: string): Buffer {
  const out = Buffer.allocUnsafe(Math.max(1, text.length) * SPEECH_BYTES_PER_CHAR);
  for (let i = 0; i < out.length; i++) out[i] = (i * 31 + text.charCodeAt(i % Math.max(1, text.length))) & 0xff;
  return out;
}

/**
 * `POST /v1/audio/speech`: binary audio (`audio/mpeg`, or the asked `response_format`'s type)
 * written in pieces as it is "synthesized", or with `stream_format: "sse"` the
 * `speech.audio.delta` events and a `speech.audio.done` carrying usage.
 */
export async function speech(c: Call): Promise<void> {
  const input = typeof c.body.input === 'string' ? c.body.input : '';
  if (!input || typeof c.body.voice !== 'string') return openaiError(c.res, 400, "'input' and 'voice' are required");
  const audio = speechAudio(input);
  const pieces = Math.max(1, c.behaviour.chunks ?? 4);
  const size = Math.ceil(audio.length / pieces);
  if (c.body.stream_format === 'sse') {
    const content: Frame[] = [];
    for (let i = 0; i < audio.length; i += size) content.push({ event: 'speech.audio.delta', data: { type: 'speech.audio.delta', audio: audio.subarray(i, i + size).toString('base64') } });
    const usage = { input_tokens: estimateTokens(input), output_tokens: Math.ceil(audio.length / 200), total_tokens: estimateTokens(input) + Math.ceil(audio.length / 200) };
    await playStream(c.req, c.res, c.behaviour, { head: [], content, tail: [{ event: 'speech.audio.done', data: { type: 'speech.audio.done', usage } }] });
    return;
  }
  const types: Record<string, string> = { mp3: 'audio/mpeg', opus: 'audio/ogg', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/pcm' };
  const format = typeof c.body.response_format === 'string' ? c.body.response_format : 'mp3';
  c.res.writeHead(200, { 'content-type': types[format] ?? 'audio/mpeg', 'transfer-encoding': 'chunked' });
  let gone = false;
  c.res.on('close', () => (gone = true));
  for (let i = 0, n = 0; i < audio.length; i += size, n++) {
    if (gone) return;
    if (c.behaviour.cutAfterChunks !== undefined && n >= c.behaviour.cutAfterChunks) return void c.req.socket.destroy();
    if (i > 0 && c.behaviour.chunkDelayMs) await sleep(c.behaviour.chunkDelayMs);
    if (!c.res.write(audio.subarray(i, i + size))) await new Promise((r) => c.res.once('drain', r));
  }
  c.res.end();
}
