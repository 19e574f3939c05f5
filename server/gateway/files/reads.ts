/**
 * GET /v1/files, GET /v1/files/{id}, GET /v1/files/{id}/content and DELETE /v1/files/{id}:
 * free, after authenticate and the caller's AllowIPs and Resources.
 *
 * The list is the account's own files as the gateway noted them (files/file-book.ts), paged as
 * OpenAI pages it: never the provider's list, which holds every account's files on that key.
 * The others go to the key that holds the file, with its credentials, and relay its answer
 * (errors scrubbed); a file's content is streamed back as it comes, never held. Only the
 * account the file belongs to reaches it: for any other (a sibling, its parent, another
 * tenant) and for an ID never handed out the answer is the same 404, and no key is asked. A
 * key since deleted or disabled is a 400 saying so.
 */
import type { ProxyCall, ProxySettings } from '../call';
import { refuse, type Refusal } from '../errors';
import { FILE_ID, type FileBook, type FileRow } from './file-book';
import { filesTarget, type FilesTarget } from './target';
import { enabledKey } from '../stages/dispatch';
import type { ProviderKinds } from '../providers/registry';
import type { KeyPool, PooledKey } from '../../state/provider-keys/key-pool';
import type { UpstreamClient } from '../../adapters/upstream-http/client';
import { requestWhole, type WholeResponse } from '../../adapters/upstream-http/whole';
import { TIMEOUT_CODES, type ResponseController, type ResponseHeaders } from '../../adapters/upstream-http/types';
import { dropped } from '../dispatch/relay';
import { scrub, scrubHeaders, scrubText } from '../dispatch/scrub';
import { noteUploadCopy, type ResponseStream } from '../transport';
import type { Logger } from '../../core/log';

/** What a client does to its files (routes.ts FILE_ROUTES). */
export type FileAction = 'list' | 'retrieve' | 'content' | 'delete';

export interface FileRequest {
  action: FileAction;
  /** The path's `{id}` as sent ('' on the list). */
  fileId: string;
  query: string;
}

export interface FileReadDeps {
  files: Pick<FileBook, 'holderOf' | 'page' | 'forget' | 'whyUnusable'>;
  pool: Pick<KeyPool, 'levelsOf' | 'keys'>;
  kinds: Pick<ProviderKinds, 'of'>;
  upstream: UpstreamClient;
  settings: Pick<ProxySettings, 'upstreamTimeoutMs' | 'streamIdleTimeoutMs'>;
  log: Pick<Logger, 'warn'>;
}

/** A file's metadata or an error: small. Content is streamed. */
const MAX_ANSWER_BYTES = 1024 * 1024;
/** OpenAI's bounds on a page of files (its `limit` defaults to 10,000). */
const MAX_PAGE = 10_000;

/** As OpenAI answers a file it does not know (platform.openai.com/docs/api-reference/files/retrieve). */
const notFound = (id: string): Refusal => ({ status: 404, code: 'not_found', message: `No such File object: ${id}` });
const invalid = (message: string): Refusal => ({ status: 400, code: 'invalid_value', message });

export async function answerFile(d: FileReadDeps, c: ProxyCall, r: FileRequest): Promise<void> {
  if (r.action === 'list') return list(d, c, r.query);
  const id = r.fileId;
  if (!FILE_ID.test(id)) return refuse(c, notFound(id.slice(0, 200)));
  const holder = await d.files.holderOf(c.row.ownerId, id);
  if (!holder || holder.accountId !== c.row.id) return refuse(c, notFound(id));
  const key = enabledKey(d.pool, c.row.ownerId, holder.keyId);
  const target = key && filesTarget(d.kinds, key);
  if (!key || !target) {
    const why = key ? 'no longer serves files' : await d.files.whyUnusable(c.row.ownerId, holder.keyId);
    return refuse(c, { status: 400, code: 'file_unavailable', message: `The provider key that holds file ${id} ${why}; upload the file again` });
  }
  c.servedBy = key;
  c.servedLevel = key.level;
  c.attempts = 1;
  if (r.action === 'content') return streamContent(d, c, key, target, id);
  const answer = await whole(d, c, key, target, r.action === 'delete' ? 'DELETE' : 'GET', `${target.path}/${id}`);
  if (!answer) return;
  // Gone from the list before the client hears it is deleted; a file the provider no longer has (expired) goes too.
  if (r.action === 'delete' && (answer.status < 300 || answer.status === 404)) await d.files.forget({ ownerId: c.row.ownerId, accountId: c.row.id }, id);
  if (answer.status < 400) return c.ex.relay(answer.status, answer.headers, dropped, answer.body);
  const text = answer.body.toString('utf8');
  const clean = scrubText(text, key, target.headers);
  c.ex.relay(answer.status, scrubHeaders(answer.headers, key, target.headers), dropped, clean === text ? answer.body : Buffer.from(clean));
}

function list(d: FileReadDeps, c: ProxyCall, query: string): Promise<void> | void {
  const q = new URLSearchParams(query);
  const limitText = q.get('limit');
  const limit = limitText === null ? MAX_PAGE : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) return refuse(c, invalid(`limit: must be a whole number from 1 to ${MAX_PAGE}`));
  const order = q.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') return refuse(c, invalid("order: must be 'asc' or 'desc'"));
  const after = q.get('after') ?? undefined;
  const purpose = q.get('purpose') ?? undefined;
  if (after !== undefined && !FILE_ID.test(after)) return refuse(c, invalid('after: not a file ID from this list'));
  return d.files.page({ ownerId: c.row.ownerId, accountId: c.row.id }, { limit, order, after, purpose }).then((page) => {
    if (!page) return refuse(c, invalid('after: not a file ID from this list'));
    const data = page.rows.map(fileObject);
    c.ex.send(200, { 'content-type': 'application/json' }, JSON.stringify({
      object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.more,
    }));
  });
}

/** A File object as OpenAI writes it, from what the gateway noted. */
function fileObject(f: FileRow) {
  return {
    id: f.id, object: 'file', bytes: f.bytes, created_at: Math.floor(f.createdAt.getTime() / 1000),
    filename: f.filename, purpose: f.purpose, status: 'processed', status_details: null, expires_at: null,
  };
}

const upstreamFailure = (c: ProxyCall, err: unknown): Refusal => (TIMEOUT_CODES.has((err as { code?: string }).code ?? '')
  ? { status: 504, code: 'upstream_timeout', message: `The upstream provider did not answer in time (request ${c.id})` }
  : { status: 502, code: 'upstream_error', message: `The upstream provider could not be reached (request ${c.id})` });

/** The key's whole answer (a File object, a deletion, an error); null when none came (the client was answered). */
async function whole(d: FileReadDeps, c: ProxyCall, key: PooledKey, target: FilesTarget, method: 'GET' | 'DELETE', path: string): Promise<WholeResponse | null> {
  const startedAt = (c.attemptAt = performance.now());
  try {
    return await requestWhole(d.upstream, {
      origin: target.origin, path, method, headers: target.headers, body: null,
      headersTimeout: d.settings.upstreamTimeoutMs, bodyTimeout: d.settings.streamIdleTimeoutMs,
    }, MAX_ANSWER_BYTES);
  } catch (err) {
    d.log.warn('file_upstream_failed', { request: c.id, owner: c.row.ownerId, key: key.id, cause: scrub((err as Error).message, key, 300, target.headers) });
    refuse(c, upstreamFailure(c, err));
    return null;
  } finally {
    c.upstreamMs += performance.now() - startedAt;
    c.attemptAt = 0;
  }
}

/**
 * A file's content from the key: a 2xx answer relayed as it comes (the client's pace pauses
 * the upstream), an error answer read whole (bounded) and scrubbed.
 */
function streamContent(d: FileReadDeps, c: ProxyCall, key: PooledKey, target: FilesTarget, id: string): Promise<void> {
  const path = `${target.path}/${id}/content`;
  const startedAt = (c.attemptAt = performance.now());
  const done = () => {
    c.upstreamMs += performance.now() - startedAt;
    c.attemptAt = 0;
  };
  return new Promise<void>((resolve) => {
    let status = 0;
    let headers: ResponseHeaders = {};
    let out: ResponseStream | null = null;
    const chunks: Buffer[] = [];
    let size = 0;
    let ctl: ResponseController | null = null;
    let ended = false;
    const end = () => {
      ended = true;
      done();
      resolve();
    };
    c.ex.onAbort(() => {
      if (!ended) ctl?.abort(new Error('the client went away'));
    });
    d.upstream.dispatch({
      origin: target.origin, path, method: 'GET', headers: target.headers, body: null,
      headersTimeout: d.settings.upstreamTimeoutMs, bodyTimeout: d.settings.streamIdleTimeoutMs,
    }, {
      onRequestStart(controller) {
        ctl = controller;
        if (c.ex.aborted) controller.abort(new Error('the client went away'));
      },
      onResponseStart(_c, s, h) {
        status = s;
        headers = h;
        if (s < 300) out = c.ex.openStream(s, h, dropped);
      },
      onResponseData(controller, chunk) {
        if (out) {
          // Each piece is garbage once written: collected young, as an upload's are (core/http/upload.ts).
          noteUploadCopy(chunk.length);
          const drained = out.write(chunk);
          if (drained) {
            controller.pause();
            void drained.then(() => controller.resume());
          }
          return;
        }
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) return controller.abort(new Error(`the answer exceeds ${MAX_ANSWER_BYTES} bytes`));
        chunks.push(chunk);
      },
      onResponseEnd() {
        if (out) out.end(null);
        else {
          const body = Buffer.concat(chunks);
          if (status < 400) c.ex.relay(status, headers, dropped, body);
          else {
            const text = body.toString('utf8');
            const clean = scrubText(text, key, target.headers);
            c.ex.relay(status, scrubHeaders(headers, key, target.headers), dropped, clean === text ? body : Buffer.from(clean));
          }
        }
        end();
      },
      onResponseError(_c, err) {
        if (out) out.abort();
        else if (!c.ex.aborted) {
          d.log.warn('file_upstream_failed', { request: c.id, owner: c.row.ownerId, key: key.id, cause: scrub(err.message, key, 300, target.headers) });
          refuse(c, upstreamFailure(c, err));
        }
        end();
      },
    });
  });
}
