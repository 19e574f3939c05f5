import type { UpstreamClient } from './client';
import type { ResponseHeaders, UpstreamRequest } from './types';

export interface WholeResponse {
  status: number;
  headers: ResponseHeaders;
  body: Buffer;
}

/** A request whose response is wanted whole (cold paths: token exchanges); rejects on any failure. */
export function requestWhole(client: UpstreamClient, req: UpstreamRequest, maxBytes = 1024 * 1024): Promise<WholeResponse> {
  return new Promise((resolve, reject) => {
    let status = 0;
    let headers: ResponseHeaders = {};
    const chunks: Buffer[] = [];
    let size = 0;
    client.dispatch(req, {
      onRequestStart() {},
      onResponseStart(_c, s, h) {
        status = s;
        headers = h;
      },
      onResponseData(c, chunk) {
        size += chunk.length;
        if (size > maxBytes) return c.abort(new Error(`the response exceeds ${maxBytes} bytes`));
        chunks.push(chunk);
      },
      onResponseEnd() {
        resolve({ status, headers, body: Buffer.concat(chunks) });
      },
      onResponseError(_c, err) {
        reject(err);
      },
    });
  });
}
