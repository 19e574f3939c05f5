import type { RequestPage } from '../../../contract/dashboard/schemas';

type RequestUsage = RequestPage['data'][number];

export interface HourBucket { hour: number; requests: number; abnormal: number; tokens: number }

/** Requests per UTC hour (seconds since the epoch), oldest first, with the hours between them kept empty. */
export function hourBuckets(requests: RequestUsage[]): HourBucket[] {
  if (requests.length === 0) return [];
  const byHour = new Map<number, HourBucket>();
  for (const r of requests) {
    const hour = Math.floor(Date.parse(r.created_at) / 3_600_000) * 3600;
    const b = byHour.get(hour) ?? { hour, requests: 0, abnormal: 0, tokens: 0 };
    b.requests++;
    if (r.status !== 'ok') b.abnormal++;
    b.tokens += r.prompt + r.completion;
    byHour.set(hour, b);
  }
  const hours = [...byHour.keys()].sort((a, b) => a - b);
  const out: HourBucket[] = [];
  for (let h = hours[0]; h <= hours[hours.length - 1]; h += 3600) out.push(byHour.get(h) ?? { hour: h, requests: 0, abnormal: 0, tokens: 0 });
  return out.slice(-72);
}
