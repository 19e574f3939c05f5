import type { Redis } from 'ioredis';
import type { RedisLink } from './link';

/**
 * One timed health mark as instances exchange it: a provider key out of rotation for a while
 * (`sleeping` after a 429; key health adds its own states) or an Owner's Level switched over.
 */
export interface SharedMark {
  scope: 'key' | 'level';
  ownerId: number;
  /** The provider key's ID, or the Level. */
  id: number;
  /** A key mark that concerns one model of the key only. */
  model?: string;
  /**
   * What the mark says. Receivers ignore states they do not know, so instances of two versions
   * can share one Redis during a rolling deploy.
   */
  state: string;
  /** How long from now the mark holds (ms); 0 clears it. */
  ms: number;
}

/** The pub/sub channel (REDIS_PREFIX is put in front by the link). */
export const HEALTH_CHANNEL = 'key-health';

const MAX_MS = 7 * 86_400_000;

// Times come from Redis's own clock (TIME), so instances whose clocks disagree still agree on
// when a mark ends; what travels between instances is always "for N ms from now".
const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/** Drops ended fields of the health hash and lets the hash expire with its last mark. */
const PRUNE = (key: string) => `
local all = redis.call('HGETALL', ${key})
local latest = 0
for i = 1, #all, 2 do
  local u = tonumber(string.match(all[i + 1], '|(%d+)$'))
  if (not u) or u <= now then redis.call('HDEL', ${key}, all[i]) elseif u > latest then latest = u end
end
if latest > now then redis.call('PEXPIRE', ${key}, latest - now) end
`;

/** KEYS[1] health hash; ARGV field, state, ms. The same state held longer stays. */
const MARK = `${NOW}
local field, state, ms = ARGV[1], ARGV[2], tonumber(ARGV[3])
if ms <= 0 then
  redis.call('HDEL', KEYS[1], field)
else
  local untilAt = now + ms
  local old = redis.call('HGET', KEYS[1], field)
  if old then
    local s, u = string.match(old, '^(.*)|(%d+)$')
    if s == state and tonumber(u) > untilAt then untilAt = tonumber(u) end
  end
  redis.call('HSET', KEYS[1], field, state .. '|' .. untilAt)
end
${PRUNE('KEYS[1]')}
return 1
`;

/**
 * KEYS[1] abnormal results of one Level (sorted set, score = time), KEYS[2] health hash;
 * ARGV member, threshold, window ms, field. Adds the result; the Level is switched over when
 * MORE than threshold results fall within the window, or when it is switched already (each
 * abnormal result keeps its window from being clean). Answers the switch's duration or 0.
 */
const ABNORMAL = `${NOW}
local threshold, window = tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(threshold + 3))
redis.call('PEXPIRE', KEYS[1], window)
local switched = redis.call('ZCARD', KEYS[1]) > threshold
if not switched then
  local old = redis.call('HGET', KEYS[2], ARGV[4])
  if old then
    local u = tonumber(string.match(old, '|(%d+)$'))
    switched = u ~= nil and u > now
  end
end
if not switched then return 0 end
redis.call('HSET', KEYS[2], ARGV[4], 'switched|' .. (now + window))
${PRUNE('KEYS[2]')}
return window
`;

/** KEYS[1] health hash: the marks that still hold, as field, state, remaining ms. */
const READ = `${NOW}
local all = redis.call('HGETALL', KEYS[1])
local out = {}
for i = 1, #all, 2 do
  local s, u = string.match(all[i + 1], '^(.*)|(%d+)$')
  if u and tonumber(u) > now then
    out[#out + 1] = all[i]
    out[#out + 1] = s
    out[#out + 1] = tostring(tonumber(u) - now)
  end
end
return out
`;

/** The scripts below, as defineCommand adds them to the client. */
interface HealthScripts {
  switchyardHealthMark(hash: string, field: string, state: string, ms: number): Promise<number>;
  switchyardHealthAbnormal(set: string, hash: string, member: string, threshold: number, windowMs: number, field: string): Promise<number>;
  switchyardHealthRead(hash: string): Promise<string[]>;
}

const fieldOf = (m: Pick<SharedMark, 'scope' | 'id' | 'model'>) => (m.scope === 'level' ? `l:${m.id}` : m.model ? `k:${m.id}:${m.model}` : `k:${m.id}`);

function markOf(ownerId: number, field: string, state: string, ms: number): SharedMark | null {
  const m = /^(k|l):(\d+)(?::(.+))?$/.exec(field);
  if (!m) return null;
  const mark: SharedMark = { scope: m[1] === 'l' ? 'level' : 'key', ownerId, id: Number(m[2]), state, ms };
  if (m[3] !== undefined) mark.model = m[3];
  return mark;
}

const count = (v: unknown, min: number) => Number.isSafeInteger(v) && (v as number) >= min;

/** A message from another process is checked before it touches anything. */
export function parseMessage(text: string): { from: string; mark: SharedMark } | null {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(text);
  } catch {
    return null;
  }
  if (!o || typeof o !== 'object' || typeof o.from !== 'string') return null;
  if (o.scope !== 'key' && o.scope !== 'level') return null;
  if (!count(o.owner, 1) || !count(o.id, o.scope === 'key' ? 1 : 0) || !count(o.ms, 0) || (o.ms as number) > MAX_MS) return null;
  if (typeof o.state !== 'string' || !/^[a-z][a-z-]{0,31}$/.test(o.state)) return null;
  if (o.model !== undefined && (typeof o.model !== 'string' || o.model.length === 0 || o.model.length > 200)) return null;
  const mark: SharedMark = { scope: o.scope, ownerId: o.owner as number, id: o.id as number, state: o.state, ms: o.ms as number };
  if (o.model !== undefined) mark.model = o.model as string;
  return { from: o.from, mark };
}

/**
 * Health marks in Redis: one hash per Owner (`{o:<ownerId>}:health`, field per key or Level,
 * value `state|until`), expiring with its last mark, so an instance that starts or reconnects
 * reads what holds now; one sorted set per Owner's Level counting abnormal results in the
 * switch-over window. Every key of an Owner carries the hash tag `{o:<ownerId>}`, so each
 * script touches one Redis Cluster slot. Changes are also published on HEALTH_CHANNEL, so the
 * other instances apply them at once rather than at their next read.
 */
export class RedisHealthMarks {
  private seq = 0;
  private readonly client: Redis & HealthScripts;

  constructor(private readonly link: RedisLink, readonly instance: string) {
    const c = (this.client = link.client as Redis & HealthScripts);
    // defineCommand runs EVALSHA and loads the script on NOSCRIPT (after a Redis restart too).
    c.defineCommand('switchyardHealthMark', { numberOfKeys: 1, lua: MARK });
    c.defineCommand('switchyardHealthAbnormal', { numberOfKeys: 2, lua: ABNORMAL });
    c.defineCommand('switchyardHealthRead', { numberOfKeys: 1, lua: READ });
  }

  private hash(ownerId: number): string {
    return `${this.link.prefix}{o:${ownerId}}:health`;
  }

  /** Writes the mark for later readers and tells the instances listening now. */
  async put(mark: SharedMark): Promise<void> {
    await this.client.switchyardHealthMark(this.hash(mark.ownerId), fieldOf(mark), mark.state, Math.max(0, Math.round(mark.ms)));
    this.publish(mark);
  }

  /**
   * Counts one abnormal result of an Owner's Level across instances. When the Level is (or
   * stays) switched over, the switch is written and published, and its duration returned;
   * otherwise 0.
   */
  async countAbnormal(ownerId: number, level: number, threshold: number, windowMs: number): Promise<number> {
    const set = `${this.link.prefix}{o:${ownerId}}:abnormal:${level}`;
    const member = `${this.instance}:${++this.seq}`;
    const ms = Number(await this.client.switchyardHealthAbnormal(set, this.hash(ownerId), member, threshold, windowMs, `l:${level}`));
    if (ms > 0) this.publish({ scope: 'level', ownerId, id: level, state: 'switched', ms });
    return ms;
  }

  /** The marks that hold now for these Owners. */
  async read(ownerIds: Iterable<number>): Promise<SharedMark[]> {
    const ids = [...new Set(ownerIds)];
    // Auto-pipelining sends these together: one round trip for all Owners.
    const replies = await Promise.all(ids.map((id) => this.client.switchyardHealthRead(this.hash(id))));
    const marks: SharedMark[] = [];
    replies.forEach((flat, i) => {
      for (let j = 0; j + 2 < flat.length; j += 3) {
        const m = markOf(ids[i], flat[j], flat[j + 1], Number(flat[j + 2]));
        if (m) marks.push(m);
      }
    });
    return marks;
  }

  /** Marks published by other instances (this one's own are left out). */
  listen(listener: (mark: SharedMark) => void): Promise<void> {
    return this.link.subscribe(HEALTH_CHANNEL, (text) => {
      const got = parseMessage(text);
      if (got && got.from !== this.instance) listener(got.mark);
    });
  }

  private publish(m: SharedMark): void {
    this.link.publish(HEALTH_CHANNEL, JSON.stringify({ from: this.instance, scope: m.scope, owner: m.ownerId, id: m.id, ...(m.model ? { model: m.model } : {}), state: m.state, ms: m.ms }));
  }
}
