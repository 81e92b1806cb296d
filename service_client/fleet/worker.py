"""The worker: a client whose events come from Redis Streams instead of the socket.

:class:`FleetWorker` is a :class:`~service_client.Client` (the same
listeners API, caches, models, REST calls and ``CommandDispatcher``) that
holds no socket: it is built on the client's event-source seam
(``Client(event_source=...)``, see :mod:`service_client.client.source`), and
its source is the partitions it owns in a consumer group (see
:mod:`service_client.fleet.consumer`); its messages go out through the
socket's process (see :mod:`service_client.fleet.sends`).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from .. import _defaults
from .._secret import Secret
from ..client import Client, ClientState
from ..client.source import EventFeed
from ..errors import ServiceAuthError, ServiceError, ServiceTimeoutError
from ..rest.buckets import BucketStore
from ..rest.redis_buckets import RedisBucketStore
from ._redis import RetryWait, connect, is_client, redis_errors
from .consumer import Consumer
from .fetches import SharedFetches
from .routing import FleetKeys, check_name
from .sends import SendClient
from .state import NO_SOCKET, FleetSends

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["FleetWorker"]

log = logging.getLogger("service_client.fleet")

_F = TypeVar("_F", bound=Callable[..., Any])
#: How long start() waits for a publisher to set the namespace's partition count, seconds.
_META_WAIT_S = 30.0


def _number(name: str, value: object, minimum: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    if not value >= minimum or value == float("inf"):
        raise ValueError(f"{name} must be a finite number >= {minimum}, got {value!r}")
    return float(value)


class FleetWorker(Client):
    """One worker of a bot's events fleet: it handles the events of the partitions it owns.

    Listen as on a :class:`~service_client.Client` (``on``, ``once``,
    ``@worker.event``, ``wait_for``, a ``CommandDispatcher``); listeners get the
    same typed objects (a ``Message`` with its ``author``, ``channel`` and
    ``reply()``), and the caches (``guilds``, ``channels``, ``members``,
    ``users``) follow the shared-state events, so they are as fresh as the
    socket's process's. What a worker promises:

    - **At least once, in order per channel.** Each partition has one owner
      at a time (a lease in Redis with a fencing token). Within a worker,
      each channel (else server) is one lane on the worker pool: its events
      run one after another in stream order, other channels in parallel. An
      entry is acknowledged once its listeners have returned, and only while
      the lease it was read under still holds: a worker that lost a partition
      (paused, cut off) cannot acknowledge or reply for it. A new owner first
      runs the partition's pending entries in id order, then new ones, and
      logs the sequence numbers missing since the group's last read.
    - **Bounded.** At most ``max_in_flight`` entries are read ahead of the
      listeners, and at most a quarter of them in one lane: past that, the
      lane's partition is not read until the lane has room (the other
      partitions go on). A listener running 10 s or more is logged at
      WARNING with its lane and run time (again each time it doubles).
    - **Replies once.** A ``send_message`` or ``reply`` made while handling an
      event is sent by the socket's process with a nonce derived from the
      group, the event and the reply's place, claimed once in Redis: a
      redelivered event does not post twice, and another group's replies are
      its own.
    - **Poison events.** An entry whose listeners raise is run again (waits of
      0.1 s doubling up to 2 s, its lane waiting); after ``max_deliveries`` it
      is written to the group's dead-letter stream
      (``service_client:fleet:<namespace>:dead:<group>``) with its error,
      logged at ERROR, and acknowledged, and its lane goes on
      (``poison="skip"``); with ``poison="hold"`` it stays and is run again
      every 30 s at most, its channel's later events waiting behind it. An
      event whose workers died while running it (counted only for the event
      running, not for those queued behind it) ``max_deliveries`` times is
      dead-lettered without running again. An entry that cannot be read (not
      a publisher's, JSON nested too deep, an event id that is not UTF-8) is
      dead-lettered with the reason. A dead letter Redis refuses is written
      again until it is taken, its lane waiting.
    - **Graceful hand-off.** :meth:`stop` stops reading, lets the lanes finish
      (``drain_timeout``), acknowledges, releases the leases and leaves the
      group: the next owners start at once.

    Sends wait, as a client's, at most 10 s for the socket's process to answer
    (its ``EventPublisher`` runs them); other socket operations (presence,
    typing, voice, kicks and bans over the socket) raise
    :class:`~service_client.ServiceAuthError`. REST calls share the
    rate-limit table through a :class:`~service_client.RedisBucketStore` on
    the same Redis (unless ``bucket_store`` is given).

    Threads (daemons, stopped by :meth:`stop`): the client's pool
    (``service_client-events-<n>``) and REST threads, and
    ``service_client-fleet-{leases,reader,acks,state,answers}-<n>``.
    Thread-safe.

    Args:
        redis_url: The Redis URL the publisher uses, or a ``redis.Redis`` client whose
            settings are copied (``Sentinel(...).master_for(name)``: the worker, and its
            rate-limit store, follow the primary through a failover).
        token: The bot token (REST calls; never written to Redis).
        group: The consumer group: the workers of one group share the events;
            another group gets every event again.
        name: This worker's name in the group (ASCII letters, digits, ``_.-``):
            the partitions a name owns stay the same across its restarts.
            Unique among the group's live workers. Default: host name and pid.
        namespace: The publisher's namespace; default the bot's user id (the
            publisher's default).
        base_url: The REST base (default ``Client.base_url``).
        site_url: The public web site (invite links).
        workers: Threads of the pool that runs the lanes (default 8).
        max_in_flight: Entries read and not finished, at most (default 2,000).
        lease_ttl: A lease's time to live, milliseconds (default 1,200):
            partitions of a worker that died move this long after its last
            renewal.
        max_deliveries: Deliveries of a failing event before it is dead-lettered (default 5).
        poison: ``"skip"`` (default) or ``"hold"``, as above.
        drain_timeout: Seconds :meth:`stop` lets the lanes finish (default 10).
        bucket_store: The REST rate-limit table; default a ``RedisBucketStore`` on ``redis_url``.

    Raises:
        ImportError: The redis package is not installed.
        TypeError: An argument has the wrong type.
        ValueError: A bad URL, name or number; ``poison`` is neither value.
        ServiceAuthError: ``token`` is not a non-empty str.
    """

    def __init__(
        self,
        redis_url: str | Redis,
        token: str,
        *,
        group: str,
        name: str | None = None,
        namespace: str | None = None,
        base_url: str | None = None,
        site_url: str | None = None,
        workers: int = _defaults.DEFAULT_WORKERS,
        max_in_flight: int = _defaults.DEFAULT_FLEET_MAX_IN_FLIGHT,
        lease_ttl: int = _defaults.DEFAULT_FLEET_LEASE_TTL_MS,
        max_deliveries: int = _defaults.DEFAULT_FLEET_MAX_DELIVERIES,
        poison: str = "skip",
        drain_timeout: float = _defaults.DEFAULT_FLEET_DRAIN_TIMEOUT_S,
        bucket_store: BucketStore | None = None,
    ) -> None:
        # The URL may hold a password and the token is one: from here on only Secret objects hold
        # them, so no frame of a traceback this constructor raises shows them among its locals.
        url = Secret(redis_url if isinstance(redis_url, str) else None, shown="***")
        given = None if isinstance(redis_url, str) else redis_url  # a redis.Redis (Sentinel's, say)
        if given is not None and not is_client(given):
            raise TypeError(f"redis_url must be a Redis URL str or a redis.Redis, got {type(redis_url).__name__}")
        del redis_url
        if not isinstance(token, str) or not token.strip():
            raise ServiceAuthError("FleetWorker requires a non-empty bot token string.")
        secret = Secret(token)
        del token
        self.group = check_name("group", group)
        self.name = check_name("name", name if name is not None else f"{socket.gethostname()}-{os.getpid()}"[:64]
                               .replace(" ", "-"))
        self._namespace = None if namespace is None else check_name("namespace", namespace)
        for arg, value, low in (("max_in_flight", max_in_flight, 1), ("lease_ttl", lease_ttl, 100),
                                ("max_deliveries", max_deliveries, 1)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{arg} must be an int, got {type(value).__name__}")
            if value < low:
                raise ValueError(f"{arg} must be at least {low}, got {value!r}")
        if poison not in ("skip", "hold"):
            raise ValueError(f"poison must be 'skip' or 'hold', got {poison!r}")
        self.max_in_flight = max_in_flight
        self.lease_ttl_ms = lease_ttl
        self.max_deliveries = max_deliveries
        self.poison = poison
        self.drain_timeout = _number("drain_timeout", drain_timeout, 0)
        #: This process's unique name (leases, answers): the name plus a random suffix.
        self.instance = f"{self.name}/{uuid.uuid4().hex[:8]}"
        self._redis, self.redis_url = connect(url.get() if given is None else given)
        own_store: RedisBucketStore | None = None
        if bucket_store is None:
            own_store = bucket_store = RedisBucketStore(given if given is not None else url.get() or "")
        url.clear()
        self._own_store = own_store
        base = base_url if base_url is not None else type(self).base_url
        origin = "/".join(base.split("/", 3)[:3]) if isinstance(base, str) else base
        self._secret = secret
        self._stop_event = threading.Event()
        self._consumer: Consumer | None = None
        self._sender: SendClient | None = None
        self._keys: FleetKeys | None = None
        self._feed: EventFeed | None = None
        self._stop_lock = threading.Lock()  # one stop() at a time
        super().__init__(base_url=base, socket_url=origin, site_url=site_url, workers=workers,
                         max_queued_events=_defaults.DEFAULT_MAX_QUEUED_EVENTS, bucket_store=bucket_store,
                         event_source=_StreamSource(self))

    # -- listening -------------------------------------------------------------------------

    def event(self, listener: _F) -> _F:
        """Register ``listener`` for the event its function name names (``def message_create(message)``).

        Returns:
            ``listener`` unchanged (a decorator).

        Raises:
            TypeError: ``listener`` is not a function with a name.
            ValueError: Its name is no event of the catalog or a registered custom event.
        """
        name = getattr(listener, "__name__", None)
        if not callable(listener) or not isinstance(name, str):
            raise TypeError("@worker.event decorates a function named after its event")
        self.on(name, listener)  # type: ignore[call-overload]  # the name is checked at run time
        return listener

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def partitions(self) -> list[int]:
        """The partitions this worker owns now, sorted (empty before :meth:`start`)."""
        consumer = getattr(self, "_consumer", None)
        return [] if consumer is None else consumer.owned()

    @property
    def is_connected(self) -> bool:
        """True while the worker runs (started and not stopped)."""
        return self.state is ClientState.READY

    def login(self, token: str | None = None, *, timeout: float | None = None) -> None:
        """The same as :meth:`start` (a worker logs in with the token it was given).

        Raises:
            ValueError: ``token`` is given and is not the worker's token.
            ServiceError, ServiceAuthError, ServiceTimeoutError: As :meth:`start`.
        """
        if token is not None and token != self._secret.get():
            raise ValueError("a FleetWorker logs in with the token given to its constructor")
        self.start(timeout=timeout)

    def start(self, *, timeout: float | None = None) -> None:
        """Join the fleet in the background; return once the worker is ready.

        Fetches the bot's user and servers (as a client's login does), waits
        for the namespace's partition count (set by the first publisher),
        creates the group on every partition stream, starts the threads and
        emits ``ready``. The partitions are acquired within a lease TTL.

        Args:
            timeout: Seconds for the whole start (default 30 s for the publisher, then the REST bounds).

        Raises:
            ServiceError: The worker is running or stopped; or no publisher
                set the namespace's partition count within 30 s; or Redis
                could not be reached.
            ServiceAuthError: The service refused the token (an answer 401 to the
                first request), as :meth:`Client.login <service_client.Client.login>` raises.
            ServiceTimeoutError: ``timeout`` passed.
            ServiceAPIError: A REST call failed.
        """
        if self.state is ClientState.DESTROYED:
            raise ServiceError("this worker was stopped; create a new FleetWorker")
        if self.state is not ClientState.NEW:
            raise ServiceError(f"start() called on a worker that is already {self.state.value}")
        if self._secret.get() is None:
            raise ServiceAuthError("FleetWorker requires a bot token of visible ASCII characters.")
        try:
            # The fleet's streams are the client's event source. The token is read inline, never
            # kept in a local: no frame of a traceback this raises holds it.
            Client.login(self, self._secret.get() or "", timeout=timeout)
        except ServiceAuthError as exc:
            if str(exc).startswith("login() requires"):
                raise ServiceAuthError("FleetWorker requires a bot token of visible ASCII characters.") from None
            raise

    def _open(self, feed: EventFeed, deadline: float | None) -> None:
        """The source opens (in login): wait for the namespace's partitions and join the group."""
        user = feed.user
        assert user is not None  # known before a source is opened
        self._feed = feed
        feed.state.no_socket = NO_SOCKET
        keys = self._keys = FleetKeys(self._namespace or user.id, self.group)
        errors = redis_errors()
        retry = RetryWait(self._stop_event)
        wait_until = time.monotonic() + _META_WAIT_S
        if deadline is not None:
            wait_until = min(wait_until, deadline)
        partitions = 0
        while not partitions:
            try:
                partitions = int(self._redis.hget(keys.meta, "partitions") or 0)
                if partitions:
                    consumer = Consumer(self, feed, self._redis, keys, partitions=partitions)
                    consumer.state_after = self._state_position(keys)
                    consumer.create_groups()
                    self._consumer = consumer
                    break
            except errors as exc:
                if time.monotonic() > wait_until:
                    raise ServiceError(f"the worker could not reach Redis at {self.redis_url} "
                                       f"({type(exc).__name__})") from None
                retry.wait()
                continue
            if time.monotonic() > wait_until:
                if deadline is not None and time.monotonic() >= deadline:
                    raise ServiceTimeoutError("FleetWorker.start() did not complete in time")
                raise ServiceError(f"no EventPublisher has set up namespace {keys.namespace!r} in Redis "
                                   f"at {self.redis_url} within {_META_WAIT_S:g} s (start the socket's process)")
            self._stop_event.wait(0.1)

    def _begin(self) -> None:
        """The source starts (in login, the caches filled): the sends and the reading threads."""
        consumer, keys, feed = self._consumer, self._keys, self._feed
        assert consumer is not None and keys is not None and feed is not None  # set by _open
        state = feed.state
        sender = self._sender = SendClient(self._redis, keys, self.instance.replace("/", "-"), self._stop_event)
        sends = FleetSends(sender, SharedFetches(self._redis, keys, self._stop_event))
        state.send_hook = sends.send  # send_message and reply go to the socket's process
        state.fetch_hook = sends.fetch
        sender.start()
        consumer.start()
        user = feed.user
        log.info("fleet worker %s of group %s ready as %s (%d partitions in namespace %s)", self.name, self.group,
                 user.tag_string if user is not None else "?", consumer.partition_count, keys.namespace)

    def _close(self) -> None:
        """The source closes (in destroy): every fleet thread stops, Redis is let go."""
        self._stop_event.set()
        consumer = self._consumer
        if consumer is not None:
            consumer.stop(_defaults.DESTROY_JOIN_S)
        if self._sender is not None:
            self._sender.join(_defaults.DESTROY_JOIN_S)
        try:
            self._redis.close()
        except redis_errors():
            pass
        if self._own_store is not None:
            self._own_store.close()
        self._secret.clear()

    def _state_position(self, keys: FleetKeys) -> str:
        """Where this worker starts reading the shared-state stream: after its last entry now."""
        try:
            info = self._redis.xinfo_stream(keys.state)
        except redis_errors()[0]:
            return "0-0"  # no stream yet
        last = info.get("last-generated-id") or b"0-0"
        return last.decode() if isinstance(last, bytes) else str(last)

    def run(self, token: str | None = None) -> None:
        """Start, then block until :meth:`stop` is called or Ctrl-C (then stop gracefully).

        Args:
            token: None, or the worker's own token.

        Raises:
            ServiceError, ServiceAuthError, ServiceTimeoutError: As :meth:`start`.
        """
        try:
            self.login(token)
            while not self._stop_event.wait(0.25):
                pass
        except KeyboardInterrupt:
            log.info("interrupted; stopping the fleet worker")
        finally:
            self.stop()

    def stop(self, timeout: float | None = None) -> None:
        """Hand the partitions over and stop; idempotent, from any thread.

        Stops reading, lets the lanes finish what they read (at most
        ``drain_timeout`` seconds, or ``timeout``), acknowledges, releases the
        leases and leaves the group, so that the next owners start at once;
        then stops every thread as :meth:`~service_client.Client.destroy` does.
        Events still running at the end are delivered again to the next owner.
        Called from a listener, it returns at once and the stop goes on in the
        background (``service_client-fleet-stop-<n>``), once that listener has returned.

        Args:
            timeout: Seconds the lanes may take, instead of ``drain_timeout``.
        """
        feed = self._feed
        if feed is not None and feed.on_worker_thread():
            # From a listener: the stop waits for the lanes, this one included, so it runs on a
            # thread of its own and this call returns at once.
            if not self._stop_event.is_set():
                threading.Thread(target=self.stop, args=(timeout,), name=f"service_client-fleet-stop-{id(self)}",
                                 daemon=True).start()
            return
        with self._stop_lock:
            if self.state is ClientState.DESTROYED:
                return
            consumer = self._consumer
            if consumer is not None:
                drained = consumer.drain(self.drain_timeout if timeout is None else timeout)
                if not drained:
                    log.warning("fleet worker %s stopped with events still running: they are delivered again",
                                self.name)
                consumer.leave()
            Client.destroy(self)  # closes the source: see _close

    def destroy(self) -> None:
        """The same as :meth:`stop`."""
        self.stop()

    def to_dict(self) -> dict[str, Any]:
        """A safe snapshot: :meth:`Client.to_dict <service_client.Client.to_dict>` plus the fleet's figures."""
        out = super().to_dict()
        consumer = self._consumer
        out.update({"group": self.group, "name": self.name, "partitions": self.partitions,
                    "handled": consumer.handled if consumer else 0,
                    "dead_lettered": consumer.acks.dead_lettered if consumer else 0})
        return out

    def __repr__(self) -> str:
        try:
            lifecycle = self.state.value
        except AttributeError:  # while the constructor runs
            lifecycle = "new"
        return (f"<FleetWorker {getattr(self, 'name', None)!r} group={getattr(self, 'group', None)!r} "
                f"state={lifecycle} "
                f"partitions={len(self.partitions)} redis={getattr(self, 'redis_url', None)!r}>")

    __str__ = __repr__


class _StreamSource:
    """A worker's event source (see :class:`~service_client.client.source.EventSource`): its streams."""

    __slots__ = ("_worker",)

    def __init__(self, worker: FleetWorker) -> None:
        self._worker = worker

    def open(self, feed: EventFeed, deadline: float | None) -> None:
        """Wait for the namespace's partitions and join the group (see :meth:`FleetWorker.start`)."""
        self._worker._open(feed, deadline)

    def start(self) -> None:
        """Start the sends and the reading threads."""
        self._worker._begin()

    def close(self) -> None:
        """Stop every fleet thread and let Redis go."""
        self._worker._close()
