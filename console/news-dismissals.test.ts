import { describe, expect, it } from 'vitest';
import { dismissForToday, dismissedToday, localDay, undismiss } from './src/tabs/news-dismissals';

/** A Storage over a Map: the same interface the browser's localStorage has. */
function memoryStorage(): Storage {
  const m = new Map<string, string>();
  return {
    get length() { return m.size; },
    key: (i) => [...m.keys()][i] ?? null,
    getItem: (k) => m.get(k) ?? null,
    setItem: (k, v) => { m.set(k, String(v)); },
    removeItem: (k) => { m.delete(k); },
    clear: () => m.clear(),
  };
}

describe('news dismissed for today', () => {
  const now = new Date();
  const tomorrow = new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1, 0, 0, 1);

  it('hides an entry for its account until the next local day, and prunes older keys', () => {
    const s = memoryStorage();
    dismissForToday(s, 7, 42, now);
    dismissForToday(s, 8, 43, now);
    s.setItem('switchyard.language', 'zh-CN');
    expect([...dismissedToday(s, 7, now)]).toEqual([42]);
    expect([...dismissedToday(s, 8, now)]).toEqual([43]);
    expect(localDay(tomorrow)).not.toBe(localDay(now));
    expect([...dismissedToday(s, 7, tomorrow)]).toEqual([]);
    // Every dismissal of an earlier day is gone; what is not ours stays.
    expect(s.length).toBe(1);
    expect(s.getItem('switchyard.language')).toBe('zh-CN');
  });

  it('shows an entry again on request', () => {
    const s = memoryStorage();
    dismissForToday(s, 7, 42, now);
    undismiss(s, 7, 42);
    expect(dismissedToday(s, 7, now).size).toBe(0);
  });
});
