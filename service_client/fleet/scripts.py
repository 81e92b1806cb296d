"""The fleet's Lua scripts: each does its checks and its writes in one atomic step in Redis.

- :data:`PUBLISH`: add a batch of events to their partition streams with
  explicit entry ids ``<seq>-0`` (an entry re-sent after a failed call is
  refused as already there, so a retried batch never adds an event twice).
- :data:`ACQUIRE`, :data:`RENEW`, :data:`RELEASE`: a partition's lease
  (``SET NX PX``) with a fencing token from a counter that only grows.
- :data:`READ`: read the owned partitions' entries, each only while the
  caller's lease is the current one: a worker that lost a partition (paused,
  partitioned away) cannot take entries of it any more. A partition read from
  ``0`` gives the pending entries of its consumer first, with their delivery
  counts.
- :data:`ACK`, :data:`DEAD_LETTER`: acknowledge (and dead-letter) only under
  the current lease.
- :data:`CLAIM`: claim a reply's nonce once, under the current lease.
- :data:`HEARTBEAT`: a worker's place among the group's live members, by
  Redis server time.
"""

from __future__ import annotations

__all__ = ["ACK", "ACQUIRE", "CLAIM", "DEAD_LETTER", "HEARTBEAT", "PUBLISH", "READ", "RELEASE", "RENEW"]

#: KEYS: the partition streams of the batch, then the shared-state stream.
#: ARGV: epoch, number of partitions in the batch; per partition: its number, the seq of its
#: first event, the count n, then the n events' data (one argument each: Redis's Lua hashes
#: every string it makes, so the data are not cut out of one joined string); then the state
#: stream's first seq, its count m, then m pairs (event id, data). Returns {added, already there,
#: foreign removed}.
#:
#: An entry refused because the stream's top is above its id is "already there" when an entry
#: has its id (a retried batch) or when a publisher's entry is above it (another publisher). When
#: only entries of another Redis writer are above it (an ``XADD *``, whose id is a time in ms),
#: they are deleted, the stream's last id and its groups' read positions go back to the entry
#: before, and the entry is added: a foreign entry never makes the publisher drop events.
#:
#: The ids of a partition's events grow within a batch: once one is added, the next ones are
#: above the stream's last id, so they are added without those checks (one ``XADD`` each).
PUBLISH = """
local epoch = ARGV[1]
local groups = tonumber(ARGV[2])
local a = 3
local added, dup, foreign = 0, 0, 0
local call, find, fmt = redis.call, string.find, string.format
local function parse(id)
  local ms, sq = string.match(id, '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(sq)
end
local function above(x, y)
  local xm, xs = parse(x)
  local ym, ys = parse(y)
  return xm > ym or (xm == ym and xs > ys)
end
local function ours(entry, part)
  local f = entry[2]
  for k = 1, #f, 2 do
    if f[k] == 'i' then
      local p, s = string.match(f[k + 1], '^[^:]+:(%d+):(%d+)$')
      if not s then return false end
      if part == nil then return true end
      return p == part and s .. '-0' == entry[1]
    end
  end
  return false
end
-- The entries above id are all another writer's: delete them and step back. False when a
-- publisher's entry is among them.
local function clear_above(key, id, part)
  repeat
    local over = call('XRANGE', key, '(' .. id, '+', 'COUNT', 1000)
    for _, entry in ipairs(over) do
      if ours(entry, part) then return false end
    end
    for _, entry in ipairs(over) do call('XDEL', key, entry[1]) end
    foreign = foreign + #over
  until #over < 1000
  local ms = parse(id)
  local back = fmt('%d', ms - 1) .. '-0'
  local top = call('XREVRANGE', key, '+', '-', 'COUNT', 1)
  if top[1] and above(top[1][1], back) then back = top[1][1] end
  call('XSETID', key, back)
  for _, g in ipairs(call('XINFO', 'GROUPS', key)) do
    local name, last
    for k = 1, #g, 2 do
      if g[k] == 'name' then name = g[k + 1] elseif g[k] == 'last-delivered-id' then last = g[k + 1] end
    end
    if name and last and above(last, back) then call('XGROUP', 'SETID', key, name, back) end
  end
  return true
end
-- Add one entry; true when it was added (its id was above the stream's last one).
local function add(key, id, eid, data, part)
  local r = redis.pcall('XADD', key, id, 'i', eid, 'd', data)
  if type(r) == 'table' and r.err then
    if not find(r.err, 'equal or smaller', 1, true) then error(r.err) end
    if call('XRANGE', key, id, id)[1] or not clear_above(key, id, part) then dup = dup + 1 return false end
    call('XADD', key, id, 'i', eid, 'd', data)
  end
  added = added + 1
  return true
end
for g = 1, groups do
  local part, first, count = ARGV[a], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  a = a + 3
  local key = KEYS[g]
  local prefix = epoch .. ':' .. part .. ':'
  local fast = false
  for k = 0, count - 1 do
    local s = fmt('%d', first + k)
    if fast then
      -- The ids of a partition grow: once one was added, the next ones are above the stream's last.
      call('XADD', key, s .. '-0', 'i', prefix .. s, 'd', ARGV[a + k])
      added = added + 1
    else
      fast = add(key, s .. '-0', prefix .. s, ARGV[a + k], part)
    end
  end
  a = a + count
end
local sfirst, m = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
a = a + 2
for k = 0, m - 1 do
  add(KEYS[groups + 1], fmt('%d', sfirst + k) .. '-0', ARGV[a + 2 * k], ARGV[a + 2 * k + 1], nil)
end
return {added, dup, foreign}
"""

#: KEYS: lease, fence counter. ARGV: owner ("name/instance"), TTL ms. Returns the new fencing
#: token, or 0 when the lease is held.
ACQUIRE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local t = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. t, 'PX', ARGV[2])
return t
"""

#: KEYS: leases. ARGV: TTL ms, then each lease's expected value. Returns 1 (renewed) or 0 (lost)
#: per lease.
RENEW = """
local out = {}
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[i + 1] then
    redis.call('PEXPIRE', KEYS[i], ARGV[1])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
"""

#: KEYS: leases. ARGV: each lease's expected value. Deletes those still held as expected.
RELEASE = """
local n = 0
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[i] then redis.call('DEL', KEYS[i]) n = n + 1 end
end
return n
"""

#: KEYS: per partition its lease, then its stream; last, the group's last-sequence hash. ARGV:
#: group, then per partition: the lease value expected, the consumer, the id to read after ('>'
#: for new entries), the count, the partition number.
#: Returns per partition 0 (the lease is not the caller's) or {entries or 0, pending or 0, last,
#: prev}, each entry one string ``<id>\n<event id>\n<data>`` (both empty for an entry trimmed
#: meanwhile; the event id ``-`` for an entry without one); the pending list ({id, consumer, idle ms, deliveries}...) comes with a read of
#: history (not '>'), and ``last`` (the stream's last entry id, '0-0' when empty) with a '>' read
#: that got none, so that the wait for new entries misses none. ``prev`` (with a '>' read) is the
#: last sequence number the group read from the partition before this read (0: none known); the
#: read then keeps the highest sequence number among its entries that a publisher added (id
#: ``<seq>-0`` and event id ``<epoch>:<partition>:<seq>``), so that whoever owns the partition
#: next sees a gap. That write may fail (Redis refusing writes) without failing the read.
READ = """
local group = ARGV[1]
local seqs = KEYS[#KEYS]
local out = {}
for i = 1, #KEYS - 1, 2 do
  local j = 2 + (i - 1) / 2 * 5
  local value, consumer, after, count, part = ARGV[j], ARGV[j + 1], ARGV[j + 2], ARGV[j + 3], ARGV[j + 4]
  if redis.call('GET', KEYS[i]) ~= value then
    out[#out + 1] = 0
  else
    local pending = 0
    local prev = 0
    if after ~= '>' then
      local start = '-'
      if after ~= '0' then start = '(' .. after end
      pending = redis.call('XPENDING', KEYS[i + 1], group, start, '+', count, consumer)
    else
      prev = tonumber(redis.call('HGET', seqs, part) or '0') or 0
    end
    local r = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', count, 'STREAMS', KEYS[i + 1], after)
    local entries = 0
    local last = 0
    local top = prev
    if r then
      -- Each entry as one string "<id>NL<event id>NL<data>" (NL: a newline) (empty fields when it was trimmed).
      entries = {}
      for n, entry in ipairs(r[1][2]) do
        local f = entry[2]
        local eid, data = '', ''
        if f then
          for k = 1, #f, 2 do
            if f[k] == 'i' then eid = f[k + 1] elseif f[k] == 'd' then data = f[k + 1] end
          end
          if eid == '' then eid = '-' end  -- not a publisher's entry (not a trimmed one either)
        end
        entries[n] = entry[1] .. '\\n' .. eid .. '\\n' .. data
        if after == '>' then
          local s = string.match(eid, '^[^:]+:' .. part .. ':(%d+)$')
          if s and s .. '-0' == entry[1] then
            local v = tonumber(s)
            if v > top then top = v end
          end
        end
      end
    end
    if top > prev then redis.pcall('HSET', seqs, part, string.format('%d', top)) end
    if after == '>' and (not r or #r[1][2] == 0) then
      local t = redis.call('XREVRANGE', KEYS[i + 1], '+', '-', 'COUNT', 1)
      if t[1] then last = t[1][1] else last = '0-0' end
    end
    out[#out + 1] = {entries, pending, last, prev}
  end
end
return out
"""

#: KEYS: lease, stream. ARGV: group, the lease value expected, the entry ids joined by commas.
#: Returns the number acknowledged, or -1 when the lease is not the caller's.
ACK = """
if redis.call('GET', KEYS[1]) ~= ARGV[2] then return -1 end
local ids = {}
for id in string.gmatch(ARGV[3], '[^,]+') do ids[#ids + 1] = id end
if #ids == 0 then return 0 end
return redis.call('XACK', KEYS[2], ARGV[1], unpack(ids))
"""

#: KEYS: lease, stream, dead-letter stream. ARGV: group, lease value, entry id, max length of
#: the dead-letter stream, then field/value pairs. Returns 1, or -1 when the lease is not the caller's.
DEAD_LETTER = """
if redis.call('GET', KEYS[1]) ~= ARGV[2] then return -1 end
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[4], '*', unpack(ARGV, 5))
redis.call('XACK', KEYS[2], ARGV[1], ARGV[3])
return 1
"""

#: KEYS: the nonce's key, then (for a reply made while handling an event) the partition's lease.
#: ARGV: TTL ms of the claim, the claiming process's name, the prefix of the processes' liveness
#: keys, then the lease value expected. Returns {'fenced'}, {'claimed'} (the caller sends now),
#: {'pending'} (a live process is sending it), {'orphan', claimed at ms} (the process that claimed
#: it is gone, a restart or a crash: the caller holds the claim now and finds out whether that
#: send was posted) or {'done', result}. A claim being sent holds ``~<process>:<ms>``.
CLAIM = """
if #KEYS > 1 and redis.call('GET', KEYS[2]) ~= ARGV[4] then return {'fenced'} end
local t = redis.call('TIME')
local now = string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
local mine = '~' .. ARGV[2] .. ':' .. now
if redis.call('SET', KEYS[1], mine, 'NX', 'PX', ARGV[1]) then return {'claimed'} end
local result = redis.call('GET', KEYS[1])
if not result then return {'pending'} end
if result == '' then return {'pending'} end
if string.sub(result, 1, 1) ~= '~' then return {'done', result} end
local owner, at = string.match(result, '^~(.*):(%d+)$')
if owner == nil or owner == ARGV[2] or redis.call('EXISTS', ARGV[3] .. owner) == 1 then return {'pending'} end
redis.call('SET', KEYS[1], mine, 'KEEPTTL')
return {'orphan', at}
"""

#: KEYS: the group's member set. ARGV: the member, its TTL ms, '1' to stay or '0' to leave.
#: Returns the live members (expired ones are removed), sorted.
HEARTBEAT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[3] == '1' then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
else
  redis.call('ZREM', KEYS[1], ARGV[1])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('PEXPIRE', KEYS[1], 3600000)
return redis.call('ZRANGE', KEYS[1], 0, -1)
"""
