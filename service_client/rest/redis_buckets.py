"""A rate-limit bucket table shared through Redis by every process of a bot.

:class:`RedisBucketStore` is a :class:`~service_client.rest.buckets.BucketStore`
for bots that run as several processes (one per group of servers, workers
behind a queue). It needs the ``redis`` extra: ``pip install
'service_client[redis]'``.

What it shares, per bot (``scope``) and bucket key:

- **The block.** A 429 seen by any process blocks the bucket in every process
  until its ``Retry-After`` has passed, including processes that have not sent
  on it yet. The blocked-until instant only ever moves later (one Lua script
  compares and sets it atomically) and the key expires with the block.
- **The pace.** A block alone is not enough: every process would send again
  the moment it lifts, and all but a few of those requests would earn another
  429. So the store also learns the shape of the bucket's window from what the
  429s show, and shares it. When a window that opened at a known end (a block's
  end, or a learned length) is over, the number of its requests the service
  accepted is the bucket's limit; the time from its first request to the end of
  the block its 429 gave is (at most) the window's length. From then on each
  window hands out that many permits to the whole fleet; a request that finds
  them taken waits for the next window instead of being sent. A window that
  accepts fewer than the limit once widens the margin added to the length (it
  may have opened before the service's window ended); twice in a row, it lowers
  the limit. Now and then, after windows that used every permit with no 429,
  one permit more is offered, so a limit learned too low recovers.

Every instant is Redis server time (``TIME`` inside the scripts); processes
only ever see delays, so their clocks may disagree.

Every Redis call is bounded by ``timeout`` (50 ms by default), and Redis
failing (down, slow, refusing connections) never stops the bot. After a
failed call, requests wait 0.1 s at a time while one of them tries Redis
again, so a short stall costs a short delay and no 429s. When
Redis has failed for 0.5 s, the store logs one warning and answers from a
table of its own process (the blocks this process recorded; no pace): the bot
keeps serving as a single process would. It tries Redis again after 0.1 s,
then at doubling intervals up to ``retry_interval``, one request paying for
each try, and logs when Redis answers again.
"""

from __future__ import annotations

import enum
import logging
import math
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .buckets import MemoryBucketStore

if TYPE_CHECKING:  # the redis package is an optional extra, imported when a store is built
    import redis as redis_module
    from redis.commands.core import Script

__all__ = ["DEFAULT_REDIS_TIMEOUT_S", "DEFAULT_RETRY_INTERVAL_S", "RedisBucketStore"]

_log = logging.getLogger("service_client.rest")

#: Bound of every Redis call (connect, and each reply), seconds.
DEFAULT_REDIS_TIMEOUT_S = 0.05
#: While Redis is down, the longest pause before one request tries it again, seconds.
DEFAULT_RETRY_INTERVAL_S = 1.0
#: After a failed call, how long requests wait before Redis is tried again, seconds; while
#: down, the pause starts here and doubles after each failed try up to the retry interval.
_FIRST_RETRY_S = 0.1
#: How long Redis may fail before it counts as down and the process's own table answers, seconds.
_SUSPECT_S = 0.5
#: How long a bucket's learned pace is kept after its last use, milliseconds.
_PACE_TTL_MS = 600_000
#: Longest window length the store learns, milliseconds (longer: blocks only).
_MAX_WINDOW_MS = 120_000
#: Clean saturated windows in a row before one more permit is offered (at most).
_PROBE_EVERY = 16
#: Past the limit in a window whose end is unknown, one request per this many milliseconds.
_PROBE_GAP_MS = 50

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
#   W   the length (the shortest seen from a window's start to the end of its block)
#   a   the margin added to W             d  1 after one window accepted fewer than L
#   H   the highest limit confirmed       c  clean saturated windows in a row
#   e   clean saturated windows between two probes
_ACQUIRE_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local blocked = tonumber(redis.call('GET', KEYS[1]))
if blocked and blocked > now then return {blocked - now, 0, 0} end
if ARGV[1] ~= '1' then return {0, 0, 0} end
local ttl, every_max, gap, max_window = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local s = redis.call('HMGET', KEYS[2], 'ws', 'we', 'g', 'r', 'n', 'tr', 'p', 'lg',
                     'L', 'q', 'W', 'a', 'd', 'H', 'c', 'e')
local ws, we = tonumber(s[1]), tonumber(s[2])
local L, W = tonumber(s[9]), tonumber(s[11])
local p = tonumber(s[7]) or 0
if ws and (not we or now < we) then
  -- The window is open: hand out a permit unless its share is gone.
  local g = tonumber(s[3]) or 0
  if L and g >= L + p then
    if we then return {we - now, 0, 0} end
    -- Its end is not known yet: past the limit, one request per gap goes to find it.
    local last = tonumber(s[8]) or 0
    if now - last < gap then return {gap - (now - last), 0, 0} end
    redis.call('HSET', KEYS[2], 'lg', now)
  end
  if not we and s[6] == '1' and now - ws > max_window then
    redis.call('HSET', KEYS[2], 'tr', 0)  -- open longer than any window learned: no longer lined up
  end
  g = redis.call('HINCRBY', KEYS[2], 'g', 1)
  redis.call('PEXPIRE', KEYS[2], ttl)
  return {0, ws, g}
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
if W then
  redis.call('HSET', KEYS[2], 'we', now + W + a)
else
  redis.call('HDEL', KEYS[2], 'we')
end
redis.call('PEXPIRE', KEYS[2], ttl)
return {0, now, 1}
"""

_BLOCK_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local delay = tonumber(ARGV[1])
local untl = now + delay
local current = tonumber(redis.call('GET', KEYS[1]))
if current and current >= untl then
  untl = current
elseif delay > 0 then
  redis.call('SET', KEYS[1], untl, 'PX', delay)
end
if ARGV[2] ~= '1' then return untl - now end
local ttl, max_window = tonumber(ARGV[3]), tonumber(ARGV[4])
local idx, wid = tonumber(ARGV[5]), tonumber(ARGV[6])
local s = redis.call('HMGET', KEYS[2], 'ws', 'we', 'tr', 'W', 'L', 'q')
local ws, we = tonumber(s[1]), tonumber(s[2])
if ws and (not we or we > now) then
  -- The window ends with the block.
  if not we or we < untl then redis.call('HSET', KEYS[2], 'we', untl) end
  if wid == 0 then
    redis.call('HSET', KEYS[2], 'n', 1)
  elseif wid == ws then
    redis.call('HINCRBY', KEYS[2], 'r', 1)
    -- Its length is at most the time from its start to the end of the block, when it
    -- lined up with the service's window and the refused request was one past the limit.
    local L, W = tonumber(s[5]), tonumber(s[4])
    local seen = untl - ws
    if s[3] == '1' and (not L or s[6] == '1' or idx > L) and seen <= max_window
       and (not W or (seen < W and seen * 2 >= W)) then
      redis.call('HSET', KEYS[2], 'W', seen)
    end
  end
else
  -- No window open: this block opens one (not lined up) that ends with it.
  redis.call('HSET', KEYS[2], 'ws', now, 'we', untl, 'g', 0, 'r', 0, 'n', 1, 'tr', 0, 'p', 0)
end
redis.call('PEXPIRE', KEYS[2], ttl)
return untl - now
"""


def _import_redis() -> Any:
    try:
        import redis
    except ImportError:
        raise ImportError(
            "RedisBucketStore needs the redis package: pip install 'service_client[redis]'"
        ) from None
    return redis


class _Health(enum.Enum):
    UP = "up"  # every call goes to Redis
    SUSPECT = "suspect"  # a call just failed: requests wait while Redis is tried again
    DOWN = "down"  # Redis failed for longer: this process's table answers


class RedisBucketStore:
    """A :class:`~service_client.rest.buckets.BucketStore` on Redis, shared by processes.

    Thread-safe; one store may serve several clients, of one bot or of
    several. Pass it as ``Client(bucket_store=...)``. See the module
    docstring for what it shares and how it behaves when Redis fails.

    Keys (every one with an expiry)::

        service_client:[<namespace>:]{<scope>/<bucket>}:block   blocked-until, ms; expires with the block
        service_client:[<namespace>:]{<scope>/<bucket>}:pace    the learned window; kept 10 min after last use

    ``<scope>`` is a one-way hash of the bot token (two bots never share a
    bucket; the token never reaches Redis) and ``<bucket>`` a bucket key such
    as ``GET:servers/S1``. The braces make both keys of a bucket one Redis
    Cluster hash slot.

    Args:
        redis: A ``redis.Redis`` client, or a URL such as
            ``"redis://127.0.0.1:6379/0"`` (``rediss://`` and ``unix://``
            too). From a client, the store takes the connection settings
            (host, port, database, credentials, TLS) and opens its own pool
            with its own timeout and no retries; the client itself is left
            untouched.
        namespace: An extra key prefix, to keep apart deployments that share
            one Redis (``"staging"``), or None.
        timeout: Bound of each connect and each reply, seconds (default
            0.05). A call that runs over counts as Redis failing.
        retry_interval: While Redis is down, the longest pause between two
            attempts to use it again, seconds (default 1; the pauses start at
            0.1 s and double).
        pace: Share the learned window (permits per window) as well as the
            blocks. With False only blocks are shared.
        clock: This process's monotonic time, seconds (tests inject it).

    Raises:
        ImportError: The ``redis`` package is not installed.
        TypeError: ``redis`` is neither a ``redis.Redis`` nor a str, or
            another argument has the wrong type.
        ValueError: The URL is not a Redis URL; ``namespace`` is empty or
            holds braces, spaces or control characters; ``timeout`` or
            ``retry_interval`` is not a positive finite number.
    """

    def __init__(
        self,
        redis: redis_module.Redis | str,
        *,
        namespace: str | None = None,
        timeout: float = DEFAULT_REDIS_TIMEOUT_S,
        retry_interval: float = DEFAULT_RETRY_INTERVAL_S,
        pace: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Build the store; nothing is sent to Redis until the first request."""
        mod = _import_redis()
        for arg, value in (("timeout", timeout), ("retry_interval", retry_interval)):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{arg} must be a number of seconds, not {type(value).__name__}")
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"{arg} must be a positive finite number of seconds, got {value!r}")
        if namespace is not None:
            if not isinstance(namespace, str):
                raise TypeError(f"namespace must be a str or None, not {type(namespace).__name__}")
            if not namespace or any(ch in "{} " or not ch.isprintable() for ch in namespace):
                raise ValueError("namespace must be a non-empty str without braces, spaces or control characters")
        if not isinstance(pace, bool):
            raise TypeError(f"pace must be a bool, not {type(pace).__name__}")

        from redis.backoff import NoBackoff
        from redis.retry import Retry

        settings: dict[str, Any] = {
            "socket_timeout": float(timeout),
            "socket_connect_timeout": float(timeout),
            "retry": Retry(NoBackoff(), 0),
        }
        if isinstance(redis, str):
            client = mod.Redis.from_url(redis, **settings)
        elif isinstance(redis, mod.Redis):
            pool = redis.connection_pool
            kwargs = {**pool.connection_kwargs, **settings}
            client = mod.Redis(connection_pool=mod.ConnectionPool(connection_class=pool.connection_class, **kwargs))
        else:
            raise TypeError(f"redis must be a redis.Redis client or a URL str, not {type(redis).__name__}")

        self._errors: tuple[type[BaseException], ...] = (mod.RedisError, OSError)
        self._client = client
        self._acquire_script: Script = client.register_script(_ACQUIRE_LUA)
        self._block_script: Script = client.register_script(_BLOCK_LUA)
        self._namespace = namespace
        #: The prefix of every key this store writes.
        self.key_prefix = "service_client:" if namespace is None else f"service_client:{namespace}:"
        self._retry_interval = float(retry_interval)
        self._pace = "1" if pace else "0"
        self._clock = clock
        # This process's own table: a copy of the waits Redis answered (so
        # requests parked on them cost no round trip) and every block this
        # process recorded; it alone answers while Redis is down. Keys:
        # "<scope>/<bucket>".
        self._local = MemoryBucketStore(clock=clock)
        # The permit each worker thread took last, to match it with a 429.
        self._permits = threading.local()
        self._health_lock = threading.Lock()  # guards the four fields below
        self._health = _Health.UP
        self._failing_since = 0.0
        self._next_try = 0.0
        self._failed_tries = 0

    # ------------------------------------------------------------------ BucketStore

    def wait_time(self, key: str, *, scope: str = "") -> float:
        """Seconds ``key`` is known to be blocked, from this process's table only (no round trip).

        See :meth:`~service_client.rest.buckets.BucketStore.wait_time`. A
        block another process recorded shows up at :meth:`acquire`.
        """
        return self._local.wait_time(f"{scope}/{key}")

    def acquire(self, key: str, *, scope: str = "") -> float:
        """Take one of the bucket's permits in Redis, or say how long to wait.

        See :meth:`~service_client.rest.buckets.BucketStore.acquire`. One
        round trip (one Lua script), unless this process already knows the
        bucket is blocked. When a call fails, requests wait (0.1 s at a
        time) while Redis is tried again; after 0.5 s of failures Redis
        counts as down and this process's table answers: the blocks it
        recorded itself, no pace.

        Returns:
            ``0.0`` to send now (a permit is counted), else seconds to wait.
        """
        local_key = f"{scope}/{key}"
        wait = self._local.wait_time(local_key)
        if wait > 0:
            return wait
        reply, hold = self._run(
            self._acquire_script,
            self._keys(scope, key),
            [self._pace, _PACE_TTL_MS, _PROBE_EVERY, _PROBE_GAP_MS, _MAX_WINDOW_MS],
        )
        if reply is None:
            self._permits.last = None  # a request sent now carries no permit
            return hold
        wait_ms, window, number = (int(x) for x in reply)
        if wait_ms > 0:
            wait = wait_ms / 1000.0
            self._local.block(local_key, wait)
            return wait
        self._permits.last = (scope, key, window, number)
        return 0.0

    def block(self, key: str, delay: float, *, scope: str = "") -> None:
        """Block ``key`` in every process for ``delay`` seconds (never shortening a block).

        See :meth:`~service_client.rest.buckets.BucketStore.block`. The block
        is recorded in this process's table first, then in Redis (server
        time), where it also teaches the bucket's pace. A 429 answered to a
        request is matched with the permit the same thread took for it.
        """
        delay = max(0.0, float(delay)) if math.isfinite(delay) else 0.0
        local_key = f"{scope}/{key}"
        self._local.block(local_key, delay)
        permit = getattr(self._permits, "last", None)
        self._permits.last = None
        window = number = 0
        if permit is not None and permit[0] == scope and permit[1] == key:
            window, number = permit[2], permit[3]
        reply, _ = self._run(
            self._block_script,
            self._keys(scope, key),
            [math.ceil(delay * 1000.0), self._pace, _PACE_TTL_MS, _MAX_WINDOW_MS, number, window],
        )
        if reply is not None and int(reply) / 1000.0 > delay:
            self._local.block(local_key, int(reply) / 1000.0)

    # ------------------------------------------------------------------ the rest

    @property
    def namespace(self) -> str | None:
        """The namespace given at construction, or None."""
        return self._namespace

    @property
    def available(self) -> bool:
        """True while Redis answers; False from a failed call until one succeeds again."""
        return self._health is _Health.UP

    def close(self) -> None:
        """Close the store's Redis connections. A client does not close a store it was given."""
        self._client.close()

    def __repr__(self) -> str:
        return (
            f"RedisBucketStore(namespace={self._namespace!r}, redis={self._health.value}, "
            f"local={len(self._local)})"
        )

    def _keys(self, scope: str, key: str) -> list[str]:
        base = f"{self.key_prefix}{{{scope}/{key}}}"
        return [base + ":block", base + ":pace"]

    def _run(self, script: Script, keys: list[str], args: list[Any]) -> tuple[Any, float]:
        """Run a script within the timeout.

        Returns:
            ``(reply, 0.0)``; or ``(None, hold)`` when Redis did not answer:
            the caller waits ``hold`` seconds (Redis is being tried again) or,
            with ``hold`` 0.0, answers from this process's table.
        """
        if self._health is not _Health.UP:
            hold = self._may_try()
            if hold is not None:
                return None, hold
        try:
            reply = script(keys=keys, args=args)
        except self._errors as exc:
            return None, self._failed(exc)
        if self._health is not _Health.UP:
            self._answered()
        return reply, 0.0

    def _may_try(self) -> float | None:
        """None: this caller tries Redis. Else the caller's hold (0.0: answer locally)."""
        now = self._clock()
        with self._health_lock:
            if self._health is _Health.UP:
                return None
            if now >= self._next_try:  # this caller tries; the others keep waiting meanwhile
                self._next_try = now + _FIRST_RETRY_S  # the try ends (within the timeout) before then
                return None
            if self._health is _Health.SUSPECT:
                return max(0.001, self._next_try - now)
            return 0.0

    def _failed(self, exc: BaseException) -> float:
        """Record a failed call; returns the caller's hold, as :meth:`_may_try`."""
        now = self._clock()
        with self._health_lock:
            health = self._health
            if health is _Health.UP:
                self._health = _Health.SUSPECT
                self._failing_since = now
            elif health is _Health.SUSPECT and now - self._failing_since >= _SUSPECT_S:
                self._health = _Health.DOWN
                self._failed_tries = 0
            elif health is _Health.DOWN:
                self._failed_tries += 1
            if self._health is _Health.SUSPECT:
                self._next_try = now + _FIRST_RETRY_S
                return _FIRST_RETRY_S
            pause = min(self._retry_interval, _FIRST_RETRY_S * 2.0 ** min(self._failed_tries, 30))
            self._next_try = now + pause
            went_down = health is not _Health.DOWN
        if went_down:
            _log.warning(
                "Redis bucket store failed for %g s (%s: %s); this process keeps its own bucket table "
                "and keeps serving, trying Redis again every %g s at most",
                _SUSPECT_S,
                type(exc).__name__,
                exc,
                self._retry_interval,
            )
        else:
            _log.debug("Redis bucket store still failing (%s)", type(exc).__name__)
        return 0.0

    def _answered(self) -> None:
        with self._health_lock:
            was_down = self._health is _Health.DOWN
            self._health = _Health.UP
        if was_down:
            _log.info("Redis bucket store answers again; buckets are shared again")
