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
  one permit more is offered, so a limit learned too low recovers, and a
  length learned too long shrinks. A pause with nothing to send is never
  learned as a part of a window (:mod:`.redis_pace`).
- **The line.** A request that finds the window's permits taken gets a turn,
  and the waiters of a bucket are served in turn, first come, first served
  across the fleet (the REST session passes the turn of a
  :class:`~service_client.rest.buckets.PaceWait` back to :meth:`acquire`).

Every instant is Redis server time (``TIME`` inside the scripts); processes
only ever see delays, so their clocks may disagree.

Writes carry the instant they were decided: a block counts from when its 429
was seen (in Redis time, from the offset between this process's clock and
the latest reply), so a write that a stall delays ends when the service
said, not later; a 429 of an earlier window leaves the current window alone;
an acquire that lands after its caller gave up counts nothing. The learned
length follows each 429 of a lined-up window, both ways. The pace hash of a
bucket expires a few of its windows after its last use.

Every Redis call is bounded by ``timeout`` (50 ms by default; a timeout in
the URL or client can only lower it), and Redis failing (down, slow, partly
slow, refusing connections) never stops the bot: it is a circuit breaker.
After a failed call this process answers from a table of its own (the blocks
it recorded; no pace) for a cool-down, then one request probes Redis while
the others stay local; the cool-down starts at 0.1 s and doubles (redis-py's
``ExponentialBackoff``) with each failed probe, or failure soon after
closing, up to ``retry_interval``. One blip logs nothing above DEBUG; a run
of failures logs one WARNING, and one INFO when Redis answers again. A Redis
never reached since the store was built (a wrong password, an unreachable
URL) logs one ERROR naming the URL with its password hidden; with
``strict=True`` the store checks at construction and raises instead.
Logger: ``service_client.rest.redis``.

An error about one bucket's keys is not an outage: when Redis refuses a
script because of what that bucket's keys hold (a key of another type, a
field that is not a number), that bucket alone runs on this process's table
(logged once as a WARNING naming the key, tried again every 30 s) and every
other bucket is still shared. Errors about the whole server (read-only,
out of memory, no permission, not enough replicas) open the circuit.

The password is held as a :class:`~service_client._secret.Secret` and given to
redis-py through a credential provider, so neither the store, its pool nor
its connections keep it in the clear. :meth:`RedisBucketStore.close` closes
the pool the store made, every connection included.

When a window's permits are taken, :meth:`RedisBucketStore.acquire` answers a
:class:`~service_client.rest.buckets.PaceWait`: the REST session waits for a
pace slot only within the call's own timeout, then raises
:class:`~service_client.errors.ServiceTimeoutError`.

Known limits: a window that got shorter is found only at the next probe (one
permit past the limit, after 2 to 16 clean windows and at least every 12 s);
with whole-second ``Retry-After`` values a sub-second window cannot be
learned (it reads as a window of a second or more).
"""

from __future__ import annotations

import collections
import logging
import math
import re
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._secret import REDACTED_WEBHOOK_TOKEN, Secret
from ..errors import ServiceError
from .buckets import MemoryBucketStore, PaceWait
from .redis_circuit import Circuit, Health
from .redis_pace import ACQUIRE_LUA, BLOCK_LUA, LocalLines, acquire_args, block_args
from .redis_pools import copied_options, own_pool, sentinel_service

if TYPE_CHECKING:  # the redis package is an optional extra, imported when a store is built
    import redis as redis_module
    from redis.commands.core import Script

__all__ = ["DEFAULT_REDIS_TIMEOUT_S", "DEFAULT_RETRY_INTERVAL_S", "RedisBucketStore"]

_log = logging.getLogger("service_client.rest.redis")

#: Bound of every Redis call (connect, and each reply), seconds.
DEFAULT_REDIS_TIMEOUT_S = 0.05
#: While Redis is down, the longest cool-down before one request probes it again, seconds.
DEFAULT_RETRY_INTERVAL_S = 1.0
def _import_redis() -> Any:
    try:
        import redis
    except ImportError:
        raise ImportError(
            "RedisBucketStore needs the redis package: pip install 'service_client[redis]'"
        ) from None
    return redis


#: How long a bucket whose keys its scripts cannot use stays on this process's table before it
#: tries Redis again, seconds.
_UNUSABLE_RETRY_S = 30.0
#: Buckets kept on this process's table at most for that reason (the oldest goes back to Redis).
_MAX_UNUSABLE = 1024
#: Error codes that are about the whole server, even inside a script's error text.
_SERVER_WIDE_RE = re.compile(r"\b(?:OOM|MISCONF|READONLY|NOREPLICAS|MASTERDOWN|BUSY|LOADING|NOPERM|CLUSTERDOWN|TRYAGAIN)\b")


class _Credentials:
    """The credentials of a store's own pool, for redis-py (its ``credential_provider``).

    The password is held as a :class:`~service_client._secret.Secret`: redis-py
    asks for it at each connect (:meth:`get_credentials`) and keeps it in no
    attribute, so neither the store, its pool nor its connections hold it in
    the clear (``vars()``, a debugger, a walk of the objects a model reaches).
    Thread-safe (read-only).
    """

    __slots__ = ("_password", "_username")

    def __init__(self, username: str | None, password: Secret) -> None:
        self._username = username
        self._password = password

    def get_credentials(self) -> tuple[str] | tuple[str, str]:
        """``(username, password)``, or ``(password,)`` without a username: what redis-py sends in AUTH."""
        password = self._password.get() or ""
        return (self._username, password) if self._username else (password,)

    def __repr__(self) -> str:
        return f"_Credentials(username={self._username!r}, password={self._password!r})"


def _parsed_url(mod: Any, url: str) -> dict[str, Any] | None:
    """The connection options redis-py reads from ``url``, or None when it refuses it.

    None rather than redis-py's error: its text may quote a part of the password, and an
    exception raised outside the ``except`` block chains nothing. Also None when the URL
    holds an ``@`` that redis-py did not read as the end of a user and password (a
    password with an unencoded ``/``, ``?`` or ``#``): it would connect elsewhere.
    """
    try:
        options = dict(mod.connection.parse_url(url))
    except (ValueError, TypeError):
        return None
    if "@" in url and not (options.get("password") or options.get("username")):
        return None  # an '@' that is not the user part's end: a password with an unencoded '/'
    return options


def _shown_url(options: dict[str, Any], connection_class: type, mod: Any) -> str:
    """The Redis URL the store uses, built from the options redis-py parsed (so what it shows is
    where it connects), its password (if any) shown as ``***``."""
    auth = ""
    if options.get("password"):
        auth = f"{options.get('username') or ''}:***@"
    elif options.get("username"):
        auth = f"{options['username']}@"
    db = options.get("db", 0)
    if issubclass(connection_class, mod.UnixDomainSocketConnection):
        return f"unix://{auth}{options.get('path', '')}?db={db}"
    scheme = "rediss" if issubclass(connection_class, mod.SSLConnection) else "redis"
    return f"{scheme}://{auth}{options.get('host', 'localhost')}:{options.get('port', 6379)}/{db}"


class RedisBucketStore:
    """A :class:`~service_client.rest.buckets.BucketStore` on Redis, shared by processes.

    Thread-safe; one store may serve several clients, of one bot or of
    several. Pass it as ``Client(bucket_store=...)``. See the module
    docstring for what it shares and how it behaves when Redis fails.

    Keys (every one with an expiry)::

        service_client:[<namespace>:]{<scope>/<bucket>}:block   blocked-until, ms; expires with the block
        service_client:[<namespace>:]{<scope>/<bucket>}:pace    the learned window; kept 8 windows (2 s to 4 min) after last use

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
            untouched. A client from redis-py's
            ``Sentinel(...).master_for(service_name)`` is followed to each new
            primary after a failover (the store's pool asks the same
            sentinels).
        namespace: An extra key prefix, to keep apart deployments that share
            one Redis (``"staging"``), or None.
        timeout: Bound of each connect and each reply, seconds (default
            0.05). A call that runs over counts as Redis failing. A
            ``socket_timeout`` or ``socket_connect_timeout`` in the URL or
            client can only lower it (see :attr:`timeout`).
        retry_interval: While Redis is down, the longest cool-down before
            one request probes it again, seconds (default 1; the cool-downs
            start at 0.1 s and double).
        pace: Share the learned window (permits per window) as well as the
            blocks. With False only blocks are shared.
        strict: Check at construction that Redis answers (one PING within
            ``timeout``, password included) and raise if not, instead of
            logging an ERROR and running on this process's own table. Only
            the construction is strict: a later outage is handled as always.
        clock: This process's monotonic time, seconds (tests inject it).

    Raises:
        ImportError: The ``redis`` package is not installed.
        TypeError: ``redis`` is neither a ``redis.Redis`` nor a str, or
            another argument has the wrong type.
        ValueError: The URL is not a Redis URL redis-py can read, or holds an
            ``@`` it would not read as the end of a password (a password with
            an unencoded ``/``, ``?`` or ``#``: it would connect elsewhere;
            the text never quotes the URL); ``namespace`` is empty or
            holds braces, spaces or control characters; ``timeout`` or
            ``retry_interval`` is not a positive finite number.
        ServiceError: ``strict`` is True and Redis did not answer the PING
            (unreachable, refused, wrong password, over ``timeout``); the
            text names the URL with its password hidden, and the error chains
            nothing (redis-py's error and frames hold the password).
    """

    def __init__(
        self,
        redis: redis_module.Redis | str,
        *,
        namespace: str | None = None,
        timeout: float = DEFAULT_REDIS_TIMEOUT_S,
        retry_interval: float = DEFAULT_RETRY_INTERVAL_S,
        pace: bool = True,
        strict: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Build the store; with ``strict`` False nothing is sent to Redis until the first request."""
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
        for arg, flag in (("pace", pace), ("strict", strict)):
            if not isinstance(flag, bool):
                raise TypeError(f"{arg} must be a bool, not {type(flag).__name__}")

        from redis.backoff import NoBackoff
        from redis.retry import Retry

        source_pool: Any = None
        if isinstance(redis, str):
            parsed = _parsed_url(mod, redis)
            if parsed is None:
                known = redis.lower().startswith(("redis://", "rediss://", "unix://"))
                redis = ""  # the URL may hold a password: not kept in this frame's locals
                raise ValueError(
                    "redis must be a Redis URL that redis-py can read; percent-encode any '/', '?', '#' "
                    "or '@' in its password" if known else
                    "redis must be a Redis URL with the scheme redis://, rediss:// or unix://"
                )
            options: dict[str, Any] = parsed
            del parsed
            connection_class = options.pop("connection_class", mod.Connection)
        elif isinstance(redis, mod.Redis):
            source_pool = redis.connection_pool
            options = copied_options(source_pool)
            connection_class = source_pool.connection_class
        else:
            raise TypeError(f"redis must be a redis.Redis client or a URL str, not {type(redis).__name__}")
        # The store's bound always holds: a timeout in the URL or the client may only lower it.
        for name in ("socket_timeout", "socket_connect_timeout"):
            given = options.get(name)
            options[name] = float(timeout) if given is None else min(float(timeout), float(given))
        options["retry"] = Retry(NoBackoff(), 0)
        maint = getattr(mod, "maint_notifications", None)
        if maint is not None:
            # Maintenance notifications relax the socket timeouts while the server moves (to
            # seconds): off, so that the bound above holds then too.
            options["maint_notifications_config"] = maint.MaintNotificationsConfig(enabled=False)
        service = sentinel_service(source_pool)
        self._url = _shown_url(options, connection_class, mod) if service is None else f"sentinel:{service}"
        # The password goes to redis-py through a credential provider that holds it as a Secret:
        # the pool's connection settings and its connections keep no copy of it in the clear.
        self._password = Secret(options.pop("password", None) or None, shown=REDACTED_WEBHOOK_TOKEN)
        if self._password:
            options["credential_provider"] = _Credentials(options.pop("username", None), self._password)
        self._timeout = max(options["socket_timeout"], options["socket_connect_timeout"])
        client = mod.Redis(connection_pool=own_pool(mod, source_pool, connection_class, options))

        self._errors: tuple[type[BaseException], ...] = (mod.RedisError, OSError)
        self._response_error: type[BaseException] = mod.ResponseError
        self._client = client
        self._acquire_script: Script = client.register_script(ACQUIRE_LUA)
        self._block_script: Script = client.register_script(BLOCK_LUA)
        self._namespace = namespace
        #: The prefix of every key this store writes.
        self.key_prefix = "service_client:" if namespace is None else f"service_client:{namespace}:"
        self._retry_interval = float(retry_interval)
        self._pace = pace
        # Redis time for the scripts, ms, instead of TIME: tests set it to drive the pace with
        # a clock of their own. None: Redis's TIME, always in use.
        self._server_clock: Callable[[], int] | None = None
        self._clock = clock
        # This process's own table: a copy of the waits Redis answered (so
        # requests parked on them cost no round trip) and every block this
        # process recorded; it alone answers while Redis is down. Keys:
        # "<scope>/<bucket>".
        self._local = MemoryBucketStore(clock=clock)
        # What this process knows of its buckets' lines (answers the turns not called yet itself).
        self._lines = LocalLines(clock, ask=2.0 * self._timeout)
        # Redis server time minus this process's clock, ms, from the latest reply (None before one).
        self._offset_ms: float | None = None
        # The permit each worker thread took last, to match it with a 429.
        self._permits = threading.local()
        # The circuit breaker: after a failed call this process's table answers for a
        # cool-down, then one call probes Redis while the others stay local.
        self._circuit = Circuit(mod.backoff, url=self._url, retry_interval=self._retry_interval, clock=clock)
        self._closed = False  # close() was called: no call reaches Redis any more
        # Buckets whose keys hold values the scripts cannot use (a key of another type, a field
        # that is not a number): "<scope>/<bucket>" -> when to try Redis again (clock, seconds).
        self._unusable: collections.OrderedDict[str, float] = collections.OrderedDict()
        self._unusable_lock = threading.Lock()  # guards _unusable
        if strict:
            # The URL and the options hold the password: not in this frame's locals if it raises.
            redis = ""
            del options
            self._check()

    # ------------------------------------------------------------------ BucketStore

    def wait_time(self, key: str, *, scope: str = "") -> float:
        """Seconds ``key`` is known to be blocked, from this process's table only (no round trip).

        See :meth:`~service_client.rest.buckets.BucketStore.wait_time`. A
        block another process recorded, and the pace, show up at
        :meth:`acquire` (a caller that would wait for a pace slot asks Redis,
        which gives it its turn in the bucket's line).

        Returns:
            ``0.0`` when clear; else the block's seconds left.
        """
        return self._local.wait_time(f"{scope}/{key}")

    def acquire(self, key: str, *, scope: str = "", turn: int | None = None) -> float:
        """Take one of the bucket's permits in Redis, or say how long to wait.

        See :meth:`~service_client.rest.buckets.BucketStore.acquire`. One
        round trip (one Lua script), unless this process already knows the
        bucket is blocked. While the circuit is open (a call failed), or the
        store is closed, this process's table answers instead: the blocks it
        recorded itself, no pace.

        Args:
            key: A bucket key.
            scope: The bot the request is made for.
            turn: The caller's turn in the bucket's line, from the
                :class:`~service_client.rest.buckets.PaceWait` this store
                answered it before; None for a caller without one.

        Returns:
            ``0.0`` to send now (a permit is counted); else seconds to wait:
            a block's, or a :class:`~service_client.rest.buckets.PaceWait`
            when the window's permits are taken. Its ``turn`` is the caller's
            place in the line (first come, first served across the fleet):
            ask again with it after the wait.
        """
        local_key = f"{scope}/{key}"
        wait = self._local.wait_time(local_key)
        if wait > 0:
            return wait
        waits = self._lines.wait(local_key, turn)  # as Redis said to another request of this process
        if waits is not None:
            return PaceWait(waits, turn=turn)
        try:
            values = self._ask(local_key, self._keys(scope, key), turn)
        finally:
            self._lines.asked(local_key)
        if values is None:  # this process's table answers: a request sent now carries no permit
            self._permits.last = None
            return self._local.wait_time(local_key)
        wait_ms, window, number, _, given = values[:5]
        called, per_window = (values[5], values[6]) if len(values) > 6 else (0, 0)
        if window == -1:  # the window's permits are taken: a pace wait, not a block
            wait = max(wait_ms, 1) / 1000.0
            self._lines.answered(local_key, given or None, wait, called, per_window)
            return PaceWait(wait, turn=given or None)
        if wait_ms > 0:
            wait = wait_ms / 1000.0
            self._local.block(local_key, wait)
            return wait
        self._lines.answered(local_key, turn, 0.0, called)  # its turn, if any, is used
        self._permits.last = (scope, key, window, number)
        return 0.0

    def _ask(self, local_key: str, keys: list[str], turn: int | None) -> list[int] | None:
        """Run the acquire script: its reply as ints, or None when this process's table answers."""
        for _ in range(2):
            started = self._clock()
            offset = self._offset_ms
            deadline = 0 if offset is None else math.ceil(started * 1000.0 + offset + 2000.0 * self._timeout)
            reply = self._run(
                self._acquire_script, local_key, keys,
                acquire_args(pace=self._pace, deadline_ms=deadline, turn=turn, hint=self._lines.lowest(local_key),
                             now_ms=self._server_now()),
            )
            if reply is None:
                return None
            values = [int(x) for x in reply]
            # Redis time minus this process's clock, to stamp later writes with the instant they
            # were decided.
            self._offset_ms = values[3] - (started + self._clock()) * 500.0
            if values[1] != -2:
                return values
            # The script landed after this call's deadline (a slow connect, a reloaded script,
            # a thread held off): it saw no block but counted no permit. Ask once more with a
            # fresh deadline; a second late answer sends without a permit.
        return None

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
        offset = self._offset_ms
        seen_at = 0 if offset is None else math.floor(self._clock() * 1000.0 + offset)
        reply = self._run(
            self._block_script,
            local_key,
            self._keys(scope, key),
            block_args(delay_ms=math.ceil(delay * 1000.0), pace=self._pace, number=number, window=window,
                       seen_at_ms=seen_at, now_ms=self._server_now()),
        )
        if reply is not None and int(reply) / 1000.0 > delay:
            self._local.block(local_key, int(reply) / 1000.0)

    # ------------------------------------------------------------------ the rest

    @property
    def namespace(self) -> str | None:
        """The namespace given at construction, or None."""
        return self._namespace

    @property
    def url(self) -> str:
        """Where the store connects, as a Redis URL with any password shown as ``***``."""
        return self._url

    @property
    def timeout(self) -> float:
        """Bound of each connect and each reply, seconds: ``timeout``, or a lower one from the URL or client."""
        return float(self._timeout)

    @property
    def available(self) -> bool:
        """True while calls go to Redis; False while this process's own table answers (the circuit is open)."""
        return self._circuit.health is Health.UP

    def close(self) -> None:
        """Close the store's Redis connections (idempotent).

        The store closes the pool it made, every connection of it included
        (a call running meanwhile fails and answers locally); a
        ``redis.Redis`` client given at construction is left open: it is its
        owner's. From then on every call answers from this process's own
        table and opens no connection. A client does not close a store it was
        given: close the store once every client using it is destroyed.
        """
        self._closed = True
        self._disconnect()

    def _disconnect(self) -> None:
        """Close every connection of the store's own pool."""
        self._client.close()
        self._client.connection_pool.disconnect()

    def __repr__(self) -> str:
        """The URL (password hidden), namespace, circuit state and local table size; or
        ``RedisBucketStore(<not built>)`` while construction has not finished."""
        if not hasattr(self, "_local"):  # a store whose construction failed (a traceback's locals)
            return "RedisBucketStore(<not built>)"
        return (
            f"RedisBucketStore(url={self._url!r}, namespace={self._namespace!r}, "
            f"redis={self._circuit.health.value}, local={len(self._local)})"
        )

    def _server_now(self) -> int:
        """The instant the scripts use, ms: 0 for Redis's own ``TIME``."""
        server_clock = self._server_clock
        return 0 if server_clock is None else server_clock()

    def _keys(self, scope: str, key: str) -> list[str]:
        base = f"{self.key_prefix}{{{scope}/{key}}}"
        return [base + ":block", base + ":pace"]

    def _describe(self, exc: BaseException) -> str:
        """``Type: message`` of a Redis error, the password (if any) hidden."""
        text = f"{type(exc).__name__}: {exc}"
        password = self._password.get()
        if password:
            text = text.replace(password, "***")
        return text

    def _check(self) -> None:
        """``strict``: one PING (within the timeout); a failure raises a clear error.

        The error is raised outside the ``except`` block, so it chains nothing: redis-py's
        error and its frames (whose locals hold the password) are not reachable from it.
        """
        failure: str | None = None
        try:
            self._client.ping()
        except self._errors as exc:
            failure = self._describe(exc)
        if failure is not None:
            self._disconnect()
            raise ServiceError(
                f"Redis bucket store: cannot use {self._url} ({failure}); "
                "strict=True, so the store does not run on this process's own table"
            )
        self._circuit.ever_answered = True

    def _run(self, script: Script, local_key: str, keys: list[str], args: list[Any]) -> Any:
        """Run a script on one bucket's keys within the timeout.

        Returns:
            Its reply; or None when this process's table answers instead: the
            store is closed, the circuit is open (or the call failed and
            opened it), or the bucket's keys hold values the scripts cannot
            use (an error about those keys alone; the bucket stays local for
            a while, every other bucket is still shared).
        """
        if self._closed:
            return None
        retry_at = self._unusable.get(local_key)
        if retry_at is not None and self._clock() < retry_at:
            return None
        circuit = self._circuit
        generation = circuit.generation
        if circuit.health is not Health.UP:
            probe = circuit.may_probe()
            if probe is None:
                return None
            generation = probe
        try:
            reply = script(keys=keys, args=args)
        except self._errors as exc:
            if self._about_its_keys(exc):
                self._set_unusable(local_key, keys, exc)
                reply = None  # Redis answered: the circuit closes (or stays closed)
            else:
                self._failed(exc, generation)
                return None
        except BaseException as exc:  # not Redis's: counted as a failure (the probe ends), then raised
            self._failed(exc, generation)
            raise
        finally:
            if self._closed:  # closed while the call ran: the connection it took is closed too
                self._disconnect()
        if retry_at is not None and reply is not None:
            self._set_usable(local_key)
        if circuit.health is not Health.UP or not circuit.ever_answered:
            circuit.answered(generation)
        return reply

    def _about_its_keys(self, exc: BaseException) -> bool:
        """True when Redis refused a script because of what one bucket's keys hold (a key of another
        type, a field that is not a number), not because Redis is down, full or read-only."""
        if type(exc) is not self._response_error:
            return False  # redis-py's subclasses (READONLY, OOM, NOPERM, cluster errors) are server-wide
        text = str(exc)
        if _SERVER_WIDE_RE.search(text):
            return False
        code = text.split(" ", 1)[0]
        if code.isalpha() and code.isupper() and code != "ERR":
            return code == "WRONGTYPE"
        return "@user_script" in text  # raised inside the script, by a value it read

    def _set_unusable(self, local_key: str, keys: list[str], exc: BaseException) -> None:
        """Keep a bucket whose keys the scripts cannot use on this process's table for a while."""
        with self._unusable_lock:
            first = local_key not in self._unusable
            self._unusable[local_key] = self._clock() + _UNUSABLE_RETRY_S
            self._unusable.move_to_end(local_key)
            while len(self._unusable) > _MAX_UNUSABLE:
                self._unusable.popitem(last=False)
        if first:
            _log.warning(
                "Redis bucket store: the keys %s and %s hold values its scripts cannot use (%s); this bucket "
                "runs on this process's own table (its blocks are not shared) and is tried again every %g s; "
                "every other bucket is still shared",
                keys[0], keys[1], self._describe(exc), _UNUSABLE_RETRY_S,
            )
        else:
            _log.debug("Redis bucket store: the keys %s are still unusable", keys[0])

    def _set_usable(self, local_key: str) -> None:
        with self._unusable_lock:
            gone = self._unusable.pop(local_key, None) is not None
        if gone:
            _log.info("Redis bucket store: the bucket %s is shared again", local_key)

    def _failed(self, exc: BaseException, generation: int) -> None:
        """A call failed: open the circuit (unless the store was closed meanwhile)."""
        if not self._closed:  # a call that close() cut short is not an outage
            self._circuit.failed(type(exc).__name__, self._describe(exc), generation)
