"""Standby socket processes: one holds the bot's socket and publishes, the others wait to take over.

:class:`StandbySocket` runs in each of two or more socket processes of a bot.
They compete for the namespace's socket lease in Redis (``SET NX PX`` with a
fencing token from a counter that only grows, the same scheme as the workers'
partition leases). The holder logs its client in and publishes with an
:class:`~service_client.fleet.EventPublisher` whose every batch checks the
lease in the same atomic step (:mod:`service_client.fleet.fence`); the others
poll for the lease. When the holder dies (a crash, SIGKILL, a lost machine) or
is paused past the lease's TTL, the lease expires and a standby takes it, logs
in and publishes, then reads back from the channels' history the messages
posted meanwhile (a :class:`~service_client.CatchUp`), from the newest message
the previous holder published in each channel. A paused holder that comes
back has its batches refused, and steps down (logged at ERROR and WARNING): two
sockets never publish at once.

Keys, beside the publisher's (``service_client:fleet:<namespace>:``)::

    socket          the socket lease ``<name>/<instance>.<hold>:<token>``, with a TTL
    socket-fence    its fencing token counter
    marks           hash: channel id -> the newest message published there
                    (``<created epoch ms>:<message id>``), pruned past the catch-up window
"""

from __future__ import annotations

import itertools
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .. import endpoints
from .._secret import Secret
from ..client import CatchUp, Client
from ..client.catchup import CatchUpResult, ChannelMark
from ..errors import ServiceAuthError, ServiceError
from ..rest.route import Route
from ._redis import RetryWait, connect, is_client, redis_errors
from .fence import PublishFence, parse_mark
from .publisher import EventPublisher
from .routing import FleetKeys, check_name
from .scripts import ACQUIRE, RELEASE, RENEW

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["StandbySocket"]

log = logging.getLogger("service_client.fleet")

#: The socket lease's default TTL, milliseconds.
DEFAULT_SOCKET_LEASE_TTL_MS = 1_500
#: Seconds a takeover's login may take before the process gives the lease up.
_LOGIN_TIMEOUT_S = 15.0
_thread_ids = iter(range(1 << 62))


class StandbySocket:
    """One socket process of a bot among several: it publishes while it holds the socket lease.

    Run the same program two or more times (on other machines, ideally)::

        def make_client():
            return Client(bucket_store=RedisBucketStore(REDIS_URL), catch_up=CatchUp())

        StandbySocket(make_client, REDIS_URL, TOKEN).run()

    The process that takes the lease builds a client with ``make_client``,
    gives it an :class:`~service_client.fleet.EventPublisher` (fenced: see the
    module), logs it in and publishes its events, renewing the lease every
    third of its TTL. The others poll for the lease every ``lease_ttl / 6``.
    The holder steps down (its publisher closed, its client destroyed, then
    it waits as a standby again) when a renewal finds the lease gone, when
    Redis has not answered for a whole TTL, or when its publisher's batch is
    refused. A takeover logs in and publishes within about
    ``lease_ttl`` plus a login after the holder died. Then it catches up
    (``catch_up``) the messages posted in the gap, from the newest message the
    previous holder published in each channel active within the policy's
    window: they are published (and handed to the client's listeners) with
    ``message.replayed`` True. Give the client ``catch_up=`` as well, for the
    gaps of its own reconnects.

    What a takeover cannot save: events of kinds other than new messages
    (edits, reactions, member changes) during the gap, what the catch-up's
    budget does not reach, and, when a holder dies while it catches up, the
    messages of its own gap it had not replayed yet (the next holder starts
    from the newest message published, live or replayed). Events in the previous holder's buffer that Redis
    refused are new messages caught up the same way.

    Threads (daemons, stopped by :meth:`stop`): ``service_client-fleet-standby-<n>``
    (the lease) and, during a takeover, ``service_client-fleet-takeover-<n>``.
    Thread-safe.

    Args:
        make_client: Builds a new (not logged in) :class:`~service_client.Client`
            at each takeover (a client cannot log in again once destroyed).
        redis_url: The Redis URL (its password never appears in a log line, a repr or
            an exception), or a ``redis.Redis`` client whose settings are copied
            (``Sentinel(...).master_for(name)`` follows the primary through a failover).
        token: The bot token.
        namespace: The streams' namespace; default the bot's user id (one REST request at
            :meth:`start`).
        name: This process's name in the lease (ASCII letters, digits, ``_.-``);
            default host name and pid.
        lease_ttl: The socket lease's TTL, milliseconds (default 1,500, at least 300):
            how long a dead holder keeps it.
        catch_up: What a takeover reads back (default ``CatchUp()``); None reads nothing back.
        publisher_options: Keyword arguments of the :class:`~service_client.fleet.EventPublisher`
            (``partitions``, ``max_buffered_events``...).

    Raises:
        ImportError: The redis package is not installed.
        TypeError: An argument has the wrong type.
        ValueError: A bad URL, name, namespace or TTL; ``publisher_options`` holds
            ``namespace`` or ``fence``.
        ServiceAuthError: ``token`` is not a non-empty str.
    """

    def __init__(
        self,
        make_client: Callable[[], Client],
        redis_url: str | Redis,
        token: str,
        *,
        namespace: str | None = None,
        name: str | None = None,
        lease_ttl: int = DEFAULT_SOCKET_LEASE_TTL_MS,
        catch_up: CatchUp | None = CatchUp(),  # noqa: B008 - an immutable value
        publisher_options: Mapping[str, Any] | None = None,
    ) -> None:
        url = Secret(redis_url if isinstance(redis_url, str) else None, shown="***")
        given = None if isinstance(redis_url, str) else redis_url  # a redis.Redis (Sentinel's, say)
        if given is not None and not is_client(given):
            raise TypeError(f"redis_url must be a Redis URL str or a redis.Redis, got {type(redis_url).__name__}")
        del redis_url
        if not isinstance(token, str) or not token.strip():
            raise ServiceAuthError("StandbySocket requires a non-empty bot token string.")
        self._token = Secret(token)
        del token
        if not callable(make_client):
            raise TypeError("make_client must be a function that returns a new Client")
        if isinstance(lease_ttl, bool) or not isinstance(lease_ttl, int):
            raise TypeError(f"lease_ttl must be an int of milliseconds, got {type(lease_ttl).__name__}")
        if lease_ttl < 300:
            raise ValueError(f"lease_ttl must be at least 300 ms, got {lease_ttl!r}")
        if catch_up is not None and not isinstance(catch_up, CatchUp):
            raise TypeError(f"catch_up must be a CatchUp or None, got {type(catch_up).__name__}")
        self._make_client = make_client
        self._namespace = None if namespace is None else check_name("namespace", namespace)
        self.name = check_name("name", name if name is not None else
                               f"{socket.gethostname()}-{os.getpid()}"[:64].replace(" ", "-"))
        #: This process's unique name in the lease: the name plus a random suffix.
        self.instance = f"{self.name}/{uuid.uuid4().hex[:8]}"
        self.lease_ttl_ms = lease_ttl
        self.catch_up_policy = catch_up
        self._publisher_options = dict(publisher_options or {})
        for reserved in ("namespace", "fence"):
            if reserved in self._publisher_options:
                raise ValueError(f"publisher_options may not hold {reserved!r}: StandbySocket sets it")
        self._url = url
        self._given = given
        self._redis, self.redis_url = connect(url.get() if given is None else given)
        self._errors = redis_errors()
        self._stop = threading.Event()
        self._wake = threading.Event()  # the lease thread looks again at once (a refused batch)
        self._refused = threading.Event()
        self._state_lock = threading.Lock()  # guards _held, _client, _publisher, _takeover
        self._held: str | None = None
        self._holds = itertools.count(1)  # numbers this process's holds of the lease
        self._client: Client | None = None
        self._publisher: EventPublisher | None = None
        self._takeover: threading.Thread | None = None
        self._thread: threading.Thread | None = None
        self._keys: FleetKeys | None = None
        #: The fencing token of the lease held now (0 while standing by).
        self.fencing_token = 0
        #: Times this process took the lease, and stepped down.
        self.takeovers = 0
        self.step_downs = 0
        #: The last takeover's catch-up (None before one).
        self.last_catch_up: CatchUpResult | None = None
        self._published = threading.Event()  # set once a takeover's client is ready and publishing

    # -- public ------------------------------------------------------------------------------

    @property
    def is_active(self) -> bool:
        """True while this process holds the socket lease (logging in, or publishing)."""
        return self._held is not None

    @property
    def client(self) -> Client | None:
        """The client of the current takeover, or None while standing by."""
        return self._client

    @property
    def publisher(self) -> EventPublisher | None:
        """The publisher of the current takeover, or None while standing by."""
        return self._publisher

    def wait_active(self, timeout: float | None = None) -> bool:
        """Wait until this process publishes (holds the lease and its client is ready).

        Returns:
            True when it does, False when ``timeout`` (seconds) passed first.
        """
        return self._published.wait(timeout)

    def start(self) -> None:
        """Learn the namespace (when not given) and start competing for the lease; returns at once.

        Raises:
            ServiceError: Already started or stopped.
            ServiceAuthError: The service refused the token (learning the namespace).
            ServiceAPIError, ServiceTimeoutError: The request for the bot's user failed.
        """
        if self._thread is not None or self._stop.is_set():
            raise ServiceError("start() called on a StandbySocket that was started already")
        namespace = self._namespace or self._bot_id()
        self._keys = FleetKeys(namespace)
        self._thread = threading.Thread(target=self._lease_loop, name=f"service_client-fleet-standby-"
                                        f"{next(_thread_ids)}", daemon=True)
        self._thread.start()
        log.info("socket process %s stands by for namespace %s", self.instance, namespace)

    def run(self) -> None:
        """Start, then block until :meth:`stop` is called or Ctrl-C (then stop and hand the lease over).

        Raises:
            ServiceError, ServiceAuthError: As :meth:`start`.
        """
        try:
            self.start()
            while not self._stop.wait(0.25):
                pass
        except KeyboardInterrupt:
            log.info("interrupted; stopping the socket process")
        finally:
            self.stop()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop: step down when active (the lease is released, so a standby takes over at once). Idempotent.

        Args:
            timeout: Seconds for the whole stop.
        """
        deadline = time.monotonic() + timeout
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(max(0.1, deadline - time.monotonic()))
        self._step_down("stopped", release=True, timeout=max(0.5, deadline - time.monotonic()))
        try:
            self._redis.close()
        except self._errors:
            pass
        self._url.clear()

    def __repr__(self) -> str:
        return (f"<StandbySocket {getattr(self, 'instance', None)!r} active={self.is_active} "
                f"token={getattr(self, 'fencing_token', 0)} redis={getattr(self, 'redis_url', None)!r}>")

    def __reduce__(self) -> Any:
        raise TypeError("a StandbySocket cannot be pickled: it holds live connections")

    # -- the lease ---------------------------------------------------------------------------

    def _lease_keys(self) -> tuple[str, str, str]:
        assert self._keys is not None
        prefix = self._keys.prefix
        return prefix + "socket", prefix + "socket-fence", prefix + "marks"

    def _lease_loop(self) -> None:
        lease, fence, _marks = self._lease_keys()
        ttl = self.lease_ttl_ms
        retry = RetryWait(self._stop)
        renewed_at = 0.0
        while not self._stop.is_set():
            held = self._held
            if held is None:
                try:
                    acquired = self._acquire(lease, fence, ttl)
                except self._errors:
                    if not retry.wait():
                        return
                    continue
                retry.reset()
                if acquired is None:
                    self._stop.wait(ttl / 6000)
                    continue
                renewed_at = time.monotonic()
                self._take(*acquired)
                continue
            if self._refused.is_set():
                self._step_down("a batch was refused: another socket process holds the lease")
                continue
            try:
                kept = self._redis.eval(RENEW, 1, lease, ttl, held)
                ok = bool(kept and int(kept[0]))
                retry.reset()
                if ok:
                    renewed_at = time.monotonic()
                else:
                    self._step_down("the socket lease is gone (this process was paused or cut off from Redis "
                                    "past its TTL, and another may hold it)")
                    continue
            except self._errors as exc:
                if time.monotonic() - renewed_at > ttl / 1000:
                    self._step_down(f"Redis has not answered for the lease's TTL ({type(exc).__name__})")
                    continue
            self._wake.wait(ttl / 3000)
            self._wake.clear()

    def _acquire(self, lease: str, fence: str, ttl: int) -> tuple[int, str] | None:
        """Try to take the socket lease: ``(fencing token, the lease's value)``, or None when
        another process holds it. Raises what Redis raises.

        Each hold's value is its own (``<instance>.<hold>:<token>``) even where the token is
        not: a Redis that lost its data counts tokens from 1 again, and a hold this process lost
        before would otherwise pass for the new one (its takeover thread, its publisher's fence).
        """
        owner = f"{self.instance}.{next(self._holds)}"
        token = int(self._redis.eval(ACQUIRE, 2, lease, fence, owner, ttl))
        return None if not token else (token, f"{owner}:{token}")

    def _take(self, token: int, value: str) -> None:
        """The lease is ours (token ``token``, value ``value``): read the marks, then log in on a
        thread of its own."""
        taken_at = time.monotonic()
        self._refused.clear()
        self._published.clear()
        with self._state_lock:
            self._held = value
            self.fencing_token = token
            self.takeovers += 1
        log.warning("socket process %s took the socket lease (fencing token %d): logging in", self.instance, token)
        marks = self._marks() if self.catch_up_policy is not None else []
        thread = threading.Thread(target=self._activate, args=(value, marks, taken_at),
                                  name=f"service_client-fleet-takeover-{next(_thread_ids)}", daemon=True)
        with self._state_lock:
            self._takeover = thread
        thread.start()

    def _marks(self) -> list[ChannelMark]:
        """The channels active within the catch-up window, from the marks hash (older ones pruned)."""
        policy = self.catch_up_policy
        assert policy is not None
        _lease, _fence, key = self._lease_keys()
        try:
            seconds, micros = self._redis.time()
            raw = self._redis.hgetall(key)
        except self._errors as exc:
            log.warning("could not read the channels' marks (%s): nothing is caught up", type(exc).__name__)
            return []
        oldest = (seconds * 1000 + micros // 1000) - policy.window * 1000
        marks: list[ChannelMark] = []
        old: list[bytes] = []
        for channel, mark in raw.items():
            parsed = parse_mark(mark)
            if parsed is None or parsed[0] < oldest:
                old.append(channel)
                continue
            marks.append(ChannelMark(channel.decode(), parsed[1], parsed[0] or None))
        if old:
            try:
                self._redis.hdel(key, *old)
            except self._errors:
                pass
        marks.sort(key=lambda m: m.created_ms or 0, reverse=True)
        return marks

    def _activate(self, value: str, marks: list[ChannelMark], taken_at: float) -> None:
        lease, _fence, marks_key = self._lease_keys()
        assert self._keys is not None

        def refused() -> None:
            """The fence refused a batch: wake the holder's loop to step down."""
            self._refused.set()
            self._wake.set()

        try:
            client = self._make_client()
            if not isinstance(client, Client):
                raise TypeError(f"make_client must return a Client, got {type(client).__name__}")
            source = self._given if self._given is not None else self._url.get() or ""
            publisher = EventPublisher(client, source, namespace=self._keys.namespace,
                                       fence=PublishFence(lease, marks_key, value, refused),
                                       **self._publisher_options)
        except Exception:  # noqa: BLE001 - logged; the lease is given up for another process
            log.exception("socket process %s could not build its client and publisher: giving the lease up",
                          self.instance)
            self._wake.set()
            self._give_up(value)
            return
        with self._state_lock:
            if self._held != value:  # stepped down meanwhile
                publisher.close(1)
                client.destroy()
                return
            self._client, self._publisher = client, publisher
        try:
            client.login(self._token.get() or "", timeout=_LOGIN_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - logged; the lease is given up for another process
            if self._held == value:
                log.error("socket process %s could not log in (%s): giving the lease up", self.instance,
                          type(exc).__name__)
                self._give_up(value)
            return
        log.warning("socket process %s publishes, %.0f ms after it took the lease", self.instance,
                    (time.monotonic() - taken_at) * 1000)
        self._published.set()
        policy = self.catch_up_policy
        if policy is None or not marks or self._held != value:
            return
        # With the client's own catch-up memory when it has one, so that its reconnects never
        # replay a message twice.
        self.last_catch_up = client.catch_up_from(marks, policy)

    def _give_up(self, value: str) -> None:
        """Step down and release the lease, so that another process tries."""
        if self._held == value:
            self._step_down("the takeover failed", release=True)
            self._stop.wait(self.lease_ttl_ms / 1000)  # let another process take it first

    def _step_down(self, reason: str, *, release: bool = False, timeout: float = 5.0) -> None:
        """Stop publishing and close the client; release the lease when asked (a graceful stop)."""
        with self._state_lock:
            held, self._held = self._held, None
            client, self._client = self._client, None
            publisher, self._publisher = self._publisher, None
            takeover, self._takeover = self._takeover, None
            self.fencing_token = 0
        self._published.clear()
        if held is None:
            return
        self.step_downs += 1
        log.warning("socket process %s steps down: %s", self.instance, reason)
        deadline = time.monotonic() + timeout
        if takeover is not None and takeover is not threading.current_thread():
            takeover.join(max(0.05, min(1.0, deadline - time.monotonic())))
        if publisher is not None:
            publisher.close(max(0.1, deadline - time.monotonic()))
        if client is not None:
            client.destroy()
        if release:
            lease, _fence, _marks = self._lease_keys()
            try:
                self._redis.eval(RELEASE, 1, lease, held)
            except self._errors:
                pass

    def _bot_id(self) -> str:
        """The bot's user id (the default namespace), with one REST request."""
        client = self._make_client()
        try:
            try:  # the token is read inline, never kept in a local of this frame
                client.use_token(self._token.get() or "")
            except ServiceAuthError:
                raise ServiceAuthError("StandbySocket requires a bot token of visible ASCII characters.") from None
            me = client.connection_state.request(Route(endpoints.GET_ME))
        finally:
            client.destroy()
        user = me.get("user") if isinstance(me, dict) else None
        if not isinstance(user, dict) or not isinstance(user.get("publicId"), str):
            raise ServiceError(f"{endpoints.GET_ME.method} {endpoints.GET_ME.path} did not return a user record")
        return check_name("namespace", user["publicId"])
