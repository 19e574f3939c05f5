/**
 * Stage 2 on the upload routes (routes.ts `body: 'multipart'`), in place of read body: the
 * form's fields up to the model (upload/form.ts), the file still on its way. Refuses 413
 * body_too_large (a declared length over MAX_UPLOAD_BYTES, answered without reading the body;
 * or more bytes than that arriving), 415 (not multipart/form-data), 400 invalid_multipart,
 * 400 invalid_model (see model-name) and 400 invalid_request for a `stream` that is not
 * `true` or `false`.
 */
import type { ProxyCall } from '../call';
import { CLIENT_LEFT, type Refusal, type Verdict } from '../errors';
import { BODY_REQUIRED, readBody } from './read-body';
import { modelNameProblem } from './model-name';
import { MULTIPART, NOT_MULTIPART, UploadForm } from '../upload/form';

const STREAM_NOT_BOOLEAN: Refusal = { status: 400, message: 'stream: must be true or false', code: 'invalid_request' };
const EMPTY = Buffer.alloc(0);

export async function readUpload(c: ProxyCall): Promise<Verdict> {
  const up = c.ex.upload;
  // No upload stream: the transport refused the body's framing (and answered it) or the route reads JSON.
  if (!up) return readBody(c, await c.ex.readJsonObject(BODY_REQUIRED));
  if (up.refusal) return up.refusal;
  const type = c.ex.headers['content-type'];
  if (type === undefined || !MULTIPART.test(type)) return NOT_MULTIPART;
  const form = new UploadForm(up, type);
  c.upload = form;
  const r = await form.ready;
  if (r) return r.status === 499 ? CLIENT_LEFT : r;
  const f = form.fields;
  const problem = modelNameProblem(f.model);
  if (problem) return { status: 400, message: problem, code: 'invalid_model' };
  const stream = f.stream;
  if (stream !== undefined && stream !== 'true' && stream !== 'false') return STREAM_NOT_BOOLEAN;
  c.form = f;
  c.doc = f;
  c.raw = EMPTY;
  c.requestedModel = f.model;
  c.stream = c.route.streams && stream === 'true';
  // A chunked upload's size is known only at its end: its reservation assumes the limit.
  c.uploadBytes = up.declaredLength ?? up.limit;
  return null;
}
