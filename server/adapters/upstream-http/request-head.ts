import { UpstreamHttpError, type UpstreamRequest } from './types';

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Anything but tab, visible ASCII and obs-text: a CR or LF would let a value inject headers. */
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const BAD_PATH = /[^\x21-\x7e]/;
/**
 * Headers the client writes itself; a caller's copy would contradict them. It decodes no
 * content coding, so it asks for none: the proxy reads usage from the bytes it relays.
 */
const OWN = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'expect', 'accept-encoding']);

const invalid = (message: string) => new UpstreamHttpError('UPSTREAM_INVALID_REQUEST', message);

/** Requests of up to this many body bytes go out as one buffer: one copy, one write call. */
const ONE_BUFFER_MAX = 16 * 1024;

/**
 * The bytes of a request: head (request line, Host, Content-Length, the caller's headers)
 * and body. Throws UPSTREAM_INVALID_REQUEST for a path or header that would break framing.
 */
export function requestBytes(r: UpstreamRequest, hostHeader: string): Buffer[] {
  if (BAD_PATH.test(r.path) || r.path[0] !== '/') throw invalid(`invalid request path ${JSON.stringify(r.path.slice(0, 80))}`);
  const bodyLength = r.body ? r.body.length : 0;
  let head = `${r.method} ${r.path} HTTP/1.1\r\nhost: ${hostHeader}\r\naccept-encoding: identity\r\n`;
  if (r.bodyStream) head += 'transfer-encoding: chunked\r\n';
  else if (r.body || r.method === 'POST') head += `content-length: ${bodyLength}\r\n`;
  if (r.contentType !== undefined) {
    if (BAD_VALUE.test(r.contentType)) throw invalid('invalid characters in the content type');
    head += `content-type: ${r.contentType}\r\n`;
  }
  for (const name in r.headers) {
    const value = r.headers[name];
    if (!TOKEN.test(name)) throw invalid(`invalid header name ${JSON.stringify(name.slice(0, 40))}`);
    if (BAD_VALUE.test(value)) throw invalid(`invalid characters in the value of header ${name}`);
    const lower = name.toLowerCase();
    if (OWN.has(lower) || (lower === 'content-type' && r.contentType !== undefined)) continue;
    head += `${name}: ${value}\r\n`;
  }
  head += '\r\n';
  const headLength = head.length;
  if (r.bodyStream || !r.body || bodyLength === 0) return [Buffer.from(head, 'latin1')];
  if (bodyLength > ONE_BUFFER_MAX) return [Buffer.from(head, 'latin1'), r.body];
  const out = Buffer.allocUnsafe(headLength + bodyLength);
  out.write(head, 0, 'latin1');
  r.body.copy(out, headLength);
  return [out];
}
