/**
 * "Dismiss for today": a news entry hidden on this browser until the next local day. One
 * localStorage key per account and entry, holding the day it was dismissed on; keys of earlier
 * days are pruned whenever the list is read, so the store never grows past today's dismissals.
 */
const PREFIX = 'switchyard.news.dismissed.';

/** The local calendar day, `2026-11-28`: a dismissal lasts until the reader's own midnight. */
export function localDay(now = new Date()): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
}

const keyOf = (accountId: number, newsId: number) => `${PREFIX}${accountId}.${newsId}`;

/** The entries `accountId` dismissed today; every key of an earlier day (any account) is removed. */
export function dismissedToday(store: Storage, accountId: number, now = new Date()): Set<number> {
  const today = localDay(now);
  const mine = `${PREFIX}${accountId}.`;
  const out = new Set<number>();
  const keys: string[] = [];
  for (let i = 0; i < store.length; i++) {
    const k = store.key(i);
    if (k?.startsWith(PREFIX)) keys.push(k);
  }
  for (const k of keys) {
    if (store.getItem(k) !== today) store.removeItem(k);
    else if (k.startsWith(mine)) out.add(Number(k.slice(mine.length)));
  }
  return out;
}

export function dismissForToday(store: Storage, accountId: number, newsId: number, now = new Date()): void {
  store.setItem(keyOf(accountId, newsId), localDay(now));
}

export function undismiss(store: Storage, accountId: number, newsId: number): void {
  store.removeItem(keyOf(accountId, newsId));
}
