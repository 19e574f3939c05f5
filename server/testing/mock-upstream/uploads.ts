import type { IncomingMessage } from 'node:http';
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Busboy } from '@fastify/busboy';
import { estimateTokens, mockId, playStream, sendJson, splitText, type Frame } from './common';
import { openaiError, type Call } from './openai';
import { answerImages } from './media';

/** A file part as the mock saw it: never kept, only measured (a 20 MB upload costs the mock nothing). */
export interface ReceivedFile {
  field: string;
  filename: string;
  mimeType: string;
  bytes: number;
  sha256: string;
  /** Where the bytes were written, when the caller asked to keep files (the Files API does). */
  path?: string;
}

/**
 * A multipart body parsed as it arrives: fields by name (a repeated one as an array) and `files`.
 * With `keepIn`, each file is also streamed to a new file in that directory (never held in memory).
 */
export function readMultipart(req: IncomingMessage, keepIn?: string): Promise<Record<string, unknown> & { files: ReceivedFile[] }> {
  return new Promise((resolve, reject) => {
    const out: Record<string, unknown> & { files: ReceivedFile[] } = { files: [] };
    const written: Promise<void>[] = [];
    const bb = Busboy({ headers: req.headers as { 'content-type': string } });
    bb.on('field', (name, value) => {
      const prev = out[name];
      out[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
    });
    bb.on('file', (field, stream, filename, _enc, mimeType) => {
      const hash = createHash('sha256');
      let bytes = 0;
      const path = keepIn === undefined ? undefined : join(keepIn, `upload-${randomUUID()}`);
      if (path !== undefined) {
        const sink = createWriteStream(path);
        written.push(new Promise((done, fail) => { sink.on('finish', done); sink.on('error', fail); }));
        stream.pipe(sink);
      }
      stream.on('data', (c: Buffer) => { bytes += c.length; hash.update(c); });
      stream.on('end', () => out.files.push({ field, filename, mimeType, bytes, sha256: hash.digest('hex'), ...(path === undefined ? {} : { path }) }));
    });
    bb.on('finish', () => { Promise.all(written).then(() => resolve(out), reject); });
    bb.on('error', reject);
    req.on('error', reject);
    req.pipe(bb);
  });
}

/** The mock's audio rate: 16,000 bytes a second (128 kbit/s mp3). */
export const AUDIO_BYTES_PER_SECOND = 16_000;

const audioOf = (c: Call) => (c.body.files as ReceivedFile[]).find((f) => f.field === 'file');

/**
 * `POST /v1/audio/transcriptions` and `/translations`: the transcript in the asked
 * `response_format` (json, text, srt, vtt, verbose_json); whisper reports the duration in
 * seconds, gpt-4o transcribers report tokens, and stream their text as events with `stream=true`.
 */
export async function transcriptions(c: Call): Promise<void> {
  const audio = audioOf(c);
  if (!audio) return openaiError(c.res, 400, "'file' is a required property");
  const seconds = Math.max(1, Math.round(audio.bytes / AUDIO_BYTES_PER_SECOND));
  const text = c.behaviour.text ?? `Transcript of ${audio.filename} (${audio.bytes} bytes).`;
  const tokens = c.model.startsWith('gpt-4o');
  const audioTokens = seconds * 10;
  const usage = tokens
    ? { type: 'tokens', input_tokens: audioTokens + 5, input_token_details: { text_tokens: 5, audio_tokens: audioTokens }, output_tokens: estimateTokens(text), total_tokens: audioTokens + 5 + estimateTokens(text) }
    : { type: 'duration', seconds };
  if (c.body.stream === 'true' && tokens) {
    const content: Frame[] = splitText(text, c.behaviour.chunks ?? 3).map((delta) => ({ data: { type: 'transcript.text.delta', delta } }));
    await playStream(c.req, c.res, c.behaviour, { head: [], content, tail: [{ data: { type: 'transcript.text.done', text, usage } }] });
    return;
  }
  const format = typeof c.body.response_format === 'string' ? c.body.response_format : 'json';
  const plain = (type: string, body: string) => {
    c.res.writeHead(200, { 'content-type': `${type}; charset=utf-8`, 'content-length': Buffer.byteLength(body) });
    c.res.end(body);
  };
  switch (format) {
    case 'text': return plain('text/plain', text);
    case 'srt': return plain('text/plain', `1\n00:00:00,000 --> 00:00:0${Math.min(seconds, 9)},000\n${text}\n`);
    case 'vtt': return plain('text/vtt', `WEBVTT\n\n00:00:00.000 --> 00:00:0${Math.min(seconds, 9)}.000\n${text}\n`);
    case 'verbose_json':
      return sendJson(c.res, 200, { task: c.req.url?.includes('translations') ? 'translate' : 'transcribe', language: 'english', duration: seconds, text, segments: [], usage });
    default:
      return sendJson(c.res, 200, { text, usage });
  }
}

/** `POST /v1/images/edits` and `/variations`: the images from the uploaded ones (`image` or `image[]`). */
export function imageEdits(c: Call): Promise<void> {
  const images = (c.body.files as ReceivedFile[]).filter((f) => f.field === 'image' || f.field === 'image[]');
  if (images.length === 0) return Promise.resolve(openaiError(c.res, 400, "'image' is a required property"));
  const prompt = typeof c.body.prompt === 'string' ? c.body.prompt : `variation ${mockId('')}`;
  return answerImages(c, prompt, c.body, images.length);
}
