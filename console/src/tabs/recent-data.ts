import type { RequestPage } from '../../../contract/dashboard/schemas';

type RequestUsage = RequestPage['data'][number];

export interface HourBucket { hour: number; requests: number; abnormal: number; tokens: number }

/** The requests a record stands for: a provider batch's one record bills its lines, each a request. */
export const requestsOf = (r: RequestUsage) => (r.batch_id ? r.batch_lines ?? 0 : 1);

/** A record's size per request it stands for (a batch's: the mean of its lines), so one batch does not read as one huge call. */
export function perRequest(r: RequestUsage): { tokens: number; credit: number } {
  const n = Math.max(requestsOf(r), 1);
  return { tokens: (r.prompt + r.completion) / n, credit: r.credit_used / n };
}

/** Requests per UTC hour (seconds since the epoch), oldest first, with the hours between them kept empty. */
export function hourBuckets(requests: RequestUsage[]): HourBucket[] {
  if (requests.length === 0) return [];
  const byHour = new Map<number, HourBucket>();
  for (const r of requests) {
    const hour = Math.floor(Date.parse(r.created_at) / 3_600_000) * 3600;
    const b = byHour.get(hour) ?? { hour, requests: 0, abnormal: 0, tokens: 0 };
    b.requests += requestsOf(r);
    if (r.status !== 'ok') b.abnormal++;
    b.tokens += r.prompt + r.completion;
    byHour.set(hour, b);
  }
  const hours = [...byHour.keys()].sort((a, b) => a - b);
  const out: HourBucket[] = [];
  for (let h = hours[0]; h <= hours[hours.length - 1]; h += 3600) out.push(byHour.get(h) ?? { hour: h, requests: 0, abnormal: 0, tokens: 0 });
  return out.slice(-72);
}
