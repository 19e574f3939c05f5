/**
 * The Lua of the shared admission store (store.ts), following admission/store.ts's rules literally.
 * Every key of one call carries the same tenant hash tag, so each script runs on one Redis
 * Cluster slot. Numbers travel as strings formatted with 17 significant digits: a Lua number
 * returned as such would be truncated to an integer by Redis.
 *
 * Hashes: credit `base settled sal reserved loadedAt valid gen epoch alerted u:<instance>…`,
 * spend the same without epoch (alerted holds the period); `sal` is `settled` when the base was
 * read, so value = base ∓ (settled − sal). `u:<instance>` is what that instance settled on the
 * counter and has not yet seen written to the database: a load by another instance subtracts
 * (credit) or adds (spend) it, since the loader only knows its own instance's unwritten usage.
 * Reservations: hash `res` (id → "amount\nkey\nkey…", a lease's "amount L\n…" or, once
 * trimmed, "amount T\n…"; `X` once expired) and sorted set `rx` (id → when to expire it; for an
 * `X`, when to forget it).
 */

export const COMMON = `
-- Globals looked up once per script call, not once per use.
local call, tonumber, tostring, unpack = redis.call, tonumber, tostring, unpack
local format, match, concat = string.format, string.match, table.concat
local max, ceil, abs = math.max, math.ceil, math.abs
local EPS = 1e-9
local EPS_MS = 1e-6
local DAY_MS = 86400000
local SEP = '\\0'
local function fmt(x) return format('%.17g', x) end
local function num(x) return tonumber(x) or 0 end
local function unreserve(rec)
  local amount = nil
  for part in string.gmatch(rec, '[^\\n]+') do
    if amount == nil then amount = tonumber(match(part, '^%S+'))
    elseif amount > 0 and call('EXISTS', part) == 1 then
      local left = tonumber(call('HINCRBYFLOAT', part, 'reserved', -amount))
      if abs(left) < EPS then call('HSET', part, 'reserved', '0') end
    end
  end
end
local function sweep(res, rx, now)
  local ids = call('ZRANGEBYSCORE', rx, '-inf', now, 'LIMIT', 0, 64)
  local n = 0
  for _, id in ipairs(ids) do
    local rec = call('HGET', res, id)
    if rec and rec ~= 'X' then
      unreserve(rec)
      call('HSET', res, id, 'X')
      call('ZADD', rx, now + 3600000, id)
      n = n + 1
    else
      call('HDEL', res, id)
      call('ZREM', rx, id)
    end
  end
  return n
end
`;

/**
 * Sets a money counter's base read from the database.
 * KEYS: counter. ARGV: gen seen before the read, settled seen before the read (becomes sal),
 *       value read, sign (-1 credit: others' unwritten usage lowers it; +1 spend), loadedAt,
 *       epoch, only-if-invalid ('1' for a first load, so concurrent instances agree on one base),
 *       self instance, live instance…
 * Answers 1 when set, 0 when an invalidation came in between (read again), 2 when someone else
 * loaded it meanwhile.
 */
export const LOAD = `
local v = redis.call('HMGET', KEYS[1], 'gen', 'valid')
if (v[1] or '0') ~= ARGV[1] then return 0 end
if ARGV[7] == '1' and v[2] == '1' then return 2 end
local others = 0
for i = 9, #ARGV do
  if ARGV[i] ~= ARGV[8] then others = others + (tonumber(redis.call('HGET', KEYS[1], 'u:' .. ARGV[i])) or 0) end
end
local base = tonumber(ARGV[3]) + tonumber(ARGV[4]) * others
redis.call('HSET', KEYS[1], 'base', string.format('%.17g', base), 'sal', ARGV[2], 'loadedAt', ARGV[5], 'valid', '1', 'epoch', ARGV[6])
redis.call('PEXPIRE', KEYS[1], 86400000)
return 1
`;

/** KEYS: credit counter. The next admission reloads its base; reservations stay. */
export const INVALIDATE = `
redis.call('HINCRBY', KEYS[1], 'gen', 1)
redis.call('HSET', KEYS[1], 'valid', '0')
redis.call('PEXPIRE', KEYS[1], 86400000)
return 1
`;

/** KEYS: res, rx. ARGV: now. Expires what is due in one tenant. */
export const SWEEP = COMMON + `
return sweep(KEYS[1], KEYS[2], tonumber(ARGV[1]))
`;

/**
 * Usage written to the database: this instance stops counting it as unwritten.
 * KEYS: counter. ARGV: self, amount (absolute when ARGV[3] is '='). Never below zero.
 */
export const UNWRITTEN = `
local f = 'u:' .. ARGV[1]
local left
if ARGV[3] == '=' then left = tonumber(ARGV[2]) else left = tonumber(redis.call('HINCRBYFLOAT', KEYS[1], f, -tonumber(ARGV[2]))) end
if left < 1e-9 then redis.call('HDEL', KEYS[1], f) else redis.call('HSET', KEYS[1], f, string.format('%.17g', left)) end
return 1
`;
