/**
 * POST /v1/files: a multipart upload streamed to the provider key that will keep the file, up
 * to MAX_FILE_BYTES, never held whole. Free: neither admitted nor billed (a batch naming the
 * file is reserved and billed, batches/).
 *
 * The form is read with upload/form.ts, routed by its `purpose` field: parts before it are
 * spooled (the openai SDK sends the file first), those after it stream on. A `batch` file is
 * routed as a call to the model its lines name: the upstream request starts once line 1 has
 * been read (only it is held), the model mapped and checked as a call's (AllowModels,
 * AllowLevels), and a key chosen (files/placement.ts). Every later line is checked as it passes
 * (files/batch-lines.ts); a bad one stops the upload before its end, so the provider never
 * keeps the file, and nothing is noted. Once the provider has answered, the file is noted
 * (files/file-book.ts) and its answer relayed.
 */
import type { ProxyCall, ProxySettings } from '../call';
import { CLIENT_LEFT, refuse, type Refusal } from '../errors';
import { MULTIPART, NOT_MULTIPART, UploadForm, type FileFilter } from '../upload/form';
import { mapModel } from '../stages/map-model';
import { checkAccess } from '../stages/access';
import { BATCH_URLS, BatchLines, FileRefusal } from './batch-lines';
import { placeFile, type PlacementDeps } from './placement';
import { FILE_ID, type FileBook } from './file-book';
import { modelLimits } from '../../domain/pricing/estimate';
import { requestWhole } from '../../adapters/upstream-http/whole';
import { TIMEOUT_CODES } from '../../adapters/upstream-http/types';
import type { UpstreamClient } from '../../adapters/upstream-http/client';
import { dropped } from '../dispatch/relay';
import { scrub, scrubHeaders, scrubText } from '../dispatch/scrub';
import type { Logger } from '../../core/log';
import { errorFields } from '../../core/log';

export interface UploadDeps extends PlacementDeps {
  files: Pick<FileBook, 'rememberFile'>;
  upstream: UpstreamClient;
  settings: Pick<ProxySettings, 'maxBodyBytes' | 'upstreamTimeoutMs' | 'streamIdleTimeoutMs' | 'maxFileBytes'>;
  log: Pick<Logger, 'warn'>;
}

/** The purposes relayed (OpenAI's): a batch input is checked and routed by its lines, the others as they are. */
export const FILE_PURPOSES: ReadonlySet<string> = new Set(['batch', 'user_data', 'assistants', 'vision']);
const MAX_ANSWER_BYTES = 1024 * 1024;
const bad = (message: string): Refusal => ({ status: 400, code: 'invalid_request', message });
const NO_PURPOSE = bad(`purpose: required, one of ${[...FILE_PURPOSES].join(', ')}`);
const ONE_FILE = bad("The form takes one file, in the field 'file'");
const NO_FILE = bad("file: required (a file part named 'file')");
const EMPTY_BATCH = bad('A batch input file needs at least one line');

const tooLarge = (limit: number): Refusal => ({ status: 413, code: 'body_too_large', message: `The file exceeds ${limit} bytes (MAX_FILE_BYTES)` });
const formRefusal = (r: Refusal, limit: number): Refusal => (r.status === 499 ? CLIENT_LEFT : r.code === 'body_too_large' ? tooLarge(limit) : r);


export async function uploadFile(d: UploadDeps, c: ProxyCall): Promise<void> {
  const limit = d.settings.maxFileBytes ?? 0;
  const up = c.ex.upload;
  if (!up) {
    // The transport refused the body's framing (and answered), or it is not an upload at all.
    const read = await c.ex.readJsonObject({ required: false });
    if (read.ok) return refuse(c, NOT_MULTIPART);
    return refuse(c, 'refusal' in read ? read.refusal : CLIENT_LEFT);
  }
  if (up.refusal) return refuse(c, tooLarge(limit));
  const type = c.ex.headers['content-type'];
  if (type === undefined || !MULTIPART.test(type)) return refuse(c, NOT_MULTIPART);
  const form = new UploadForm(up, type, 'purpose');
  c.upload = form;
  const r = await form.ready;
  if (r) return refuse(c, formRefusal(r, limit));
  const purpose = form.fields.purpose;
  if (!FILE_PURPOSES.has(purpose)) return refuse(c, NO_PURPOSE);
  c.form = form.fields;

  const lines = purpose === 'batch' ? new BatchLines({
    maxLineBytes: d.settings.maxBodyBytes,
    map: (m) => routedModel(c, m),
    context: (m) => modelLimits(m, c.owner.defaultOutputLimit).context,
  }) : null;
  let filename = '';
  let files = 0;
  const filter: FileFilter = (part, bytes) => {
    if (part.name !== 'file' || ++files > 1) throw new FileRefusal(ONE_FILE);
    filename = part.filename;
    return lines ? lines.filter(bytes) : bytes;
  };
  // What stopped the upload on its way: the client sees it, whatever the upstream made of the cut.
  let stopped: Refusal | null = null;
  const source = form.body(null, filter);
  const body = (async function* () {
    try {
      // The last piece (the closing boundary) waits until the form proved whole: a form cut short never completes upstream.
      let last: Buffer | undefined;
      for await (const piece of source) {
        if (last) yield last;
        last = piece;
      }
      if (files === 0) throw new FileRefusal(NO_FILE);
      if (lines && lines.lines === 0) throw new FileRefusal(EMPTY_BATCH);
      if (last) yield last;
    } catch (err) {
      stopped = err instanceof FileRefusal ? err.refusal : formRefusal(form.failed ?? CLIENT_LEFT, limit);
      throw err;
    }
  })();

  // A batch file is routed by its line 1: read it (and what comes before it) before choosing.
  const held: Buffer[] = [];
  if (lines) {
    try {
      while (!lines.first) {
        const next = await body.next();
        if (next.done) break;
        held.push(next.value);
      }
    } catch {
      return refuse(c, stopped ?? CLIENT_LEFT);
    }
    c.requestedModel = lines.requested;
    mapModel(c);
    const v = checkAccess(c);
    if (v) {
      void body.return(undefined);
      return refuse(c, v);
    }
  } else {
    c.level = c.row.level;
  }
  const placed = placeFile(d, c, lines ? { model: c.model, endpoint: BATCH_URLS[lines.url] } : null);
  if (!placed) {
    void body.return(undefined);
    const what = lines ? `${lines.url} batches of ${c.model}` : 'files';
    return refuse(c, { status: 503, code: 'no_provider_key', message: `No provider key of this account's Level serves ${what} (only OpenAI-compatible keys keep files; request ${c.id})` });
  }
  const { key, target } = placed;
  const stream = (async function* () {
    yield* held;
    held.length = 0;
    yield* body;
  })();

  c.servedBy = key;
  c.servedLevel = key.level;
  c.attempts = 1;
  const startedAt = (c.attemptAt = performance.now());
  let answer;
  try {
    answer = await requestWhole(d.upstream, {
      origin: target.origin,
      path: target.path,
      method: 'POST',
      headers: target.headers,
      contentType: form.contentType,
      body: null,
      bodyStream: stream,
      headersTimeout: d.settings.upstreamTimeoutMs,
      bodyTimeout: d.settings.streamIdleTimeoutMs,
    }, MAX_ANSWER_BYTES);
  } catch (err) {
    if (stopped) return refuse(c, stopped);
    const timeout = TIMEOUT_CODES.has((err as { code?: string }).code ?? '');
    d.log.warn('file_upload_failed', { request: c.id, owner: c.row.ownerId, key: key.id, cause: scrub((err as Error).message, key, 300, target.headers) });
    return refuse(c, timeout
      ? { status: 504, code: 'upstream_timeout', message: `The upstream provider did not answer in time (request ${c.id})` }
      : { status: 502, code: 'upstream_error', message: `The upstream provider could not be reached (request ${c.id})` });
  } finally {
    c.upstreamMs += performance.now() - startedAt;
    c.attemptAt = 0;
  }
  // The provider may answer before the whole file went (an early refusal): the cut still wins.
  if (stopped) return refuse(c, stopped);
  if (answer.status >= 400) {
    const text = answer.body.toString('utf8');
    const clean = scrubText(text, key, target.headers);
    return c.ex.relay(answer.status, scrubHeaders(answer.headers, key, target.headers), dropped, clean === text ? answer.body : Buffer.from(clean));
  }
  let file: { id?: unknown; bytes?: unknown; filename?: unknown };
  try {
    file = JSON.parse(answer.body.toString('utf8'));
  } catch {
    file = {};
  }
  if (typeof file.id !== 'string' || !FILE_ID.test(file.id)) {
    d.log.warn('file_upload_unreadable', { request: c.id, owner: c.row.ownerId, key: key.id, status: answer.status });
    return refuse(c, { status: 502, code: 'upstream_error', message: `The upstream provider's answer named no file (request ${c.id})` });
  }
  try {
    await d.files.rememberFile({
      id: file.id, ownerId: c.row.ownerId, accountId: c.row.id, keyId: key.id, purpose,
      filename: typeof file.filename === 'string' ? file.filename : filename,
      bytes: typeof file.bytes === 'number' ? file.bytes : up.received,
      ...(lines ? { model: lines.model, url: lines.url, lines: lines.lines, inputBound: lines.inputBound, outputCapped: lines.outputCapped, uncappedLines: lines.uncappedLines } : {}),
    });
  } catch (err) {
    // Unnoted, the file could be neither read nor deleted through the gateway: the caller uploads it again.
    d.log.warn('file_not_noted', { request: c.id, owner: c.row.ownerId, key: key.id, file: file.id, ...errorFields(err) });
    return refuse(c, { status: 503, code: 'database_unavailable', message: "The gateway's database is unavailable; upload the file again shortly", headers: { 'retry-after': '5' } });
  }
  c.ex.relay(answer.status, answer.headers, dropped, answer.body);
}

/** The model a line's requested one is routed as: the map-model stage's answer for it. */
function routedModel(c: ProxyCall, requested: string): string {
  const probe = { profile: c.profile, owner: c.owner, row: c.row, requestedModel: requested, model: '', level: 0 };
  mapModel(probe as unknown as ProxyCall);
  return probe.model;
}
