/** A realtime upgrade request as the stages see a call, and the account key browsers send as a subprotocol. */
import type { ProxyCall } from '../call';
import type { ClientExchange, HeaderValues, JsonBody, SocketUpgrade } from '../transport';

const KEY_PROTOCOL = 'openai-insecure-api-key.';

/** The upgrade request as the stages see a call: its refusals answer the upgrade with an HTTP error. */
export class UpgradeExchange implements ClientExchange {
  stamp: ProxyCall | null = null;
  finished = false;
  constructor(readonly u: SocketUpgrade, readonly headers: Readonly<Record<string, string>>) {}
  get ip() { return this.u.ip; }
  get aborted() { return this.u.aborted; }
  onAbort(l: () => void) { this.u.onAbort(l); }
  readJsonObject(): Promise<JsonBody> { return Promise.resolve({ ok: true, raw: Buffer.alloc(0), value: {} }); }
  send(status: number, headers: Record<string, string>, body: string | Uint8Array): void {
    if (this.finished) return;
    this.finished = true;
    const h: Record<string, string> = { ...headers };
    this.stamp?.stampHead(status, { writeHeader: (k, v) => (h[k] = v) });
    this.u.refuse(status, h, typeof body === 'string' ? body : Buffer.from(body).toString('utf8'));
  }
  relay(status: number, headers: HeaderValues, _omit: unknown, body: Uint8Array): void {
    this.send(status, Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, String(v)])), body);
  }
  openStream(): never { throw new Error('a WebSocket upgrade has no streamed answer'); }
}

/** The key from the subprotocol list, and the protocols offered without it. */
export function protocols(header: string | undefined): { key?: string; offered: string[] } {
  const offered: string[] = [];
  let key: string | undefined;
  for (const p of (header ?? '').split(',')) {
    const t = p.trim();
    if (t.startsWith(KEY_PROTOCOL)) key = t.slice(KEY_PROTOCOL.length);
    else if (t) offered.push(t);
  }
  return { key, offered };
}
