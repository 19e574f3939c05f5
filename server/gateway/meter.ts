/**
 * The units of a unit-billed route (routes.ts `meter` other than `tokens`): the most a call can
 * use, reserved at admission, and what it used, read from the answer at settle. Prices and
 * costs are domain/pricing/units.ts's; this file reads requests and answers.
 */
import { estimateInputTokens } from '../domain/pricing/estimate';
import {
  AUDIO_TOKENS_PER_SECOND, NO_TOKENS, SPEECH_AUDIO_TOKENS_PER_CHAR, unitPriceFor, unitUsage,
  type UnitMeter, type UnitPrice, type UnitTokens, type UnitUsage,
} from '../domain/pricing/units';
import type { ProxyCall } from './call';
import type { Delivered } from './dispatch/attempt';

/** Most images one request may ask for, as OpenAI's API has it. */
const MAX_IMAGES = 10;
/**
 * An upload's audio is assumed to last at most one second per 2,000 bytes (16 kbit/s, below
 * the common encodings' rates): the reservation before the upstream says how long it was.
 */
export const UPLOAD_BYTES_PER_SECOND = 2000;
/** A transcript answered as plain text, srt or vtt reports no duration: about 15 characters of speech a second. */
const TRANSCRIPT_CHARS_PER_SECOND = 15;
/** Output text tokens of a transcript, per second of audio (a reservation for token-priced models). */
const TRANSCRIPT_TOKENS_PER_SECOND = 4;
/** A rerank search unit: one query with up to 100 documents, each document cut in pieces of 500 tokens. */
const DOCS_PER_SEARCH = 100;
const TOKENS_PER_DOC_PIECE = 500;
/** A realtime response without max_response_output_tokens is reserved this much output, priced as audio (the dearer kind). */
export const REALTIME_OUTPUT_TOKENS = 4096;

export const unitMeterOf = (c: ProxyCall): UnitMeter | null => (c.route.meter === 'tokens' ? null : c.route.meter);

export function unitPriceOf(c: ProxyCall, meter: UnitMeter, model: string): UnitPrice {
  return unitPriceFor(meter, model, c.owner.pricing);
}

/** A request field, from the JSON body or the upload's form fields. */
function field(c: ProxyCall, name: string): unknown {
  return c.form ? c.form[name] : c.doc?.[name];
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

function imagesAsked(c: ProxyCall): number {
  const n = Number(field(c, 'n') ?? 1);
  return Number.isInteger(n) && n >= 1 ? Math.min(n, MAX_IMAGES) : 1;
}

function searchUnits(doc: Record<string, unknown>): number {
  const docs = Array.isArray(doc.documents) ? doc.documents : [];
  const query = Math.ceil(text(doc.query).length / 3);
  let pieces = 0;
  for (const d of docs) {
    const t = typeof d === 'string' ? d : typeof d === 'object' && d !== null ? text((d as { text?: unknown }).text) || JSON.stringify(d) : '';
    pieces += Math.max(1, Math.ceil((Math.ceil(t.length / 3) + query) / TOKENS_PER_DOC_PIECE));
  }
  return Math.max(1, Math.ceil(pieces / DOCS_PER_SEARCH));
}

const int = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.ceil(v) : 0);

const tokens = (t: Partial<UnitTokens>): UnitTokens => ({ ...NO_TOKENS, ...t });

/** The most this call can use: what admission reserves. */
export function maxUnits(c: ProxyCall, meter: UnitMeter, p: UnitPrice): UnitUsage {
  switch (meter) {
    case 'call':
      return unitUsage({ calls: 1, tokens: tokens({ textIn: estimateInputTokens(c.doc) }) });
    case 'rerank':
      return unitUsage({ calls: searchUnits(c.doc), tokens: tokens({ textIn: estimateInputTokens(c.doc) }) });
    case 'image':
      return unitUsage({ images: imagesAsked(c), size: text(field(c, 'size')), quality: text(field(c, 'quality')), tokens: tokens({ textIn: Math.ceil(text(field(c, 'prompt')).length / 3) }) });
    case 'transcription': {
      const seconds = Math.ceil(c.uploadBytes / UPLOAD_BYTES_PER_SECOND);
      return unitUsage({ calls: 1, audioSeconds: seconds, tokens: tokens({ audioIn: seconds * AUDIO_TOKENS_PER_SECOND, textOut: p.tokenPriced ? seconds * TRANSCRIPT_TOKENS_PER_SECOND : 0 }) });
    }
    case 'realtime':
      // A realtime response (realtime/session.ts reserves each one with what the conversation holds so far).
      // Input is reserved as audio, the dearer kind: the conversation so far, which the response reads again.
      return unitUsage({ tokens: tokens({ audioIn: int(c.doc.input_tokens), audioOut: REALTIME_OUTPUT_TOKENS }) });
    case 'speech': {
      const characters = text(c.doc.input).length;
      return unitUsage({ calls: 1, characters, tokens: tokens({ textIn: characters, audioOut: Math.ceil(characters * SPEECH_AUDIO_TOKENS_PER_CHAR) }) });
    }
  }
}

function parse(body: Buffer | undefined): any {
  if (!body || body.length === 0) return undefined;
  try { return JSON.parse(body.toString('utf8')); } catch { return undefined; }
}

/** OpenAI's image and transcription token usage (input_tokens with text/image/audio details, output_tokens). */
function reportedTokens(u: any, inputKind: 'imageIn' | 'audioIn'): UnitTokens | null {
  if (typeof u !== 'object' || u === null || (u.input_tokens === undefined && u.output_tokens === undefined)) return null;
  const d = u.input_tokens_details ?? u.input_token_details ?? {};
  const input = int(u.input_tokens);
  const media = int(inputKind === 'imageIn' ? d.image_tokens : d.audio_tokens);
  const textIn = d.text_tokens !== undefined ? int(d.text_tokens) : Math.max(0, input - media);
  const out = int(u.output_tokens);
  return inputKind === 'imageIn' ? tokens({ textIn, imageIn: media, imageOut: out }) : tokens({ textIn, audioIn: media, textOut: out });
}

/** What the delivered answer used; estimates (named in docs/proxy.md) where the answer does not say. */
export function usedUnits(c: ProxyCall, meter: UnitMeter, p: UnitPrice, o: Delivered): UnitUsage {
  const max = maxUnits(c, meter, p);
  const doc = parse(o.body);
  switch (meter) {
    case 'call':
    case 'realtime':
      return max;
    case 'rerank': {
      const billed = doc?.meta?.billed_units;
      const u = doc?.usage;
      const reportedIn = int(billed?.input_tokens) || int(u?.prompt_tokens) || int(u?.total_tokens);
      return unitUsage({ calls: int(billed?.search_units) || max.calls, tokens: tokens({ textIn: reportedIn || max.tokens.textIn }) });
    }
    case 'image': {
      const usage = doc?.usage ?? o.rawUsage;
      const images = Array.isArray(doc?.data) ? doc.data.length : max.images;
      const size = text(doc?.size) || max.size;
      const quality = text(doc?.quality) || max.quality;
      const reported = reportedTokens(usage, 'imageIn');
      if (reported && p.tokenPriced) return unitUsage({ size, quality, tokens: reported });
      return unitUsage({ images, size, quality, tokens: tokens({ textIn: max.tokens.textIn }) });
    }
    case 'transcription': {
      const usage = doc?.usage ?? o.rawUsage;
      const reported = usage?.type === 'duration' ? null : reportedTokens(usage, 'audioIn');
      const seconds = usage?.type === 'duration' ? Number(usage.seconds) || 0
        : typeof doc?.duration === 'number' ? doc.duration
          : o.bytes !== undefined && o.bytes >= 0 ? o.bytes / TRANSCRIPT_CHARS_PER_SECOND
            : reported ? reported.audioIn / AUDIO_TOKENS_PER_SECOND : text(doc?.text).length / TRANSCRIPT_CHARS_PER_SECOND;
      const audioSeconds = Math.max(1, Math.ceil(seconds));
      if (reported && p.tokenPriced) return unitUsage({ calls: 1, audioSeconds, tokens: reported });
      return unitUsage({ calls: 1, audioSeconds, tokens: tokens({ audioIn: audioSeconds * AUDIO_TOKENS_PER_SECOND }) });
    }
    case 'speech': {
      const out = int((o.rawUsage as { output_tokens?: unknown } | undefined)?.output_tokens);
      return out ? unitUsage({ calls: 1, characters: max.characters, tokens: tokens({ textIn: max.characters, audioOut: out }) }) : max;
    }
  }
}
