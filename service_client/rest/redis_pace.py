"""The pace of :class:`~service_client.rest.redis_buckets.RedisBucketStore`: its two Lua scripts.

Each script runs atomically in Redis, on Redis server time (``TIME``), for
one bucket's two keys (``KEYS[1]`` the block, ``KEYS[2]`` the pace hash):
:data:`ACQUIRE_LUA` takes a permit or says how long to wait,
:data:`BLOCK_LUA` records a 429 and learns from it. The constants are the
scripts' arguments.
"""

from __future__ import annotations

__all__ = [
    "ACQUIRE_LUA",
    "BLOCK_LUA",
    "MAX_WINDOW_MS",
    "PACE_KEEP_WINDOWS",
    "PACE_MAX_TTL_MS",
    "PACE_MIN_TTL_MS",
    "PROBE_EVERY",
    "PROBE_GAP_MS",
]

#: How long a bucket's pace hash is kept after its last use: this many of its windows
#: (past the current window's end), at least PACE_MIN_TTL_MS and at most PACE_MAX_TTL_MS.
PACE_KEEP_WINDOWS = 8
PACE_MIN_TTL_MS = 2_000
PACE_MAX_TTL_MS = 240_000
#: Longest window length the store learns, milliseconds (longer: blocks only).
MAX_WINDOW_MS = 120_000
#: Clean saturated windows in a row before one more permit is offered (at most).
PROBE_EVERY = 16
#: Past the limit in a window whose end is unknown, one request per this many milliseconds.
PROBE_GAP_MS = 50

# The pace hash of a bucket (instants in Redis server milliseconds). The window:
#   ws  its start (its first permit)      we  its end, once known
#   g   permits handed out in it          r   429s answered to those permits
#   n   1 when a 429 came for a request sent without a permit: nothing is learned from it
#   tr  1 when it opened at a known end (a block's, or a learned length after the last
#       start), so it lines up with the service's window and can be learned from
#   p   1 when it offers one permit more than the limit (a probe)
#   lg  the last permit past the limit, while its end is not known
# What was learned:
#   L   the limit (requests per window)   q  1 while L is a first guess from a window
#                                            that may not have lined up
#   W   the length (the latest seen from a lined-up window's start to the end of its block)
#   a   the margin added to W             d  1 after one window accepted fewer than L
#   H   the highest limit confirmed       c  clean saturated windows in a row
#   e   clean saturated windows between two probes
#: The TTL of a pace hash, milliseconds (both scripts; KEEP, MIN_TTL and MAX_TTL are their
#: arguments).
_PACE_TTL_LUA = """
local function pace_ttl(now, ws, we, W, a)
  -- Kept for a few windows past the current one's end (or its best guess), then forgotten.
  local span = 1000
  if W then span = W + (a or 0) elseif we and ws then span = math.max(we - ws, 1)
  elseif ws then span = math.max(now - ws, 1000) end
  local left = 0
  if we and we > now then left = we - now end
  return left + math.min(math.max(KEEP * span, MIN_TTL), MAX_TTL)  -- never before the window ends
end
"""
ACQUIRE_LUA = (
    """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local deadline = tonumber(ARGV[6])
local blocked = tonumber(redis.call('GET', KEYS[1]))
if blocked and blocked > now then return {blocked - now, 0, 0, now} end
if deadline > 0 and now > deadline then return {0, -2, 0, now} end  -- landed after its caller gave up
if ARGV[1] ~= '1' then return {0, 0, 0, now} end
local KEEP, every_max, gap, max_window = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local MIN_TTL, MAX_TTL = tonumber(ARGV[7]), tonumber(ARGV[8])
"""
    + _PACE_TTL_LUA
    + """local s = redis.call('HMGET', KEYS[2], 'ws', 'we', 'g', 'r', 'n', 'tr', 'p', 'lg',
                     'L', 'q', 'W', 'a', 'd', 'H', 'c', 'e')
local ws, we = tonumber(s[1]), tonumber(s[2])
local L, W = tonumber(s[9]), tonumber(s[11])
local p = tonumber(s[7]) or 0
if ws and (not we or now < we) then
  -- The window is open: hand out a permit unless its share is gone.
  local g = tonumber(s[3]) or 0
  if L and g >= L + p then
    if we then return {we - now, -1, 0, now} end
    -- Its end is not known yet: past the limit, one request per gap goes to find it.
    local last = tonumber(s[8]) or 0
    if now - last < gap then return {gap - (now - last), -1, 0, now} end
    redis.call('HSET', KEYS[2], 'lg', now)
  end
  if not we and s[6] == '1' and now - ws > max_window then
    redis.call('HSET', KEYS[2], 'tr', 0)  -- open longer than any window learned: no longer lined up
  end
  g = redis.call('HINCRBY', KEYS[2], 'g', 1)
  redis.call('PEXPIRE', KEYS[2], pace_ttl(now, ws, we, W, tonumber(s[12])))
  return {0, ws, g, now}
end
-- No window, or it is over: learn from it, then open the next one.
local q, d = tonumber(s[10]) or 0, tonumber(s[13]) or 0
local H, c, e = tonumber(s[14]) or 0, tonumber(s[15]) or 0, tonumber(s[16]) or 2
local base = 5 + math.floor((W or 0) / 100)
local a = math.max(base, tonumber(s[12]) or 0)
local probe, trusted = 0, 0
if ws then
  trusted = 1
  local g, r = tonumber(s[3]) or 0, tonumber(s[4]) or 0
  local accepted = g - r
  if s[5] == '1' then
    -- a request without a permit was refused in it: what it shows is not the fleet's alone
  elseif r > 0 then
    if s[6] ~= '1' then
      if not L and accepted >= 1 then L, q = accepted, 1 end
    elseif not L or q == 1 then
      if accepted >= 1 then L, q, d = accepted, 0, 0 end
    elseif p == 1 and accepted == L then
      H, e, d = L, math.min(e * 2, every_max), 0  -- the extra permit was refused: L is the limit
    elseif accepted >= L then
      L, d = accepted, 0
    elseif d == 1 then
      L, H, d = math.max(1, accepted), math.max(1, accepted), 0  -- fewer twice in a row: a lower limit
    else
      -- Once: the window may have opened before the service's had ended (requests reach
      -- it late by a varying time). Keep a wider margin; a second such window lowers L.
      d = 1
      if W then a = math.min(a + base, base + math.floor(W / 20)) end
    end
    c = 0
  elseif s[6] == '1' and L and g >= L then
    -- Clean and saturated: the limit holds (or grew, when the extra permit went through).
    if g > L then L = g end
    if L > H then H = L end
    d = 0
    a = math.max(base, a - 1)
    c = c + 1
    local every = e
    if L < H then every = 2 end
    if c >= every then probe, c = 1, 0 end
  end
end
redis.call('HSET', KEYS[2], 'ws', now, 'g', 1, 'r', 0, 'n', 0, 'tr', trusted, 'p', probe,
           'q', q, 'a', a, 'd', d, 'H', H, 'c', c, 'e', e)
redis.call('HDEL', KEYS[2], 'lg')
if L then redis.call('HSET', KEYS[2], 'L', L) end
local new_we = nil
if W then
  new_we = now + W + a
  redis.call('HSET', KEYS[2], 'we', new_we)
else
  redis.call('HDEL', KEYS[2], 'we')
end
redis.call('PEXPIRE', KEYS[2], pace_ttl(now, now, new_we, W, a))
return {0, now, 1, now}
"""
)

BLOCK_LUA = (
    """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- The block counts from when the 429 was seen (ARGV[7], Redis time; 0: unknown, now), not from
-- when this write lands: a write delayed by a stall blocks no longer than the service said.
local at = tonumber(ARGV[7])
if at <= 0 or at > now then at = now end
local untl = at + tonumber(ARGV[1])
if untl <= now then return 0 end  -- over already: a late write changes nothing
local current = tonumber(redis.call('GET', KEYS[1]))
if current and current >= untl then
  untl = current
else
  redis.call('SET', KEYS[1], untl, 'PX', untl - now)
end
if ARGV[2] ~= '1' then return untl - now end
local KEEP, max_window = tonumber(ARGV[3]), tonumber(ARGV[4])
local idx, wid = tonumber(ARGV[5]), tonumber(ARGV[6])
local MIN_TTL, MAX_TTL = tonumber(ARGV[8]), tonumber(ARGV[9])
"""
    + _PACE_TTL_LUA
    + """local s = redis.call('HMGET', KEYS[2], 'ws', 'we', 'tr', 'W', 'L', 'q', 'a', 'p')
local ws, we = tonumber(s[1]), tonumber(s[2])
local W = tonumber(s[4])
if ws and (not we or we > now) then
  if (wid ~= 0 and wid ~= ws) or (wid == 0 and at < ws) then
    -- A 429 of an earlier window, written late: the current window is none of its business.
    return untl - now
  end
  -- The window ends with the block.
  if not we or we < untl then redis.call('HSET', KEYS[2], 'we', untl); we = untl end
  if wid == 0 then
    redis.call('HSET', KEYS[2], 'n', 1)
  else
    redis.call('HINCRBY', KEYS[2], 'r', 1)
    -- The window's length follows what the service says, each time, both ways: from the start
    -- of a lined-up window to the end of the block of a request past the limit.
    local L = tonumber(s[5])
    local seen = untl - ws
    -- (In a probe window any refusal will do: requests reach the service out of order.)
    if s[3] == '1' and (not L or s[6] == '1' or idx > L or s[8] == '1') and seen <= max_window then
      W = seen
      redis.call('HSET', KEYS[2], 'W', W)
    end
  end
else
  -- No window open: this block opens one (not lined up) that ends with it.
  redis.call('HSET', KEYS[2], 'ws', now, 'we', untl, 'g', 0, 'r', 0, 'n', 1, 'tr', 0, 'p', 0)
  ws, we = now, untl
end
redis.call('PEXPIRE', KEYS[2], pace_ttl(now, ws, we, W, tonumber(s[7])))
return untl - now
"""
)
