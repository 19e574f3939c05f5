/**
 * Values computed within the last `ttlMs`, shared: a console polling its usage tab or a
 * billing job asking for the same bill many times at once costs one computation per key and
 * second, not one per request. An entry also ends as soon as `version` moves (the recorder's
 * committed batches: this instance's written usage is never missed); another instance's writes
 * show within `ttlMs`. Concurrent requests for a key being computed wait for that computation.
 * Failures are not kept.
 */
export class FreshCache<T> {
  private readonly entries = new Map<string, { at: number; version: number; value: Promise<T> }>();

  constructor(private readonly version: () => number, private readonly ttlMs = 1000, private readonly max = 128) {}

  get(key: string, compute: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const version = this.version();
    const hit = this.entries.get(key);
    if (hit && hit.version === version && now - hit.at < this.ttlMs) return hit.value;
    const value = compute();
    this.entries.delete(key);
    this.entries.set(key, { at: now, version, value });
    value.catch(() => { if (this.entries.get(key)?.value === value) this.entries.delete(key); });
    // Oldest first out: a Map iterates in insertion order.
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
    return value;
  }
}
