-- GCRA for a batch of buckets in one round trip; same arithmetic as compliance_api/ratelimit/gcra.py.
-- KEYS[i]: bucket key. ARGV[2i-1]: emission interval (µs), ARGV[2i]: burst.
-- Returns per key: allowed (0/1), remaining, reset (µs), retry_after (µs).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local out = {}
for i, key in ipairs(KEYS) do
  local interval = tonumber(ARGV[2 * i - 1])
  local burst = tonumber(ARGV[2 * i])
  local stored = tonumber(redis.call('GET', key))
  local tat = now
  if stored and stored > now then tat = stored end
  local new_tat = tat + interval
  local allow_at = new_tat - burst * interval
  if now < allow_at then
    table.insert(out, 0); table.insert(out, 0)
    table.insert(out, tat - now); table.insert(out, allow_at - now)
  else
    local remaining = math.floor((now - allow_at) / interval)
    if remaining > burst then remaining = burst end
    redis.call('SET', key, string.format('%d', new_tat), 'PX', math.ceil((new_tat - now) / 1000) + 1000)
    table.insert(out, 1); table.insert(out, remaining)
    table.insert(out, new_tat - now); table.insert(out, 0)
  end
end
return out
