import { createHash, timingSafeEqual } from 'node:crypto';

/** Who may read /metrics: METRICS, METRICS_TOKEN and whether the gateway listens on loopback only. */
export interface MetricsAccessRule {
  metrics: 'on' | 'open' | 'off';
  token?: string;
  /** HOST is a loopback address: only this machine can reach the port. */
  loopback: boolean;
}

export type MetricsAccess =
  | { ok: true }
  | { ok: false; status: 401 | 403 | 404; message: string; code: string; headers?: Record<string, string> };

/** 127.0.0.0/8, ::1 and localhost. */
export const isLoopbackHost = (host: string) => host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);

/** Digests of equal length, so the comparison takes the same time whatever was sent. */
const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * With METRICS_TOKEN set, /metrics asks for it as a bearer token on any listener; without it,
 * /metrics is open on a loopback listener (or anywhere with METRICS=open) and refused on any
 * other, so a gateway serving a network never shows its figures to whoever asks.
 */
export function metricsAccess(rule: MetricsAccessRule, authorization: string | undefined): MetricsAccess {
  if (rule.metrics === 'off') return { ok: false, status: 404, message: 'Metrics are off (METRICS=off)', code: 'not_found' };
  if (rule.token !== undefined) {
    const sent = authorization?.startsWith('Bearer ') ? authorization.slice(7).trim() : '';
    if (sent && timingSafeEqual(digest(sent), digest(rule.token))) return { ok: true };
    return { ok: false, status: 401, message: 'GET /metrics needs the METRICS_TOKEN as a bearer token', code: 'unauthorized', headers: { 'www-authenticate': 'Bearer realm="metrics"' } };
  }
  if (rule.metrics === 'open' || rule.loopback) return { ok: true };
  return { ok: false, status: 403, message: 'GET /metrics is served on a non-loopback listener only with METRICS_TOKEN set (or METRICS=open)', code: 'forbidden' };
}
