"""The pace of :class:`~service_client.rest.redis_buckets.RedisBucketStore`: its two Lua scripts.

Each script runs atomically in Redis, on Redis server time (``TIME``), for
one bucket's two keys (``KEYS[1]`` the block, ``KEYS[2]`` the pace hash):
:data:`ACQUIRE_LUA` takes a permit or says how long to wait,
:data:`BLOCK_LUA` records a 429 and learns from it. :func:`acquire_args` and
:func:`block_args` build their arguments.

What the scripts learn, and from what:

- **The limit** (permits per window): the requests a lined-up window (one
  that opened once the service's previous window was over) got accepted.
- **The length**: from a lined-up window's first permit to the end of the
  block that its first 429 (of a request past the limit) gave: the time to
  that 429 plus its ``Retry-After``. Later 429s of the same window may only
  shorten it; a ``Retry-After`` of whole seconds (rounded up by the service)
  lengthens it only when it shows a window over a second longer. A 429 ends
  the window in course with its block. A window whose end is not known yet is closed by a pause of
  :data:`IDLE_MS` without a permit: what comes after the pause opens a new
  window that is not lined up, so a quiet spell is never taken for a part of
  a window.
- **Probes**: after clean windows that used every permit, one window offers
  a permit more; its 429 (the limit held) shows the window's length again,
  so a length learned too long shrinks at the next probe. Probes come after
  2 to :data:`PROBE_EVERY` such windows, and at least every
  :data:`PROBE_MAX_MS`.

**The line.** When a window's permits are taken, a caller gets a *turn* (a
number: first come, first served across the fleet) and comes back with it
when the next window opens (at the end of the grace, while permits are kept
for called turns that have not come yet). Each window first keeps a permit for
each called turn that the window before had none for, then calls the next
turns, up to its permits: a called turn takes a permit before any newcomer;
a newcomer takes one only when nobody waits and the window has a permit that
its called turns do not need; a turn not called yet waits for the next
window again. A called turn that does not come within the grace (a quarter
of the window, at least :data:`GRACE_MIN_MS`) leaves its permit to whoever
asks, and keeps its priority (so a caller that does not keep its turn is
served too). The turns of callers that gave up are passed over: a window
knows the lowest turn still waiting in the window before it. A window that
opens while everybody waits for a turn starts at its first permit.
:class:`LocalLines` spares Redis the calls whose answer a process already
knows.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable

__all__ = [
    "ACQUIRE_LUA",
    "BLOCK_LUA",
    "GRACE_MIN_MS",
    "IDLE_MS",
    "MAX_LINES",
    "MAX_WINDOW_MS",
    "PACE_KEEP_WINDOWS",
    "PACE_MAX_TTL_MS",
    "PACE_MIN_TTL_MS",
    "PROBE_EVERY",
    "PROBE_GAP_MS",
    "PROBE_MAX_MS",
    "LocalLines",
    "acquire_args",
    "block_args",
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
#: Longest time between two probes while windows stay clean and saturated, milliseconds.
PROBE_MAX_MS = 12_000
#: Past the limit in a window whose end is unknown, one request per this many milliseconds.
PROBE_GAP_MS = 50
#: A window whose end is not known yet ends after this long without a permit, milliseconds.
IDLE_MS = 250
#: Shortest time a window keeps a permit for each turn it called, milliseconds.
GRACE_MIN_MS = 100
#: Buckets whose line a process keeps in view at most (:class:`LocalLines`).
MAX_LINES = 1024

# The pace hash of a bucket (instants in Redis server milliseconds). The window:
#   ws  its start (its first permit)      we  its end, once known
#   g   permits handed out in it          r   429s answered to those permits
#   n   1 when a 429 came for a request sent without a permit: nothing is learned from it
#   tr  1 when it opened at a known end (a block's, or a learned length after the last
#       start), so it lines up with the service's window and can be learned from
#   p   1 when it offers one permit more than the limit (a probe)
#   lg  the last permit past the limit, while its end is not known
#   lp  its last permit                   wl  1 once a 429 of it taught the length
#   wo  when it opened (ws moves to its first permit when it opened without one: sh 1)
# What was learned:
#   L   the limit (requests per window)   q  1 while L is a first guess from a window
#                                            that may not have lined up
#   W   the length                        a  the margin added to W
#   d   1 after one window accepted fewer than L
#   H   the highest limit confirmed       c  clean saturated windows in a row
#   e   clean saturated windows between two probes              pt  the last probe's start
# The line (turns are numbers; a new line starts above any older one's):
#   tn  the last turn given               tc  the last turn called (turns up to it may send)
#   rv  permits of the window kept for the turns it called     rg  permits turns took in it

#: Shared by both scripts: the instant, finite numbers, and the TTL of a pace hash (KEEP,
#: MIN_TTL and MAX_TTL are their arguments).
_COMMON_LUA = """
local function num(v)
  local x = tonumber(v)
  if x and x == x and x ~= math.huge and x ~= -math.huge then return x end
  return nil  -- absent, or a value no script wrote
end
local function server_now(given)
  if given > 0 then return given end  -- a test's clock
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
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
local KEEP, every_max, gap, max_window = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local MIN_TTL, MAX_TTL = tonumber(ARGV[7]), tonumber(ARGV[8])
"""
    + _COMMON_LUA
    + """
local now = server_now(tonumber(ARGV[9]))
local deadline, turn = tonumber(ARGV[6]), tonumber(ARGV[10])
local idle, probe_max, grace_min = tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13])
local hint = tonumber(ARGV[14])
local blocked = num(redis.call('GET', KEYS[1]))
if blocked and blocked > now then return {blocked - now, 0, 0, now, turn} end  -- a turn outlives a block
if deadline > 0 and now > deadline then return {0, -2, 0, now, turn} end  -- landed after its caller gave up
if ARGV[1] ~= '1' then return {0, 0, 0, now, 0} end
local s = redis.call('HMGET', KEYS[2], 'ws', 'we', 'g', 'r', 'n', 'tr', 'p', 'lg', 'L', 'q', 'W', 'a', 'd',
                     'H', 'c', 'e', 'lp', 'pt', 'tn', 'tc', 'rv', 'rg', 'lo', 'cf', 'sh', 'wo')
local ws, we = num(s[1]), num(s[2])
local L, W = num(s[9]), num(s[11])
local p = num(s[7]) or 0
local tn, tc, lo = num(s[19]), num(s[20]), num(s[23])
if not tn or not tc or tc > tn then tn, tc, lo = now * 1000, now * 1000, nil end
if hint > tc and hint <= tn and (not lo or hint < lo) then
  lo = hint  -- the lowest turn the caller's process has waiting (it answers the others itself)
  redis.call('HSET', KEYS[2], 'lo', lo)
end
local function is_called(t) return t > 0 and (t <= tc or t > tn) end  -- (above tn: an older line's)
local function grace_of(span) return math.floor(math.min(math.max(grace_min, span / 4), span / 2)) end
local function waiting(t, end_at)
  -- A turn not called yet comes back when the permits kept for the called ones go to anyone,
  -- or when the next window opens; the lowest turn seen waiting in a window tells the next
  -- one which turns before it never came back.
  if not lo or t < lo then lo = t; redis.call('HSET', KEYS[2], 'lo', t) end
  return {math.max(1, math.ceil(end_at - now)), -1, 0, now, t, tc, (L or 0) + p}
end
local function new_turn(end_at)
  tn = tn + 1
  redis.call('HSET', KEYS[2], 'tn', tn, 'tc', tc)
  return waiting(tn, end_at)
end
local lp = num(s[17])
local paused = ws and not we and lp and now - lp > idle
if ws and (not we or now < we) and not paused then
  -- The window is open: hand out a permit unless its share is gone.
  local g = num(s[3]) or 0
  if L and we then
    -- Its end is known: the line decides who sends. The permits kept for the turns it called
    -- go to anyone once the grace is over (a called turn that does not come keeps its priority).
    -- (The grace counts from when the window opened, even when it starts at its first permit.)
    local lapse = (num(s[26]) or ws) + grace_of(W and W + (num(s[12]) or 0) or math.max(we - ws, 1))
    local late = now >= lapse
    local kept = 0
    if not late then kept = math.max(0, (num(s[21]) or 0) - (num(s[22]) or 0)) end
    local called = is_called(turn)
    if g >= L + p then
      if turn > 0 and called then
        redis.call('HINCRBY', KEYS[2], 'cf', 1)  -- the next window keeps it a permit before calling more
        return {we - now, -1, 0, now, turn, tc, L + p}
      end
      if turn > 0 then return waiting(turn, we) end
      return new_turn(we)
    elseif called then
      redis.call('HINCRBY', KEYS[2], 'rg', 1)
    elseif not late and (turn > 0 or tn > tc or g + kept >= L + p) then
      -- Its permits are kept for the called turns, or others wait before this caller: it comes
      -- back at the end of the grace (with its turn), when the permits of the called turns that
      -- did not come go to whoever asks (a caller that does not keep its turn is served then),
      -- or at the next window when none is kept.
      local back = we
      if kept > 0 then back = lapse end
      if turn > 0 then return waiting(turn, back) end
      return new_turn(back)
    end
  elseif L and g >= L + p then
    -- Its end is not known yet: past the limit, one request per gap goes to find it.
    local last = num(s[8]) or 0
    if now - last < gap then return {gap - (now - last), -1, 0, now, turn} end
    redis.call('HSET', KEYS[2], 'lg', now)
  end
  if not we and s[6] == '1' and now - ws > max_window then
    redis.call('HSET', KEYS[2], 'tr', 0)  -- open longer than any window learned: no longer lined up
  end
  if g == 0 and s[25] == '1' and W then
    -- Its first permit: the window opened while everybody waited for a turn, and starts now.
    ws, we = now, now + W + (num(s[12]) or 0)
    redis.call('HSET', KEYS[2], 'ws', ws, 'we', we, 'sh', 0)
  end
  g = redis.call('HINCRBY', KEYS[2], 'g', 1)
  redis.call('HSET', KEYS[2], 'lp', now)
  redis.call('PEXPIRE', KEYS[2], pace_ttl(now, ws, we, W, num(s[12])))
  return {0, ws, g, now, 0}
end
-- No window, or it is over: learn from it, then open the next one.
local q, d = num(s[10]) or 0, num(s[13]) or 0
local H, c, e = num(s[14]) or 0, num(s[15]) or 0, num(s[16]) or 2
local pt = num(s[18]) or now
local base = 5 + math.floor((W or 0) / 100)
local a = math.max(base, num(s[12]) or 0)
local probe, trusted = 0, 0
if paused then
  -- Its end was never known and nothing was sent for a while: the service's window may have
  -- ended in the pause and another begun. Nothing is learned from it, nor from the next one.
elseif ws then
  trusted = 1
  local g, r = num(s[3]) or 0, num(s[4]) or 0
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
    if c >= every or now - pt >= probe_max then probe, c, pt = 1, 0, now end
  end
end
-- The new window keeps a permit for each called turn the last one had no permit for, then calls
-- the next turns of the line: the turns before the lowest one seen waiting in the last window
-- never came back (their callers gave up), so they are passed over.
local cap = L and L + probe
local rv = 0
if cap then
  rv = math.min(num(s[24]) or 0, cap)
  if lo and lo - 1 > tc then tc = lo - 1 end
  local calls = math.max(0, math.min(cap - rv, tn - tc))
  tc, rv = tc + calls, rv + calls
end
lo = nil
redis.call('HSET', KEYS[2], 'ws', now, 'g', 0, 'r', 0, 'n', 0, 'tr', trusted, 'p', probe, 'q', q, 'a', a, 'd', d,
           'H', H, 'c', c, 'e', e, 'pt', pt, 'lp', now, 'wl', 0, 'tn', tn, 'tc', tc, 'rv', rv, 'rg', 0, 'cf', 0,
           'sh', 0, 'wo', now)
redis.call('HDEL', KEYS[2], 'lg', 'lo')
if L then redis.call('HSET', KEYS[2], 'L', L) end
local new_we = nil
if W then
  new_we = now + W + a
  redis.call('HSET', KEYS[2], 'we', new_we)
else
  redis.call('HDEL', KEYS[2], 'we')
end
redis.call('PEXPIRE', KEYS[2], pace_ttl(now, now, new_we, W, a))
-- Its first permit: a called turn's, or a newcomer's when the called leave one over.
p = probe
if cap and new_we then
  -- (Without a permit now, the window starts at its first permit.)
  local lapse = now + grace_of(W + a)
  if turn > 0 and not is_called(turn) then
    redis.call('HSET', KEYS[2], 'sh', 1)
    return waiting(turn, new_we)
  end
  if turn > 0 then
    redis.call('HSET', KEYS[2], 'rg', 1)
  elseif tn > tc or rv >= cap then
    redis.call('HSET', KEYS[2], 'sh', 1)
    return new_turn(lapse)
  end
end
redis.call('HSET', KEYS[2], 'g', 1)
return {0, now, 1, now, 0}
"""
)

BLOCK_LUA = (
    """
local KEEP, max_window = tonumber(ARGV[3]), tonumber(ARGV[4])
local MIN_TTL, MAX_TTL = tonumber(ARGV[8]), tonumber(ARGV[9])
"""
    + _COMMON_LUA
    + """
local now = server_now(tonumber(ARGV[10]))
-- The block counts from when the 429 was seen (ARGV[7], Redis time; 0: unknown, now), not from
-- when this write lands: a write delayed by a stall blocks no longer than the service said.
local at = tonumber(ARGV[7])
if at <= 0 or at > now then at = now end
local untl = at + tonumber(ARGV[1])
if untl <= now then return 0 end  -- over already: a late write changes nothing
local current = num(redis.call('GET', KEYS[1]))
if current and current >= untl then
  untl = current
else
  redis.call('SET', KEYS[1], untl, 'PX', untl - now)
end
if ARGV[2] ~= '1' then return untl - now end
local idx, wid = tonumber(ARGV[5]), tonumber(ARGV[6])
local s = redis.call('HMGET', KEYS[2], 'ws', 'we', 'tr', 'W', 'L', 'q', 'a', 'p', 'wl')
local ws, we = num(s[1]), num(s[2])
local W = num(s[4])
if ws and (not we or we > now) then
  if (wid ~= 0 and wid ~= ws) or (wid == 0 and at < ws) then
    -- A 429 of an earlier window, written late: the current window is none of its business.
    return untl - now
  end
  -- The window ends with the block: the service's window ends then (sooner than this one was
  -- thought to, when its length was learned too long).
  if we ~= untl then redis.call('HSET', KEYS[2], 'we', untl, 'sh', 0); we = untl end
  if wid == 0 then
    redis.call('HSET', KEYS[2], 'n', 1)
  else
    redis.call('HINCRBY', KEYS[2], 'r', 1)
    -- The window's length is what the service says: from the first permit of a lined-up
    -- window to the end of the block of its first 429 past the limit (later 429s of the
    -- window may only shorten it), each window, both ways. A Retry-After of whole seconds
    -- was rounded up: it says the window is shorter than seen, longer than seen less a second,
    -- so a length within that stays.
    local L = num(s[5])
    local seen = untl - ws
    local whole = tonumber(ARGV[1]) % 1000 == 0
    -- (In a probe window any refusal will do: requests reach the service out of order.)
    if s[3] == '1' and (not L or s[6] == '1' or idx > L or s[8] == '1') and seen <= max_window
        and (not W or seen < W or (s[9] ~= '1' and (not whole or seen - 1000 > W))) then
      if W and seen < W then
        redis.call('HSET', KEYS[2], 'a', 5 + math.floor(seen / 100))  -- a margin for the new length
      end
      W = seen
      redis.call('HSET', KEYS[2], 'W', W, 'wl', 1)
    end
  end
else
  -- No window open: this block opens one (not lined up) that ends with it.
  redis.call('HSET', KEYS[2], 'ws', now, 'we', untl, 'g', 0, 'r', 0, 'n', 1, 'tr', 0, 'p', 0, 'wl', 0,
             'rv', 0, 'rg', 0, 'wo', now)
  ws, we = now, untl
end
redis.call('PEXPIRE', KEYS[2], pace_ttl(now, ws, we, W, num(s[7])))
return untl - now
"""
)


def acquire_args(*, pace: bool, deadline_ms: int, turn: int | None, hint: int = 0, now_ms: int = 0) -> list[int]:
    """The arguments of :data:`ACQUIRE_LUA`.

    Args:
        pace: Share the pace (False: blocks only).
        deadline_ms: Redis time after which the call has given up, ms; 0 for none.
        turn: The caller's turn in the bucket's line, or None.
        hint: The lowest turn this process has waiting (:meth:`LocalLines.lowest`), 0 for none.
        now_ms: Redis time to use instead of ``TIME``, ms (tests); 0 for ``TIME``.
    """
    return [1 if pace else 0, PACE_KEEP_WINDOWS, PROBE_EVERY, PROBE_GAP_MS, MAX_WINDOW_MS, deadline_ms,
            PACE_MIN_TTL_MS, PACE_MAX_TTL_MS, now_ms, turn or 0, IDLE_MS, PROBE_MAX_MS, GRACE_MIN_MS, hint]


def block_args(*, delay_ms: int, pace: bool, number: int, window: int, seen_at_ms: int, now_ms: int = 0) -> list[int]:
    """The arguments of :data:`BLOCK_LUA`.

    Args:
        delay_ms: The block, ms from ``seen_at_ms``.
        pace: Share the pace (False: blocks only).
        number: The permit's number in its window (0: a request sent without a permit).
        window: The start of the permit's window (0: none).
        seen_at_ms: Redis time when the 429 was seen, ms; 0 for now.
        now_ms: Redis time to use instead of ``TIME``, ms (tests); 0 for ``TIME``.
    """
    return [delay_ms, 1 if pace else 0, PACE_KEEP_WINDOWS, MAX_WINDOW_MS, number, window, seen_at_ms,
            PACE_MIN_TTL_MS, PACE_MAX_TTL_MS, now_ms]


class _Line:
    """This process's view of one bucket's line (see :class:`LocalLines`)."""

    __slots__ = ("asking", "called", "open_at", "per_window", "until", "waiting")

    def __init__(self) -> None:
        self.open_at = 0.0  # until when a request without a turn waits, no turn given (clock, seconds)
        self.called = 0  # the last turn called, as Redis said
        self.per_window = 0  # the turns a window calls (its permits), as Redis said
        self.until = 0.0  # until when a turn after it is not called (clock, seconds)
        self.asking = 0.0  # until when one of this process's turns asks Redis for the next window (clock, s)
        self.waiting: dict[int, float] = {}  # turn -> when it comes back (clock, s)


class LocalLines:
    """What this process knows of its buckets' lines, so that Redis is not asked in vain.

    While Redis has told a request without a turn to wait without giving it
    one (a window whose end is not known yet lets one request through per
    gap), the others of this process wait as long without asking. Once Redis
    has said, in a window, up to which turn it called and until
    when the others wait, a turn after that one asks again only when that
    wait is over: this process answers it itself. When the wait is over, one
    turn asks Redis for the next window while the others wait for its answer
    (at most ``ask`` seconds): about one round trip per window and process,
    plus one per called turn, not one per waiting call. It also keeps the
    turns it has waiting, so that its next call to Redis says the lowest one
    (Redis passes over the turns of callers that gave up, and needs to know
    which are still waiting). Thread-safe; bounded (:data:`MAX_LINES`
    buckets, the least recently used forgotten).

    Args:
        clock: This process's monotonic time, seconds.
        ask: The longest wait for another turn's answer, seconds (the bound of a Redis call).
    """

    def __init__(self, clock: Callable[[], float], ask: float) -> None:
        self._clock = clock
        self._ask = ask
        self._lines_lock = threading.Lock()  # guards _lines
        self._lines: collections.OrderedDict[str, _Line] = collections.OrderedDict()

    def wait(self, key: str, turn: int | None) -> float | None:
        """Seconds ``turn`` (None: a request without one) still waits for bucket ``key`` as far as
        this process knows, or None to ask Redis."""
        now = self._clock()
        with self._lines_lock:
            line = self._lines.get(key)
            if line is None:
                return None
            if turn is None:
                return line.open_at - now if now < line.open_at else None
            if turn <= line.called:
                return None
            if now >= line.until:
                # The next window: the turns it will likely call ask at once; of the others, one
                # asks and the rest wait for its answer.
                if turn <= line.called + line.per_window:
                    return None
                if now < line.asking:
                    return line.asking - now
                line.asking = now + self._ask
                return None
            line.waiting[turn] = line.until
            return line.until - now

    def asked(self, key: str) -> None:
        """A call to Redis for bucket ``key`` is over (answered or not): another turn may ask."""
        with self._lines_lock:
            line = self._lines.get(key)
            if line is not None:
                line.asking = 0.0

    def lowest(self, key: str) -> int:
        """The lowest turn this process has waiting for bucket ``key``, 0 for none.

        A turn counts while it is told to come back later, and a moment after (the turns woken
        at the same instant as the caller are asking again too); then it is forgotten: its
        caller gave up.
        """
        now = self._clock()
        with self._lines_lock:
            line = self._lines.get(key)
            if line is None:
                return 0
            for turn in [t for t, back in line.waiting.items() if back + self._ask / 2 <= now]:
                del line.waiting[turn]
            return min(line.waiting, default=0)

    def answered(self, key: str, turn: int | None, wait: float, called: int, per_window: int = 0) -> None:
        """Redis answered ``turn`` (None: it gave none): a wait of ``wait`` seconds (0: a permit), with
        turns up to ``called`` called, ``per_window`` turns a window."""
        now = self._clock()
        with self._lines_lock:
            line = self._lines.get(key)
            if line is None:
                if wait <= 0:
                    return
                line = self._lines[key] = _Line()
                while len(self._lines) > MAX_LINES:
                    self._lines.popitem(last=False)
            self._lines.move_to_end(key)
            if turn is None:
                if wait > 0:
                    line.open_at = now + wait
            else:
                if wait > 0 and turn > called:
                    line.waiting[turn] = now + wait
                    if called > line.called or now >= line.until:
                        line.until = now + wait  # a new window
                    else:
                        line.until = max(line.until, now + wait)
                    line.called, line.per_window = called, per_window
                else:
                    line.waiting.pop(turn, None)
            if not line.waiting and now >= max(line.until, line.open_at):
                del self._lines[key]
