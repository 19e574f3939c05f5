/**
 * A batch input file's JSONL lines, checked and measured as they pass on their way upstream:
 * one line is held at a time (at most the largest call body, MAX_BODY_BYTES), never the file.
 *
 * Each line is a call: `{custom_id, method: "POST", url, body}` as OpenAI documents the batch
 * input (platform.openai.com/docs/guides/batch, "Preparing your batch file"). Every line names
 * the same endpoint and, after the account's model mapping, the same model (OpenAI refuses a
 * batch whose lines name several). A line naming a model the mapping changes is rewritten with
 * the routed model, as an upload's `model` field is. The worst case of each line is summed the
 * way admission bounds a call (domain/pricing/estimate.ts): its input bound, and its output cap
 * (max_completion_tokens, max_output_tokens or max_tokens, times `n`) or, without one, a count
 * of uncapped completions the batch reserves at the model's output limit.
 */
import type { Refusal } from '../errors';
import type { Endpoint } from '../providers/types';
import { estimateInputTokens, maxOutputTokens } from '../../domain/pricing/estimate';
import { modelNameProblem } from '../stages/model-name';
import { LineMembers, MEMBER, skipSpace } from './line-members';

/** The routes a batch line may call (OpenAI's batch endpoints), by the proxy endpoint each is. */
export const BATCH_URLS: Readonly<Record<string, Endpoint>> = {
  '/v1/chat/completions': 'chat',
  '/v1/responses': 'responses',
  '/v1/embeddings': 'embeddings',
  '/v1/completions': 'completions',
};

/** A line that stops the upload: the file is refused whole and never completes upstream. */
export class FileRefusal extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.message);
  }
}

const refuse = (message: string): never => {
  throw new FileRefusal({ status: 400, code: 'invalid_file', message });
};

export interface LineRules {
  /** The largest line (a call's body can be no larger: MAX_BODY_BYTES). */
  maxLineBytes: number;
  /** The model a requested one is routed as (the account's and Owner's mappers). */
  map(model: string): string;
  /** The routed model's context window, which bounds a line's input as it bounds a call's. */
  context(model: string): number | null;
}

const NL = 0x0a;
const OPEN = 0x7b;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const positiveInt = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.ceil(v) : undefined);

export class BatchLines {
  /** Calls read (blank lines are not calls). */
  lines = 0;
  /** The model line 1 names, as written and as routed; '' before it is read. */
  requested = '';
  model = '';
  url = '';
  inputBound = 0;
  outputCapped = 0;
  uncappedLines = 0;
  /** Physical lines seen, for the line numbers errors name. */
  private seen = 0;
  private held: Buffer[] = [];
  private heldBytes = 0;
  private context: number | null = null;
  private lastRequested = '';
  private lastMapped = '';
  private readonly members = new LineMembers();

  constructor(private readonly rules: LineRules) {}

  /** Whether line 1 has been read: the file's model and url are known. */
  get first(): boolean {
    return this.model !== '';
  }

  /** The file's bytes, checked line by line, as they go on (a line whose model mapping changes, rewritten). */
  async *filter(bytes: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of bytes) yield* this.push(chunk);
    yield* this.end();
  }

  /** The complete lines this chunk ends, checked; the rest held for the next. */
  *push(chunk: Buffer): Generator<Buffer> {
    let start = 0;
    // Bytes of `chunk` from `start` to here pass as they are, in one piece.
    let pass = 0;
    for (let nl = chunk.indexOf(NL, start); nl !== -1; nl = chunk.indexOf(NL, start)) {
      let line: Buffer;
      if (this.heldBytes > 0) {
        if (this.heldBytes + nl - start > this.rules.maxLineBytes) this.tooLong();
        line = Buffer.concat([...this.held, chunk.subarray(start, nl + 1)]);
        this.held = [];
        this.heldBytes = 0;
        yield this.line(line);
        pass = nl + 1;
      } else {
        if (nl - start > this.rules.maxLineBytes) this.tooLong();
        const bytes = chunk.subarray(start, nl + 1);
        const out = this.line(bytes);
        if (out !== bytes) {
          // Rewritten: what came before it goes first, then the new line.
          if (start > pass) yield chunk.subarray(pass, start);
          yield out;
          pass = nl + 1;
        }
      }
      start = nl + 1;
    }
    if (start > pass) yield chunk.subarray(pass, start);
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      if (this.heldBytes + rest.length > this.rules.maxLineBytes) this.tooLong();
      // A copy: the chunk's memory may be reused by its reader.
      this.held.push(Buffer.from(rest));
      this.heldBytes += rest.length;
    }
  }

  /** The last line, when the file does not end with a line break. */
  *end(): Generator<Buffer> {
    if (this.heldBytes === 0) return;
    const line = Buffer.concat(this.held);
    this.held = [];
    this.heldBytes = 0;
    yield this.line(line);
  }

  private tooLong(): never {
    return refuse(`Line ${this.seen + 1} of the file exceeds ${this.rules.maxLineBytes} bytes, the largest request body (MAX_BODY_BYTES)`);
  }

  /** One line (with its line break, if any) checked and measured: the bytes to send for it. */
  private line(bytes: Buffer): Buffer {
    const n = ++this.seen;
    let end = bytes.length;
    if (end > 0 && bytes[end - 1] === NL) end--;
    if (end > 0 && bytes[end - 1] === 0x0d) end--;
    const at = skipSpace(bytes, 0, end);
    if (at === end || bytes[at] !== OPEN) return this.noObject(bytes, end, n);
    // Read by its members, not parsed whole: JSON.parse would keep each short custom_id in V8's old space (line-members.ts).
    const m = this.members;
    let parsed: unknown;
    try {
      if (!m.read(bytes, at, end)) return refuse(`Line ${n} of the file is not valid JSON`);
      parsed = m.value(bytes, MEMBER.body);
    } catch {
      return refuse(`Line ${n} of the file is not valid JSON`);
    }
    const customId = m.text(bytes, MEMBER.custom_id);
    const url = m.text(bytes, MEMBER.url);
    if (customId === undefined || customId === '' || url === undefined || !isObject(parsed)) {
      return refuse(`Line ${n} of the file must be a JSON object with custom_id, method, url and body`);
    }
    if (m.text(bytes, MEMBER.method) !== 'POST') return refuse(`Line ${n} of the file: method must be "POST"`);
    const endpoint = BATCH_URLS[url];
    if (endpoint === undefined) return refuse(`Line ${n} of the file: url must be one of ${Object.keys(BATCH_URLS).join(', ')}`);
    const body = parsed;
    const requested = body.model;
    const problem = modelNameProblem(requested);
    if (problem) return refuse(`Line ${n} of the file: body.${problem}`);
    const model = requested === this.lastRequested ? this.lastMapped : this.rules.map(requested as string);
    this.lastRequested = requested as string;
    this.lastMapped = model;
    if (this.lines === 0) {
      this.requested = requested as string;
      this.model = model;
      this.url = url;
      this.context = this.rules.context(model);
    } else if (model !== this.model) {
      return refuse(`Line ${n} of the file names model ${model}, line 1 names ${this.model}: a batch file names one model`);
    } else if (url !== this.url) {
      return refuse(`Line ${n} of the file calls ${url}, line 1 calls ${this.url}: a batch file calls one endpoint`);
    }
    this.lines++;
    // The line's bytes bound its body's (a few more: custom_id, method, url), without writing the body again.
    this.inputBound += estimateInputTokens(body, bytes, model, this.context);
    if (endpoint !== 'embeddings') {
      const capped = maxOutputTokens(body, 0, false);
      if (capped > 0) this.outputCapped += capped;
      // Each completion asked for (`n`) may reach the model's output limit.
      else this.uncappedLines += Math.max(positiveInt(body.n) ?? 1, positiveInt(body.best_of) ?? 1);
    }
    if (model === requested) return bytes;
    // The body's bytes replaced, the rest as sent; a line naming body twice is written again whole, with the body JSON.parse keeps.
    if (m.bodies > 1) {
      const o = JSON.parse(bytes.toString('utf8', 0, end)) as Record<string, unknown>;
      return Buffer.from(`${JSON.stringify({ ...o, body: { ...body, model } })}${bytes.toString('latin1', end)}`);
    }
    return Buffer.concat([bytes.subarray(0, m.start[MEMBER.body]), Buffer.from(JSON.stringify({ ...body, model })), bytes.subarray(m.end[MEMBER.body])]);
  }

  /** A line that opens no object: blank (passed on), or refused as JSON.parse reads it. */
  private noObject(bytes: Buffer, end: number, n: number): Buffer {
    const text = bytes.toString('utf8', 0, end);
    if (text.trim() === '') return bytes;
    try {
      JSON.parse(text);
    } catch {
      return refuse(`Line ${n} of the file is not valid JSON`);
    }
    return refuse(`Line ${n} of the file must be a JSON object with custom_id, method, url and body`);
  }
}
