/**
 * The Lua scripts of the Redis queues (./redis-queues.ts): one script per operation, so each is atomic for every
 * instance sharing the store. They do what ./memory-queues.ts does, step by step (the same sweeps in the same order,
 * the same choice of agent, the same estimate), so the contract tests hold both to one behaviour.
 *
 * ARGV, all scripts: 1 now, 2 sweepPerOp, 3 QUEUE_KEEP_MS, 4 the key base (`<prefix>q{queues}:`), then theirs.
 * KEYS of poll, end and pause: the queue's keys (KINDS, in order), then `agents`, `claims`, `agents:at`, `names`.
 *
 * Records: a caller (hash `caller:<queue>`) `seen|staleMs|agent ringing|tried,agents`; an agent, when it is free
 * from (hash `agents`: its lease's end while claimed, its wrap-up's end, or when its claim ended; absent: never
 * rung: a poll reads only this) and its claim (hash `claims`: `claimedAt|<length of callid>|<callid><queue>`).
 */
import { HANDLE_KEEP, QUEUE_MAX_MS } from './queue-rules.js';
import { PRELUDE } from './redis-queues-prelude.js';

/**
 * poll. ARGV 5.. queue, callid, strategy, maxWaitMs, leaseMs, staleMs, handleMs, maxLine, maxQueues, maxAgents,
 * then the agents. Returns kind, agent ('' for none), position, waitedMs, expectedWaitMs, agents, free.
 */
export const POLL =
  PRELUDE +
  `
local Q, id, strategy = ARGV[5], ARGV[6], ARGV[7]
local maxWait, lease, stale = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
local handleMs, maxLine = tonumber(ARGV[11]), tonumber(ARGV[12])
local maxQueues, maxAgents = tonumber(ARGV[13]), tonumber(ARGV[14])
local agents = {}
for i = 15, #ARGV do agents[#agents + 1] = ARGV[i] end
local K = declared()

local known = redis.call('ZSCORE', KN, Q)
local arrival = nil
if known and id ~= '' then arrival = tonumber(redis.call('ZSCORE', K.line, id)) end
local c = nil
if arrival then
  c = callerGet(K, id)
  if c.agent ~= '' then addTried(c, release(K, Q, id, c)) else redis.call('ZREM', K.stale, id) end
  c.seen = NOW
  c.stale = stale
  callerPut(K, id, c)
  redis.call('ZADD', K.stale, NOW + stale, id)
end
if known then sweep(K, Q) end
prune()

local paused, tried = {}, {}
if known then for _, a in ipairs(redis.call('SMEMBERS', K.paused)) do paused[a] = true end end
if c then for a in string.gmatch(c.tried, '[^,]+') do tried[a] = true end end
-- when each agent is free from: a compact hash (listpack, up to hash-max-listpack-entries) is searched from its
-- start for each field, so a long list reads it whole once instead
local states = {}
if #agents > 8 and redis.call('OBJECT', 'ENCODING', KA) ~= 'hashtable' then
  local all, from = redis.call('HGETALL', KA), {}
  for i = 1, #all, 2 do from[all[i]] = all[i + 1] end
  for i, a in ipairs(agents) do states[i] = from[a] or false end
elseif #agents > 0 then
  states = redis.call('HMGET', KA, unpack(agents))
end
local notPaused, free, any, cands = 0, 0, false, {}
for i, a in ipairs(agents) do
  if not paused[a] then
    notPaused = notPaused + 1
    local since = tonumber(states[i])
    local isFree = since == nil or NOW >= since
    if isFree then free = free + 1 end
    if not tried[a] then
      any = true
      if isFree then cands[#cands + 1] = { i = i, since = since } end
    end
  end
end
local function answer(kind, agent, position, waited, expected)
  return { kind, agent, position, waited, expected, notPaused, free }
end

if not arrival then
  if not any or id == '' then return answer('empty', '', 0, 0, 0) end
  if not known and not admit(maxQueues) then return answer('empty', '', 0, 0, 0) end
  if redis.call('ZCARD', K.line) >= maxLine then return answer('empty', '', 0, 0, 0) end
  arrival = NOW
  c = { seen = NOW, stale = stale, agent = '', tried = '' }
  callerPut(K, id, c)
  redis.call('ZADD', K.line, NOW, id)
  redis.call('ZADD', K.stale, NOW + stale, id)
end
redis.call('ZADD', KN, NOW, Q)
local list = table.concat(agents, ',')
if redis.call('HGET', K.meta, 'list') ~= list then
  redis.call('HSET', K.meta, 'list', list)
  know(K, agents, maxAgents)
end

local function finish(r)
  refresh(K, 2 * stale + maxWait + lease)
  return r
end
local waited = NOW - arrival
if waited >= maxWait then
  drop(K, id)
  redis.call('HINCRBY', K.meta, 'timed_out', 1)
  return finish(answer('timeout', '', 0, waited, 0))
end
if not any then
  drop(K, id)
  return finish(answer('empty', '', 0, waited, 0))
end
local ahead = 0
if redis.call('EXISTS', K.ringing) == 1 then
  redis.call('ZADD', K.ringing, arrival, id)
  ahead = redis.call('ZRANK', K.ringing, id)
  redis.call('ZREM', K.ringing, id)
end
local position = redis.call('ZRANK', K.line, id) - ahead + 1
if position - 1 < #cands then
  local choice = cands[1]
  if strategy == 'round_robin' then
    local cursor, after = redis.call('HGET', K.meta, 'rr'), 0
    if cursor then for i, a in ipairs(agents) do if a == cursor then after = i break end end end
    for _, cd in ipairs(cands) do if cd.i > after then choice = cd break end end
  elseif strategy == 'longest_idle' then
    for _, cd in ipairs(cands) do
      if choice.since == nil then break end
      if cd.since == nil or cd.since < choice.since then choice = cd end
    end
  end
  local agent = agents[choice.i]
  setClaim(agent, id, Q, NOW + lease)
  c.agent = agent
  callerPut(K, id, c)
  redis.call('ZREM', K.stale, id)
  redis.call('ZADD', K.ringing, arrival, id)
  redis.call('ZADD', K.lease, NOW + lease, id)
  redis.call('HSET', K.meta, 'rr', agent)
  free = free - 1
  return finish(answer('ring', agent, position, waited, 0))
end
local mean = handleMs
local handle = redis.call('LRANGE', K.handle, 0, -1)
if #handle > 0 then
  local sum = 0
  for _, t in ipairs(handle) do sum = sum + tonumber(t) end
  mean = math.floor(sum / #handle + 0.5)
end
local expected = math.min(${QUEUE_MAX_MS}, math.ceil(position / math.max(1, notPaused)) * mean)
return finish(answer('wait', '', position, waited, expected))
`;

/** leave (ARGV 6 '') or done (ARGV 6 the wrap-up, ms). ARGV 5 queue, 6 callid. */
export const END =
  PRELUDE +
  `
local Q, id, wrap = ARGV[5], ARGV[6], ARGV[7]
local K = declared()
if not redis.call('ZSCORE', KN, Q) then return 0 end
if redis.call('ZSCORE', K.line, id) then
  local c = callerGet(K, id)
  if c.agent ~= '' and wrap == '' then
    release(K, Q, id, c)
  elseif c.agent ~= '' then
    local agent = unclaim(K, id, c)
    local cl = claimGet(agent)
    if cl and cl.c == id and cl.q == Q then
      if NOW < cl.u then
        redis.call('LPUSH', K.handle, math.max(0, NOW - (cl.a or NOW)))
        redis.call('LTRIM', K.handle, 0, ${HANDLE_KEEP - 1})
        setFree(agent, NOW + tonumber(wrap))
      else
        setFree(agent, cl.u)
      end
    end
  end
  drop(K, id)
  redis.call('HINCRBY', K.meta, wrap == '' and 'abandoned' or 'answered', 1)
end
redis.call('ZADD', KN, NOW, Q)
sweep(K, Q)
prune()
refresh(K, nil)
return 1
`;

/** pause. ARGV 5 queue, 6 agent, 7 '1' (pause) or '0' (resume), 8 maxQueues, 9 maxAgents. */
export const PAUSE =
  PRELUDE +
  `
local Q, agent, on = ARGV[5], ARGV[6], ARGV[7] == '1'
local maxQueues, maxAgents = tonumber(ARGV[8]), tonumber(ARGV[9])
local K = declared()
if not redis.call('ZSCORE', KN, Q) then
  if not on or not admit(maxQueues) then return 0 end
end
if not on then
  redis.call('SREM', K.paused, agent)
elseif redis.call('SCARD', K.paused) < maxAgents or redis.call('SISMEMBER', K.paused, agent) == 1 then
  redis.call('SADD', K.paused, agent)
  know(K, { agent }, maxAgents)
end
redis.call('ZADD', KN, NOW, Q)
sweep(K, Q)
prune()
refresh(K, nil)
return 1
`;

/**
 * view. KEYS `agents`, `claims`, `agents:at`, `names`; ARGV 5 viewLimit, 6 'all' or 'one', 7 the queue (one).
 * Per queue kept: name, length of the line, its first entries (callid, arrival, seen, agent ringing) flat, its
 * agents (number, state, callid, queue, since, until, paused '1'/'0') flat, handling times, answered, abandoned,
 * timed out.
 */
export const VIEW =
  PRELUDE +
  `
local limit = tonumber(ARGV[5])
local names = {}
if ARGV[6] == 'all' then
  names = redis.call('ZRANGE', KN, 0, -1)
elseif redis.call('ZSCORE', KN, ARGV[7]) then
  names = { ARGV[7] }
end
prune()
local out = {}
for _, name in ipairs(names) do
  local K = keysOf(name)
  sweep(K, name)
  local entries = {}
  local ids = redis.call('ZRANGE', K.line, 0, limit - 1, 'WITHSCORES')
  for i = 1, #ids, 2 do
    local c = callerGet(K, ids[i])
    for _, v in ipairs({ ids[i], ids[i + 1], fmt(c.seen), c.agent }) do entries[#entries + 1] = v end
  end
  local numbers, has, paused = {}, {}, {}
  for _, a in ipairs(redis.call('SMEMBERS', K.paused)) do paused[a] = true end
  for _, list in ipairs({ redis.call('ZRANGE', K.known, 0, -1), redis.call('SMEMBERS', K.paused) }) do
    for _, a in ipairs(list) do
      if not has[a] then
        has[a] = true
        numbers[#numbers + 1] = a
      end
    end
  end
  local agents = {}
  for _, a in ipairs(numbers) do
    local from = tonumber(redis.call('HGET', KA, a))
    local row = { a, 'free', '', '', from and fmt(from) or '', '', paused[a] and '1' or '0' }
    if from and NOW < from then
      local cl = claimGet(a)
      if cl then
        row = { a, 'busy', cl.c, cl.q, fmt(cl.a or 0), '', row[7] }
      else
        row = { a, 'wrap_up', '', '', '', fmt(from), row[7] }
      end
    end
    for _, v in ipairs(row) do agents[#agents + 1] = v end
  end
  local waiting = redis.call('ZCARD', K.line)
  if waiting > 0 or #numbers > 0 then
    local counts = redis.call('HMGET', K.meta, 'answered', 'abandoned', 'timed_out')
    out[#out + 1] = { name, waiting, entries, agents, redis.call('LRANGE', K.handle, 0, -1),
      counts[1] or '0', counts[2] or '0', counts[3] or '0' }
  end
end
return out
`;
