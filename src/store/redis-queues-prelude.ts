/**
 * What every Lua script of the Redis queues (./redis-queues-lua.ts) starts with: its arguments, the keys, and the
 * steps they share (records, claims, sweeps, expiry, room for a queue), as ./memory-queues.ts has them.
 */

/** A queue's keys, after the base: `<kind>:<queue>`. */
export const KINDS = ['line', 'stale', 'ringing', 'lease', 'caller', 'paused', 'handle', 'known', 'meta'] as const;

export const PRELUDE = `
local NOW = tonumber(ARGV[1])
local SWEEP = tonumber(ARGV[2])
local KEEP = tonumber(ARGV[3])
local BASE = ARGV[4]
local KINDS = {${KINDS.map((k) => `'${k}'`).join(', ')}}
local LINE_KINDS = {'line', 'stale', 'ringing', 'lease', 'caller'}
local KA, KC, KAT, KN = BASE .. 'agents', BASE .. 'claims', BASE .. 'agents:at', BASE .. 'names'

local function fmt(x) return string.format('%.0f', x) end

local function keysOf(name)
  local k = {}
  for _, kind in ipairs(KINDS) do k[kind] = BASE .. kind .. ':' .. name end
  return k
end

local function declared()
  local k = {}
  for i, kind in ipairs(KINDS) do k[kind] = KEYS[i] end
  return k
end

-- an agent: when it is free from (absent: never rung) and, while claimed, its claim
local function claimGet(number)
  local raw = redis.call('HGET', KC, number)
  if not raw then return nil end
  local at, n, rest = string.match(raw, '^([^|]*)|(%d+)|(.*)$')
  if not at then return nil end
  n = tonumber(n)
  local u = tonumber(redis.call('HGET', KA, number))
  return { a = tonumber(at), u = u or 0, c = string.sub(rest, 1, n), q = string.sub(rest, n + 1) }
end

local function setClaim(number, id, Q, untilMs)
  redis.call('HSET', KA, number, fmt(untilMs))
  redis.call('HSET', KC, number, fmt(NOW) .. '|' .. #id .. '|' .. id .. Q)
  redis.call('ZADD', KAT, NOW, number)
end

local function setFree(number, from)
  redis.call('HSET', KA, number, fmt(from))
  redis.call('HDEL', KC, number)
  redis.call('ZADD', KAT, NOW, number)
end

local function callerGet(K, id)
  local c = { seen = 0, stale = 1, agent = '', tried = '' }
  local raw = redis.call('HGET', K.caller, id)
  if raw then
    local seen, stale, agent, tried = string.match(raw, '^([^|]*)|([^|]*)|([^|]*)|(.*)$')
    if seen then
      c.seen = tonumber(seen) or 0
      c.stale = tonumber(stale) or 1
      c.agent = agent
      c.tried = tried
    end
  end
  return c
end

local function callerPut(K, id, c)
  redis.call('HSET', K.caller, id, fmt(c.seen) .. '|' .. fmt(c.stale) .. '|' .. c.agent .. '|' .. c.tried)
end

local function addTried(c, agent)
  if c.tried == '' then c.tried = agent else c.tried = c.tried .. ',' .. agent end
end

local function unclaim(K, id, c)
  redis.call('ZREM', K.ringing, id)
  redis.call('ZREM', K.lease, id)
  local agent = c.agent
  c.agent = ''
  return agent
end

-- ends a claim: its agent free at once (at its lapse if it lapsed before); returns the agent
local function release(K, Q, id, c)
  local agent = unclaim(K, id, c)
  local cl = claimGet(agent)
  if cl and cl.c == id and cl.q == Q then setFree(agent, math.min(NOW, cl.u)) end
  return agent
end

local function drop(K, id)
  redis.call('ZREM', K.line, id)
  redis.call('ZREM', K.stale, id)
  redis.call('HDEL', K.caller, id)
end

local function sweep(K, Q)
  local lapsed = redis.call('ZRANGEBYSCORE', K.lease, '-inf', NOW, 'LIMIT', 0, SWEEP)
  for _, id in ipairs(lapsed) do
    local c = callerGet(K, id)
    if c.agent ~= '' then addTried(c, release(K, Q, id, c)) else unclaim(K, id, c) end
    if redis.call('ZSCORE', K.line, id) then
      callerPut(K, id, c)
      redis.call('ZADD', K.stale, c.seen + c.stale, id)
    else
      redis.call('HDEL', K.caller, id)
    end
  end
  local gone = redis.call('ZRANGEBYSCORE', K.stale, '-inf', NOW, 'LIMIT', 0, SWEEP)
  for _, id in ipairs(gone) do drop(K, id) end
end

local function prune()
  local old = redis.call('ZRANGEBYSCORE', KAT, '-inf', NOW - KEEP, 'LIMIT', 0, SWEEP)
  for _, a in ipairs(old) do
    redis.call('HDEL', KA, a)
    redis.call('HDEL', KC, a)
    redis.call('ZREM', KAT, a)
  end
end

local function extend(key, ms)
  local t = redis.call('PTTL', key)
  if t == -1 or (t >= 0 and t < ms) then redis.call('PEXPIRE', key, ms) end
end

-- keys expire when idle: the line's lineMs after its last poll, the rest KEEP after the last operation
local function refresh(K, lineMs)
  local keep = math.max(KEEP, lineMs or 0)
  if lineMs then for _, kind in ipairs(LINE_KINDS) do extend(K[kind], lineMs) end end
  for _, kind in ipairs(KINDS) do
    if kind == 'paused' or kind == 'handle' or kind == 'known' or kind == 'meta' then extend(K[kind], keep) end
  end
  extend(KA, keep)
  extend(KC, keep)
  extend(KAT, keep)
  extend(KN, keep)
end

-- room for a new queue: those idle for KEEP are forgotten first (at most SWEEP)
local function admit(maxQueues)
  if redis.call('ZCARD', KN) < maxQueues then return true end
  local idle = redis.call('ZRANGEBYSCORE', KN, '-inf', NOW - KEEP, 'LIMIT', 0, SWEEP)
  for _, name in ipairs(idle) do
    local k = keysOf(name)
    for _, kind in ipairs(KINDS) do redis.call('DEL', k[kind]) end
    redis.call('ZREM', KN, name)
  end
  return redis.call('ZCARD', KN) < maxQueues
end

local function know(K, numbers, maxAgents)
  if #numbers > 0 then
    local args = {}
    for _, a in ipairs(numbers) do
      args[#args + 1] = NOW
      args[#args + 1] = a
    end
    redis.call('ZADD', K.known, unpack(args))
  end
  redis.call('ZREMRANGEBYRANK', K.known, 0, -(maxAgents + 1))
end
`;
