/**
 * One admission and one settle or release, as Lua functions BATCH (batch-script.ts) calls
 * for each operation of a batch; the counters they read and write are BATCH's shared state.
 */

/**
 * One admission (see admission/store.ts "admit"), inside BATCH. `id`: its reservation ID; `a`: where its
 * arguments start: plan, now, expiresAt, amount, touch ('1': refresh the credit key's TTL; the
 * instance does it about once a second per counter), tokens, units, lag. A request takes one
 * unit of each request limit and lag 0; a lease (leases.ts) takes `units` requests at
 * once, counted as arriving `lag` ms from now (when it ends: the latest its requests can come),
 * and its record is flagged ' L' after the amount.
 * Answers:
 *   m key settled gen …  when money counters must be loaded first;
 *   c available / s index committed / r index used retryAt resetAt  refusals;
 *   e message  when the reservation ID is already open;
 *   ok staleKey…  admitted (stale keys: bases to re-read in the background).
 */
export const ADMIT_ONE = `
local function admit_one(id, a, refresh)
  local p = plan_of(tonumber(ARGV[a]))
  local now = tonumber(ARGV[a + 1])
  local expiresAt = ARGV[a + 2]
  local amountText = ARGV[a + 3]
  local amount = tonumber(amountText)
  local touch = ARGV[a + 4] == '1'
  local tokens = tonumber(ARGV[a + 5])
  local units = tonumber(ARGV[a + 6])
  local lag = tonumber(ARGV[a + 7])
  local at = now + lag
  local k = p.k
  local nMoney = p.nMoney
  local rk = k + nMoney

  local ms = {}
  local missing = nil
  local stale = nil
  for i = 1, nMoney do
    local key = KEYS[k + i - 1]
    local m = money(key, p.credit and i == 1)
    if m.valid ~= '1' then
      if not missing then missing = {'m'} end
      missing[#missing + 1] = key
      missing[#missing + 1] = m.dSettled and fmt(m.settled) or m.settledText
      missing[#missing + 1] = m.gen
    elseif now - m.loadedAt > refresh and not m.staleSaid then
      m.staleSaid = true
      if not stale then stale = {'ok'} end
      stale[#stale + 1] = key
    end
    ms[i] = m
  end
  if missing then return concat(missing, SEP), false end

  if p.credit then
    local m = ms[1]
    local available = num(m.base) - (m.settled - m.sal) - m.reserved
    if available - amount < p.floor - EPS then return 'c' .. SEP .. fmt(available), false end
  end
  local si = p.credit and 1 or 0
  for i = 1, p.nSpend do
    local cap = p.spend[i].cap
    if cap then
      local m = ms[si + i]
      local committed = num(m.base) + (m.settled - m.sal) + m.reserved
      if committed + amount > cap + EPS then return 's' .. SEP .. i .. SEP .. fmt(committed), false end
    end
  end
  local nextTat = {}
  if p.nRate > 0 then
    rates(rk, rk + p.nRate - 1)
    for i = 1, p.nRate do
      local c = p.rate[i]
      local w, limit, T = c.w, c.limit, c.T
      local cost = units
      if c.tokens then cost = math.min(tokens, limit) end
      local tat = R[KEYS[rk + i - 1]] or 0
      local nxt = max(tat, at) + cost * T
      if nxt - now > w + EPS_MS then
        local used = 0
        if tat > now then used = math.min(limit, ceil((tat - now) / T - 1e-9)) end
        return concat({'r', i, fmt(used), fmt(max(now, max(tat, now) + cost * T - w)), fmt(max(tat, now))}, SEP), false
      end
      nextTat[i] = nxt
    end
  end
  if RES[id] then return 'e' .. SEP .. 'reservation ' .. id .. ' is already open', false end

  -- The record names the money keys, so a sweep by any instance can give the amount back.
  local rec = {lag > 0 and amountText .. ' L' or amountText}
  for i = 1, nMoney do rec[i + 1] = KEYS[k + i - 1] end
  res_set(id, concat(rec, '\\n'), expiresAt)
  if amount > 0 then
    for i = 1, nMoney do
      local m = ms[i]
      m.reserved = m.reserved + amount
      m.dReserved = true
    end
  end
  if p.credit and touch then ms[1].ttlDay = true end
  for i = 1, p.nRate do rate_set(KEYS[rk + i - 1], nextTat[i], now) end
  if stale then return concat(stale, SEP), true end
  return 'ok', true
end
`;

/**
 * Settle (mode 's') or release ('r') of one reservation, inside BATCH. `a`: where its
 * arguments start: plan, now, cost, tokens, tokens reserved at admission, touch ('1': refresh
 * the money keys' TTLs), part.
 * Modes 'l' (settle) and 'q' (release) close one request admitted under a lease: `id` is the
 * lease's, `part` the request's amount, which leaves the lease's record (the rest stays until
 * the lease is trimmed and its last part closed); on a lease that expired or is gone the cost
 * still applies, as on an expired reservation.
 * Answers 'closed' when there was nothing open, 'ok' when no threshold was crossed, else
 * ok [credit: epoch or '', spendable] [per spend: '1' or '', spent].
 * The reservation's money keys are the request's own (the record holds them for a sweep by
 * another instance): reservation removed, actual cost added to settled and to this instance's
 * unwritten part.
 */
export const SETTLE_ONE = `
local function money_settle(m, key, amount, settling, cost)
  if amount > 0 and exists(m, key) then
    m.reserved = m.reserved - amount
    if abs(m.reserved) < EPS then m.reserved = 0 end
    m.dReserved = true
  end
  if settling and cost > 0 then
    m.settled = m.settled + cost
    m.mine = m.mine + cost
    m.dSettled = true
    m.exists = true
  end
end
local function settle_one(id, mode, a)
  local rec = RES[id]
  local settling = mode == 's' or mode == 'l'
  local amount = 0
  if mode == 'l' or mode == 'q' then
    if not settling and (not rec or rec == 'X') then return 'ok' end
    if rec and rec ~= 'X' then
      local left, flag, keys = match(rec, '^(%S+) (%a)(.*)$')
      amount = tonumber(ARGV[a + 6])
      left = tonumber(left) - amount
      if flag == 'T' and left < EPS then res_set(id, false) else res_keep(id, fmt(left) .. ' ' .. flag .. keys) end
    end
  else
    if not rec then return 'closed' end
    res_set(id, false)
    if mode == 'r' and rec == 'X' then return 'ok' end
    if rec ~= 'X' then amount = tonumber(match(rec, '^[^\\n]*')) or 0 end
  end
  local p = plan_of(tonumber(ARGV[a]))
  local now = tonumber(ARGV[a + 1])
  local cost = tonumber(ARGV[a + 2])
  local tokens = tonumber(ARGV[a + 3])
  local held = tonumber(ARGV[a + 4])
  local touch = ARGV[a + 5] == '1'
  local crossed = false
  local ki = p.k
  if p.credit then
    local key = KEYS[ki]; ki = ki + 1
    local m = money(key, true)
    money_settle(m, key, amount, settling, cost)
    if settling and cost > 0 and touch then m.ttlDay = true end
    local spendable = num(m.base) - (m.settled - m.sal)
    local low = ''
    if settling and p.lowAt and m.base and spendable < p.lowAt and m.alerted ~= m.epoch then
      low = m.epoch or ''
      m.alerted = low
      m.dAlerted = true
      crossed = true
    end
    SETTLE_OUT[1] = low
    SETTLE_OUT[2] = fmt(spendable)
  end
  local o = p.credit and 2 or 0
  for i = 1, p.nSpend do
    local c = p.spend[i]
    local key = KEYS[ki]; ki = ki + 1
    local m = money(key, false)
    money_settle(m, key, amount, settling, cost)
    if settling and cost > 0 and touch then
      local at = max(c.ends, now) + DAY_MS
      if m.ttlAt == nil or at > m.ttlAt then m.ttlAt = at end
    end
    local spent = num(m.base) + (m.settled - m.sal)
    local soft = ''
    if settling and c.alertAt and m.base and spent >= c.alertAt - EPS and m.alerted ~= c.period then
      soft = '1'
      m.alerted = c.period
      m.dAlerted = true
      crossed = true
    end
    SETTLE_OUT[o + 2 * i - 1] = soft
    SETTLE_OUT[o + 2 * i] = soft == '1' and fmt(spent) or ''
  end
  local rk = p.k + p.nMoney
  local read = false
  for i = 1, p.nRate do
    local c = p.rate[i]
    if c.tokens then
      local key = KEYS[rk + i - 1]
      local diff = (settling and tokens or 0) - math.min(held, c.limit)
      if diff ~= 0 then
        if not read then
          rates(rk, rk + p.nRate - 1)
          read = true
        end
        local cur = R[key]
        local tat = nil
        if cur == false then
          if diff > 0 then tat = now + diff * c.T end
        else
          if diff > 0 then cur = max(cur, now) end
          tat = cur + diff * c.T
        end
        if tat ~= nil then rate_set(key, tat, now) end
      end
    end
  end
  if not crossed then return 'ok' end
  return 'ok' .. SEP .. concat(SETTLE_OUT, SEP, 1, o + 2 * p.nSpend)
end
`;

/**
 * The end of a lease, inside BATCH: what it did not use goes back. `a`: plan, now, free amount,
 * free tokens, free units. The record keeps the parts still open (flag ' T': trimmed), or goes
 * when none is; a lease already trimmed, expired or gone is left as it is.
 */
export const TRIM_ONE = `
local function trim_one(id, a)
  local rec = RES[id]
  if not rec or rec == 'X' then return 'ok' end
  local left, flag, keys = match(rec, '^(%S+) (%a)(.*)$')
  if flag ~= 'L' then return 'ok' end
  local p = plan_of(tonumber(ARGV[a]))
  local now = tonumber(ARGV[a + 1])
  local free = tonumber(ARGV[a + 2])
  left = tonumber(left) - free
  if left < EPS then res_set(id, false) else res_keep(id, fmt(left) .. ' T' .. keys) end
  if free > 0 then
    for i = 1, p.nMoney do
      local key = KEYS[p.k + i - 1]
      money_settle(money(key, p.credit and i == 1), key, free, false, 0)
    end
  end
  local freeTokens, freeUnits = tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
  local rk = p.k + p.nMoney
  if p.nRate > 0 and (freeTokens > 0 or freeUnits > 0) then
    rates(rk, rk + p.nRate - 1)
    for i = 1, p.nRate do
      local c = p.rate[i]
      local key = KEYS[rk + i - 1]
      local n = freeUnits
      if c.tokens then n = math.min(freeTokens, c.limit) end
      local cur = R[key]
      if n > 0 and cur and cur > now then rate_set(key, max(now, cur - n * c.T), now) end
    end
  end
  return 'ok'
end
`;
