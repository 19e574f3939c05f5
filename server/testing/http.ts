export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** A small fetch wrapper for tests: real HTTP over loopback, JSON in and out. */
export class HttpClient {
  constructor(readonly baseUrl: string, readonly key: string | null) {}

  async request<T = any>(method: string, path: string, opts: { body?: unknown; raw?: string | Uint8Array; headers?: Record<string, string> } = {}): Promise<HttpResult<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    if (this.key) headers.authorization ??= `Bearer ${this.key}`;
    let body: string | Uint8Array | undefined;
    if (opts.raw !== undefined) body = opts.raw;
    else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(this.baseUrl + path, { method, headers, body: body as BodyInit | undefined });
    const text = await res.text();
    let parsed: any = text;
    try { parsed = text ? JSON.parse(text) : undefined; } catch { /* leave as text */ }
    return { status: res.status, headers: res.headers, body: parsed, text };
  }

  get<T = any>(path: string, headers?: Record<string, string>) { return this.request<T>('GET', path, { headers }); }
  post<T = any>(path: string, body?: unknown) { return this.request<T>('POST', path, { body }); }
  put<T = any>(path: string, body?: unknown) { return this.request<T>('PUT', path, { body }); }
  delete<T = any>(path: string, body?: unknown) { return this.request<T>('DELETE', path, { body }); }

  /** The answer's JSON, which must be a success: anything else throws, naming the call and what it answered. */
  async ok<T = any>(method: string, path: string, body?: unknown): Promise<T> {
    const r = await this.request<T>(method, path, { body });
    if (r.status >= 300) throw new Error(`${method} ${path} answered ${r.status}: ${r.text}`);
    return r.body;
  }
}

/** Asserts the error envelope (`{"error":{"message","type","code"}}`) and returns it. */
export function expectEnvelope(r: HttpResult, status: number): { message: string; type: string; code: string | number } {
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text}`);
  const e = r.body?.error;
  if (!e || typeof e.message !== 'string' || typeof e.type !== 'string' || (typeof e.code !== 'string' && typeof e.code !== 'number')) {
    throw new Error(`not an error envelope: ${r.text}`);
  }
  if (Object.keys(r.body).length !== 1) throw new Error(`extra fields beside "error": ${r.text}`);
  return e;
}
