-- One request of one client under the sliding window, decided and recorded
-- atomically: the same rule as the in-process store (see package limiter).
--
-- The script touches KEYS[1] and nothing else, so that Redis Cluster runs it
-- on the node that holds that key's slot. Any key added later must share
-- KEYS[1]'s hash tag ({…}) to stay on the same node.
--
-- KEYS[1]  the client's list of accepted request times, oldest first
-- ARGV[1]  max: how many requests a window allows, at least 1
-- ARGV[2]  the window, in time units, at least 1
-- ARGV[3]  time units per millisecond, for the key's expiry
-- ARGV[4]  milliseconds added to the expiry (0 in production)
-- ARGV[5]  optional: the time now, in time units. Without it the time is
--          Redis's own clock (TIME) in microseconds, the same for every
--          replica of the server whatever their own clocks say.
--
-- Returns {allowed (1 or 0), remaining, retry_after, next_slot, reset},
-- durations in time units (see limiter.Decision).

local key = KEYS[1]
local max = tonumber(ARGV[1])
local span = tonumber(ARGV[2])

local now
if ARGV[5] then
  now = tonumber(ARGV[5])
else
  -- Redis before 5 replicates scripts verbatim and refuses a write after a
  -- non-deterministic command such as TIME unless told to replicate effects.
  if redis.replicate_commands then redis.replicate_commands() end
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- A smaller max than before: only the newest times count.
local n = redis.call('LLEN', key)
if n > max then
  redis.call('LTRIM', key, n - max, -1)
  n = max
end
local times = redis.call('LRANGE', key, 0, -1)
for i = 1, n do times[i] = tonumber(times[i]) end

-- Redis's clock can be stepped back; a client's time never goes back.
if n > 0 and now < times[n] then now = times[n] end

-- Times are written as integers: tostring would round them to 14 digits.
local allowed = 0
if n < max then
  redis.call('RPUSH', key, string.format('%.0f', now))
  n = n + 1
  times[n] = now
  allowed = 1
elseif now - times[1] >= span then
  redis.call('LPOP', key)
  redis.call('RPUSH', key, string.format('%.0f', now))
  table.remove(times, 1)
  times[n] = now
  allowed = 1
end

-- The kept times that have left the window are each one more request that
-- would pass now. They are at the front.
local left = 0
while left < n and now - times[left + 1] >= span do left = left + 1 end
local remaining = max - n + left
local next_slot = 0
if left < n then next_slot = times[left + 1] + span - now end
local retry_after = 0
if remaining == 0 then retry_after = next_slot end
local reset = 0
if now - times[n] < span then reset = times[n] + span - now end

-- Once every kept time has left the window the client is as good as new:
-- let Redis forget it then, so idle clients cost nothing.
local ttl = math.ceil((times[n] + span - now) / tonumber(ARGV[3])) + tonumber(ARGV[4])
if ttl < 1 then ttl = 1 end
redis.call('PEXPIRE', key, ttl)

return {allowed, remaining, retry_after, next_slot, reset}
