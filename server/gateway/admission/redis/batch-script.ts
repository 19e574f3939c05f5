import { COMMON } from './scripts';
import { ADMIT_ONE, SETTLE_ONE, TRIM_ONE } from './operations';

/**
 * The state of the counters one batch touches, read once (HMGET per money counter, MGET per
 * group of rate counters, one HMGET for the reservations named) and written once at the end
 * (one HSET per money counter, one SET per rate counter, one HSET/HDEL/ZADD/ZREM for the
 * reservations): a hot account's requests of one event-loop turn cost about as many Redis
 * calls as one request. Operations still apply one after another, each seeing the ones before,
 * exactly as separate scripts would; numbers stay Lua doubles in between (what %.17g stores
 * reads back unchanged).
 */
const STATE = `
local SELF = 'u:' .. ARGV[4]
local M, MK = {}, {}
local function money(key, credit)
  local m = M[key]
  if m then return m end
  local v = call('HMGET', key, 'base', 'settled', 'sal', 'reserved', 'loadedAt', 'valid', 'gen', 'epoch', 'alerted', SELF)
  m = {
    base = v[1], settled = num(v[2]), settledText = v[2] or '0', sal = num(v[3]), reserved = num(v[4]),
    loadedAt = num(v[5]), valid = v[6], gen = v[7] or '0', epoch = v[8], alerted = v[9], mine = num(v[10]),
    exists = (v[1] or v[2] or v[3] or v[4] or v[5] or v[6] or v[7] or v[8] or v[9] or v[10]) and true or nil,
    credit = credit,
  }
  M[key] = m
  MK[#MK + 1] = key
  return m
end
local function exists(m, key)
  if m.exists == nil then m.exists = call('EXISTS', key) == 1 end
  return m.exists
end
local R, RK, RD, RNOW = {}, {}, {}, {}
local function rates(first, last)
  for i = first, last do
    if R[KEYS[i]] == nil then
      local got = call('MGET', unpack(KEYS, first, last))
      for j = first, last do
        if R[KEYS[j]] == nil then
          local x = got[j - first + 1]
          R[KEYS[j]] = x and tonumber(x) or false
          RK[#RK + 1] = KEYS[j]
        end
      end
      return
    end
  end
end
local function rate_set(key, tat, now)
  R[key] = tat
  RD[key] = true
  if RNOW[key] == nil or now > RNOW[key] then RNOW[key] = now end
end
local SETTLE_OUT = {}
local RES, RESK, RESX = {}, {}, {}
local function res_set(id, rec, expiresAt)
  if RESX[id] == nil then RESK[#RESK + 1] = id end
  RES[id] = rec
  RESX[id] = expiresAt or false
end
-- A record rewritten in place: its expiry stays as it is (or as set earlier in this batch).
local function res_keep(id, rec)
  if RESX[id] == nil then
    RESK[#RESK + 1] = id
    RESX[id] = false
  end
  RES[id] = rec
end
`;

/**
 * A claim set ("plan": an account profile's credit, spend and rate claims, shared by its
 * requests), sent once per batch however many of its requests the batch holds: ARGV gives the
 * KEYS index of its first key and its text, fields separated by spaces ('-' = none):
 *   hasCredit nSpend nRate floor lowAt, per spend claim: cap alertAt period end,
 *   per rate claim: windowMs limit kind ('r' requests, 't' tokens).
 * Its keys, in KEYS from that index: [credit], spend…, rate….
 */
const PLANS = `
local PLANS = {}
local function plan_of(no)
  local p = PLANS[no]
  if p then return p end
  local at = 4 + 2 * no
  local f = {}
  for x in string.gmatch(ARGV[at + 1], '%S+') do f[#f + 1] = x end
  p = { k = tonumber(ARGV[at]), credit = f[1] == '1', nSpend = tonumber(f[2]), nRate = tonumber(f[3]), floor = tonumber(f[4]), lowAt = tonumber(f[5]), spend = {}, rate = {} }
  local i = 6
  for s = 1, p.nSpend do
    p.spend[s] = { cap = tonumber(f[i]), alertAt = tonumber(f[i + 1]), period = f[i + 2], ends = tonumber(f[i + 3]) }
    i = i + 4
  end
  for r = 1, p.nRate do
    local w, limit = tonumber(f[i]), tonumber(f[i + 1])
    p.rate[r] = { w = w, limit = limit, T = w / limit, tokens = f[i + 2] == 't' }
    i = i + 3
  end
  p.nMoney = p.nSpend + (p.credit and 1 or 0)
  PLANS[no] = p
  return p
end
`;

/**
 * The admissions, settles and releases of one tenant sent in one event-loop turn, in the order
 * they were made (settles first free what they held for the admissions after them): one
 * EVALSHA per tenant and turn instead of one per call.
 * KEYS: res, rx, then each plan's keys (once per batch).
 * ARGV: count, sweep time ('' = no sweep in this batch), refreshMs, self (this instance), number
 *       of plans, per plan its first key's index and its text (PLANS), the operations'
 *       reservation IDs in order, then each operation as 9 arguments: 'a' and ADMIT_ONE's,
 *       's'/'r'/'l'/'q' and SETTLE_ONE's (a release ignores some), or 't' and TRIM_ONE's.
 * Answers one string per operation (fields separated by NUL), then the counters' values after
 * the batch for the store's views: money key, spendable or spent, reserved …, then '|', then
 * rate key, tat ('' = none) ….
 * The tenant's due reservations are swept first when asked (each instance asks about once a
 * second per tenant: admission/store.ts's expiry is within a second, as in one process); the reservation
 * hash and set get a day's TTL when created and at each sweep while admitting.
 */
export const BATCH = COMMON + STATE + PLANS + ADMIT_ONE + SETTLE_ONE + TRIM_ONE + `
local out = {}
local refresh = tonumber(ARGV[3])
local n = tonumber(ARGV[1])
local ids = 5 + 2 * tonumber(ARGV[5])
if ARGV[2] ~= '' then sweep(KEYS[1], KEYS[2], tonumber(ARGV[2])) end
-- A reservation hash holding none of these IDs may be new: its TTL is set below.
local fresh = true
do
  local got = call('HMGET', KEYS[1], unpack(ARGV, ids + 1, ids + n))
  for i = 1, n do
    RES[ARGV[ids + i]] = got[i]
    if got[i] then fresh = false end
  end
end
local a = ids + n + 1
local admitted = false
for op = 1, n do
  local kind = ARGV[a]
  if kind == 'a' then
    local ok
    out[op], ok = admit_one(ARGV[ids + op], a + 1, refresh)
    if ok then admitted = true end
  elseif kind == 't' then
    out[op] = trim_one(ARGV[ids + op], a + 1)
  else
    out[op] = settle_one(ARGV[ids + op], kind, a + 1)
  end
  a = a + 9
end

local views = {}
for _, key in ipairs(MK) do
  local m = M[key]
  local w = {}
  local reserved = nil
  if m.dReserved then
    reserved = fmt(m.reserved)
    w[#w + 1] = 'reserved'; w[#w + 1] = reserved
  end
  if m.dSettled then
    w[#w + 1] = 'settled'; w[#w + 1] = fmt(m.settled)
    w[#w + 1] = SELF; w[#w + 1] = fmt(m.mine)
  end
  if m.dAlerted then w[#w + 1] = 'alerted'; w[#w + 1] = m.alerted end
  if #w > 0 then call('HSET', key, unpack(w)) end
  if m.ttlDay then call('PEXPIRE', key, DAY_MS) elseif m.ttlAt then call('PEXPIREAT', key, format('%.0f', m.ttlAt)) end
  -- A counter still to be loaded has no value to show yet (unless this batch changed it).
  if m.valid == '1' or m.dReserved or m.dSettled then
    local value
    if m.credit then value = num(m.base) - (m.settled - m.sal) else value = num(m.base) + (m.settled - m.sal) end
    views[#views + 1] = key
    views[#views + 1] = fmt(value)
    views[#views + 1] = reserved or fmt(m.reserved)
  end
end
views[#views + 1] = '|'
for _, key in ipairs(RK) do
  local tat = R[key]
  local text = ''
  if tat then
    text = fmt(tat)
    if RD[key] then
      local now = RNOW[key]
      local ttl = 1000
      if tat > now then ttl = ceil(tat - now) + 1000 end
      call('SET', key, text, 'PX', tostring(ttl))
    end
  end
  views[#views + 1] = key
  views[#views + 1] = text
end
if #RESK > 0 then
  local hset, hdel, zadd, zrem = {}, {}, {}, {}
  for _, id in ipairs(RESK) do
    local rec = RES[id]
    if rec then
      hset[#hset + 1] = id; hset[#hset + 1] = rec
      if RESX[id] then zadd[#zadd + 1] = RESX[id]; zadd[#zadd + 1] = id end
    else
      hdel[#hdel + 1] = id
      zrem[#zrem + 1] = id
    end
  end
  if #hset > 0 then call('HSET', KEYS[1], unpack(hset)) end
  if #hdel > 0 then call('HDEL', KEYS[1], unpack(hdel)) end
  if #zadd > 0 then call('ZADD', KEYS[2], unpack(zadd)) end
  if #zrem > 0 then call('ZREM', KEYS[2], unpack(zrem)) end
end
if admitted and (fresh or ARGV[2] ~= '') then
  call('PEXPIRE', KEYS[1], DAY_MS)
  call('PEXPIRE', KEYS[2], DAY_MS)
end
out[n + 1] = concat(views, SEP)
return out
`;
