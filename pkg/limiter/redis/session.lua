-- One request of one client under the typing session rule (limiter.Sessions)
-- and the sliding window, decided and recorded atomically: the same rule as
-- the in-process store's AllowSearch.
--
-- KEYS[1] is a hash, and the script touches nothing else, so that Redis
-- Cluster runs it on the node that holds that key's slot. Its fields:
--   t      the times of the client's last accepted searches, oldest first,
--          as integers separated by spaces
--   scope, first, last, n, at
--          the client's session: its scope, its first and last texts, how
--          many requests it took and the time of the last; absent for none
--
-- ARGV[1]  max: how many searches a window allows, at least 1
-- ARGV[2]  the window, in time units, at least 1
-- ARGV[3]  time units per millisecond, for the key's expiry
-- ARGV[4]  milliseconds added to the expiry (0 in production)
-- ARGV[5]  the session gap, in time units
-- ARGV[6]  the most requests of a session
-- ARGV[7]  the longest text of a session, in bytes
-- ARGV[8]  the longest scope of a session, in bytes
-- ARGV[9]  the request's scope
-- ARGV[10] the request's text
-- ARGV[11] optional: the time now, in time units; without it Redis's own
--          clock (TIME) in microseconds
--
-- Returns {allowed (1 or 0), remaining, retry_after, next_slot, reset,
-- continued (1 or 0)}, durations in time units (see limiter.Decision).

local key = KEYS[1]
local max = tonumber(ARGV[1])
local span = tonumber(ARGV[2])
local gap = tonumber(ARGV[5])
local max_requests = tonumber(ARGV[6])
local max_length = tonumber(ARGV[7])
local max_scope = tonumber(ARGV[8])
local scope = ARGV[9]
local text = ARGV[10]

local now
if ARGV[11] then
  now = tonumber(ARGV[11])
else
  if redis.replicate_commands then redis.replicate_commands() end
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end

local h = redis.call('HMGET', key, 't', 'scope', 'first', 'last', 'n', 'at')
local times = {}
if h[1] then
  for v in string.gmatch(h[1], '%d+') do times[#times + 1] = tonumber(v) end
end
-- A smaller max than before: only the newest times count.
while #times > max do table.remove(times, 1) end
local n = #times
local requests = tonumber(h[5]) or 0
local at = tonumber(h[6]) or 0

-- Redis's clock can be stepped back; a client's time never goes back.
if n > 0 and now < times[n] then now = times[n] end
if requests > 0 and now < at then now = at end

local function starts(s, prefix)
  return string.sub(s, 1, #prefix) == prefix
end

local first, last = h[3] or '', h[4] or ''
local continued = requests > 0 and requests < max_requests and now - at < gap
  and scope == h[2] and #text <= max_length and text ~= last
  and starts(text, first) and (starts(text, last) or starts(last, text))

local allowed = 0
if continued then
  allowed = 1
  redis.call('HSET', key, 'last', text, 'n', requests + 1, 'at', string.format('%.0f', now))
  at = now
else
  if n < max then
    n = n + 1
    times[n] = now
    allowed = 1
  elseif now - times[1] >= span then
    table.remove(times, 1)
    times[n] = now
    allowed = 1
  end
  if allowed == 1 then
    -- Times are written as integers: tostring would round them to 14 digits.
    local written = {}
    for i = 1, n do written[i] = string.format('%.0f', times[i]) end
    redis.call('HSET', key, 't', table.concat(written, ' '))
    if #text <= max_length and #scope <= max_scope then
      redis.call('HSET', key, 'scope', scope, 'first', text, 'last', text, 'n', 1,
        'at', string.format('%.0f', now))
      requests, at = 1, now
    else
      redis.call('HDEL', key, 'scope', 'first', 'last', 'n', 'at')
      requests = 0
    end
  end
end

-- The kept times that have left the window are each one more search that
-- would pass now. They are at the front.
local left = 0
while left < n and now - times[left + 1] >= span do left = left + 1 end
local remaining = max - n + left
local next_slot = 0
if left < n then next_slot = times[left + 1] + span - now end
local retry_after = 0
if remaining == 0 then retry_after = next_slot end
local reset = 0
if n > 0 and now - times[n] < span then reset = times[n] + span - now end

-- Once every kept time has left the window and the session has ended, the
-- client is as good as new: let Redis forget it then.
local until_idle = 0
if n > 0 then until_idle = times[n] + span - now end
if requests > 0 and at + gap - now > until_idle then until_idle = at + gap - now end
if n > 0 or requests > 0 then
  local ttl = math.ceil(until_idle / tonumber(ARGV[3])) + tonumber(ARGV[4])
  if ttl < 1 then ttl = 1 end
  redis.call('PEXPIRE', key, ttl)
end

local c = 0
if continued then c = 1 end
return {allowed, remaining, retry_after, next_slot, reset, c}
