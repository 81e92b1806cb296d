"""The worker: a client whose events come from Redis Streams instead of the socket.

A :class:`FleetWorker` holds a :class:`~service_client.Client` (``worker.client``)
built on the client's event-source seam (``Client(event_source=...)``, see
:mod:`service_client.client.source`): the client holds no socket, and its source
is the partitions the worker owns in a consumer group (see
:mod:`service_client.fleet.consumer`); its messages go out through the socket's
process (see :mod:`service_client.fleet.sends`). The worker adds the fleet's
lifecycle (start, a graceful stop that hands its partitions over) and offers the
client's listening API, caches and sends as its own; everything else of the
client is ``worker.client``'s.
"""

from __future__ import annotations

import itertools
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

    from ..managers.channels import ChannelManager
    from ..managers.guilds import GuildManager
    from ..managers.members import MemberManager
    from ..managers.users import UserManager
    from ..models.user import User

__all__ = ["FleetWorker"]

log = logging.getLogger("service_client.fleet")
_stop_ids = itertools.count()  # numbers the background stop threads

_F = TypeVar("_F", bound=Callable[..., Any])
#: How long start() waits for a publisher to set the namespace's partition count, seconds.
_META_WAIT_S = 30.0


#: A client's public names (its methods, properties and attributes): reading one the worker does not
#: offer raises an AttributeError that names ``worker.client``.
_CLIENT_NAMES = frozenset(name for name in dir(Client) if not name.startswith("_")) | {
    "catch_up", "commands", "ready_at", "site_url", "voice"}


def _number(name: str, value: object, minimum: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    if not value >= minimum or value == float("inf"):
        raise ValueError(f"{name} must be a finite number >= {minimum}, got {value!r}")
    return float(value)


class FleetWorker:
    """One worker of a bot's events fleet: it handles the events of the partitions it owns.

    A worker holds a :class:`~service_client.Client`, :attr:`client`, whose
    events come from the fleet's streams instead of a socket. Listen on the
    worker as on a client (``on``, ``once``, ``@worker.event``, ``wait_for``,
    ``off``); attach a :class:`~service_client.CommandDispatcher` to its client
    (``CommandDispatcher(worker.client, prefix="!")``). Listeners get the same
    typed objects (a ``Message`` with its ``author``, ``channel`` and
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

    **The client's API on the worker.** These are the client's own, offered by
    the worker as they are (see :class:`~service_client.Client`): the listeners
    (:attr:`on`, :attr:`once`, :attr:`off`, :attr:`listeners`,
    :attr:`wait_for`, and the worker's :meth:`event`), the caches
    (:attr:`user`, :attr:`users`, :attr:`guilds`, :attr:`channels`,
    :attr:`members`), the requests (:attr:`send_message`, :attr:`api_call`) and
    the lifecycle :attr:`state`. Everything else is the client's:
    ``worker.client.load_commands(...)``, ``worker.client.every(...)``,
    ``worker.client.add_cog(...)`` once a dispatcher is attached to
    ``worker.client``. Reading a client's attribute the worker does not offer
    raises an :class:`AttributeError` that names ``worker.client``. A worker is
    not a ``Client`` (``isinstance(worker, Client)`` is False): code that takes
    a client (a ``CommandDispatcher``, a test helper) takes ``worker.client``.
    Stop a worker with :meth:`stop` (or :meth:`destroy`), which hands its
    partitions over; ``worker.client.destroy()`` stops it at once, without the
    hand-off (the next owners wait a lease's TTL and run its events again).

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
        namespace = None if namespace is None else check_name("namespace", namespace)
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
        redis, self.redis_url = connect(url.get() if given is None else given)
        own_store: RedisBucketStore | None = None
        if bucket_store is None:
            own_store = bucket_store = RedisBucketStore(given if given is not None else url.get() or "")
        url.clear()
        base = base_url if base_url is not None else Client.base_url
        origin = "/".join(base.split("/", 3)[:3]) if isinstance(base, str) else base
        self._secret = secret
        self._stop_lock = threading.Lock()  # one stop() at a time
        self._source = _StreamSource(self, redis, namespace, own_store, secret)
        #: The :class:`~service_client.Client` this worker is built around: its events come from
        #: the fleet's streams (its event source), it holds no socket. Attach a
        #: :class:`~service_client.CommandDispatcher` to it, and reach through it what the worker
        #: does not offer itself (``worker.client.load_commands(...)``).
        self.client = Client(base_url=base, socket_url=origin, site_url=site_url, workers=workers,
                             max_queued_events=_defaults.DEFAULT_MAX_QUEUED_EVENTS, bucket_store=bucket_store,
                             event_source=self._source)
        client = self.client
        # The client's listening API and requests, offered by the worker as they are (the same
        # bound methods, with their signatures and typed overloads).
        #: Register a listener: :meth:`Client.on <service_client.Client.on>`.
        self.on = client.on
        #: Register a listener that runs once: :meth:`Client.once <service_client.Client.once>`.
        self.once = client.once
        #: Remove a listener: :meth:`Client.off <service_client.Client.off>`.
        self.off = client.off
        #: The listeners of an event: :meth:`Client.listeners <service_client.Client.listeners>`.
        self.listeners = client.listeners
        #: Wait for an event: :meth:`Client.wait_for <service_client.Client.wait_for>`.
        self.wait_for = client.wait_for
        #: Send a message (through the socket's process): :meth:`Client.send_message
        #: <service_client.Client.send_message>`.
        self.send_message = client.send_message
        #: Call a REST route: :meth:`Client.api_call <service_client.Client.api_call>`.
        self.api_call = client.api_call

    # -- the client's caches and state -------------------------------------------------------

    @property
    def state(self) -> ClientState:
        """The client's lifecycle state: new, connecting (:meth:`start` runs), ready, destroyed (stopped)."""
        return self.client.state

    @property
    def user(self) -> User | None:
        """The bot's own user; None before :meth:`start` (the client's :attr:`~service_client.Client.user`)."""
        return self.client.user

    @property
    def users(self) -> UserManager:
        """The users met, keyed by user id (the client's :attr:`~service_client.Client.users`)."""
        return self.client.users

    @property
    def guilds(self) -> GuildManager:
        """The bot's servers, keyed by server id (the client's :attr:`~service_client.Client.guilds`)."""
        return self.client.guilds

    @property
    def channels(self) -> ChannelManager:
        """Every server's and DM's channels, keyed by channel id (the client's
        :attr:`~service_client.Client.channels`)."""
        return self.client.channels

    @property
    def members(self) -> MemberManager:
        """The members of every server, keyed by ``(server id, user id)`` (the client's
        :attr:`~service_client.Client.members`)."""
        return self.client.members

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
        self.client.on(name, listener)  # type: ignore[call-overload]  # the name is checked at run time
        return listener

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def partitions(self) -> list[int]:
        """The partitions this worker owns now, sorted (empty before :meth:`start`)."""
        source = getattr(self, "_source", None)
        consumer = None if source is None else source.consumer
        return [] if consumer is None else consumer.owned()

    @property
    def is_connected(self) -> bool:
        """True while the worker runs (started and not stopped)."""
        return self.client.state is ClientState.READY

    def login(self, token: str | None = None, *, timeout: float | None = None) -> None:
        """The same as :meth:`start` (a worker logs in with the token it was given).

        Raises:
            ServiceError: The worker was stopped (its token is forgotten); else as :meth:`start`.
            ValueError: ``token`` is given and is not the worker's token; else as :meth:`start`.
            ServiceAuthError, ServiceTimeoutError: As :meth:`start`.
        """
        if self.client.state is ClientState.DESTROYED:
            raise ServiceError("this worker was stopped; create a new FleetWorker")
        if token is not None and token != self._secret.get():
            raise ValueError("a FleetWorker logs in with the token given to its constructor")
        self.start(timeout=timeout)

    def start(self, *, timeout: float | None = None) -> None:
        """Join the fleet in the background; return once the worker is ready.

        Logs the worker's client in (:meth:`Client.login <service_client.Client.login>`
        with the fleet as its event source): fetches the bot's user and servers,
        waits for the namespace's partition count (set by the first publisher),
        creates the group on every partition stream, starts the threads and
        emits ``ready``. The partitions are acquired within a lease TTL.

        Args:
            timeout: Seconds for the whole start (default 30 s for the publisher, then the REST bounds).

        Raises:
            ServiceError: The worker is running or stopped, or :meth:`stop`
                was called meanwhile (it ends the start at once); or no
                publisher set the namespace's partition count within 30 s; or
                Redis could not be reached.
            ServiceAuthError: The service refused the token (an answer 401 to the
                first request), as :meth:`Client.login <service_client.Client.login>` raises.
            ServiceTimeoutError: ``timeout`` passed.
            ServiceAPIError: A REST call failed.
            ValueError: ``timeout`` is not a positive number.
        """
        state = self.client.state
        if state is ClientState.DESTROYED:
            raise ServiceError("this worker was stopped; create a new FleetWorker")
        if state is not ClientState.NEW:
            raise ServiceError(f"start() called on a worker that is already {state.value}")
        if self._secret.get() is None:
            raise ServiceAuthError("FleetWorker requires a bot token of visible ASCII characters.")
        try:
            # The fleet's streams are the client's event source. The token is read inline, never
            # kept in a local: no frame of a traceback this raises holds it.
            self.client.login(self._secret.get() or "", timeout=timeout)
        except ServiceAuthError as exc:
            if str(exc).startswith("login() requires"):
                raise ServiceAuthError("FleetWorker requires a bot token of visible ASCII characters.") from None
            raise

    def run(self, token: str | None = None) -> None:
        """Start, then block until :meth:`stop` is called or Ctrl-C (then stop gracefully).

        Args:
            token: None, or the worker's own token.

        Raises:
            ServiceError, ServiceAuthError, ServiceTimeoutError: As :meth:`start`.
        """
        try:
            self.login(token)
            while not self._source.stopped.wait(0.25):
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
        then destroys the worker's client (:meth:`Client.destroy
        <service_client.Client.destroy>`), which stops every thread.
        Events still running at the end are delivered again to the next owner.
        Called from a listener, it returns at once and the stop goes on in the
        background (``service_client-fleet-stop-<n>``), once that listener has returned.

        Args:
            timeout: Seconds the lanes may take, instead of ``drain_timeout``.
        """
        feed = self._source.feed
        if feed is not None and feed.on_worker_thread():
            # From a listener: the stop waits for the lanes, this one included, so it runs on a
            # thread of its own and this call returns at once.
            if not self._source.stopped.is_set():
                threading.Thread(target=self.stop, args=(timeout,), name=f"service_client-fleet-stop-{next(_stop_ids)}",
                                 daemon=True).start()
            return
        with self._stop_lock:
            if self.client.state is ClientState.DESTROYED:
                return
            consumer = self._source.consumer
            if consumer is not None:
                drained = consumer.drain(self.drain_timeout if timeout is None else timeout)
                if not drained:
                    log.warning("fleet worker %s stopped with events still running: they are delivered again",
                                self.name)
                consumer.leave()
            self.client.destroy()  # closes the source: see _StreamSource.close

    def destroy(self) -> None:
        """The same as :meth:`stop`."""
        self.stop()

    def to_dict(self) -> dict[str, Any]:
        """A safe snapshot: :meth:`Client.to_dict <service_client.Client.to_dict>` plus the fleet's figures."""
        out = self.client.to_dict()
        consumer = self._source.consumer
        out.update({"group": self.group, "name": self.name, "partitions": self.partitions,
                    "handled": consumer.handled if consumer else 0,
                    "dead_lettered": consumer.acks.dead_lettered if consumer else 0})
        return out

    def __repr__(self) -> str:
        client = getattr(self, "client", None)
        lifecycle = "new" if client is None else client.state.value  # None while the constructor runs
        return (f"<FleetWorker {getattr(self, 'name', None)!r} group={getattr(self, 'group', None)!r} "
                f"state={lifecycle} "
                f"partitions={len(self.partitions)} redis={getattr(self, 'redis_url', None)!r}>")

    __str__ = __repr__

    def __reduce__(self) -> Any:
        raise TypeError("a FleetWorker cannot be pickled: it holds live connections and a secret token")

    if not TYPE_CHECKING:  # type checkers see no such attribute: a hint at run time only
        def __getattr__(self, name: str) -> Any:
            """Called only for an attribute the worker lacks: a client's one names ``worker.client``."""
            if name in _CLIENT_NAMES:
                raise AttributeError(
                    f"'FleetWorker' object has no attribute {name!r}: a FleetWorker holds a Client and is not "
                    f"one; use worker.client.{name} (a CommandDispatcher attaches to worker.client)",
                    name=name, obj=self)
            raise AttributeError(f"'FleetWorker' object has no attribute {name!r}", name=name, obj=self)


class _StreamSource:
    """A worker's event source (see :class:`~service_client.client.source.EventSource`): the
    partitions it owns in its group, read by a :class:`~service_client.fleet.consumer.Consumer`.

    Args:
        worker: The worker (its group, name and bounds).
        redis: The worker's Redis client (closed by :meth:`close`).
        namespace: The publisher's namespace, or None for the bot's user id.
        own_store: The rate-limit store the worker made (closed by :meth:`close`), or None.
        secret: The worker's token (cleared by :meth:`close`).
    """

    def __init__(self, worker: FleetWorker, redis: Redis, namespace: str | None,
                 own_store: RedisBucketStore | None, secret: Secret) -> None:
        self._worker = worker
        self._redis = redis
        self._namespace = namespace
        self._own_store = own_store
        self._secret = secret
        #: Set once the source closes (the worker stopped): every fleet thread stops.
        self.stopped = threading.Event()
        #: Makes start() and the stop of close() exclusive: no thread starts once closed.
        self._lock = threading.Lock()
        #: The partitions' reader, from :meth:`open` on.
        self.consumer: Consumer | None = None
        #: The client's way in, from :meth:`open` on.
        self.feed: EventFeed | None = None
        self._sender: SendClient | None = None
        self._keys: FleetKeys | None = None

    def open(self, feed: EventFeed, deadline: float | None) -> None:
        """In the client's login: wait for the namespace's partitions and join the group.

        Raises:
            ServiceError: Redis could not be reached, no publisher set the partition count
                within 30 s, or the worker was stopped meanwhile.
            ServiceTimeoutError: ``deadline`` passed.
        """
        worker = self._worker
        user = feed.user
        assert user is not None  # known before a source is opened
        self.feed = feed
        feed.state.no_socket = NO_SOCKET
        keys = self._keys = FleetKeys(self._namespace or user.id, worker.group)
        errors = redis_errors()
        retry = RetryWait(self.stopped)
        wait_until = time.monotonic() + _META_WAIT_S
        if deadline is not None:
            wait_until = min(wait_until, deadline)
        partitions = 0
        while not partitions:
            if self.stopped.is_set():  # stop() during start(): Redis is let go, nothing more to wait for
                raise ServiceError("the worker was stopped while it started")
            try:
                partitions = int(self._redis.hget(keys.meta, "partitions") or 0)
                if partitions:
                    consumer = Consumer(worker, feed, self._redis, keys, partitions=partitions)
                    consumer.state_after = self._state_position(keys)
                    consumer.create_groups()
                    self.consumer = consumer
                    break
            except errors as exc:
                if time.monotonic() > wait_until:
                    raise ServiceError(f"the worker could not reach Redis at {worker.redis_url} "
                                       f"({type(exc).__name__})") from None
                retry.wait()
                continue
            if time.monotonic() > wait_until:
                if deadline is not None and time.monotonic() >= deadline:
                    raise ServiceTimeoutError("FleetWorker.start() did not complete in time")
                raise ServiceError(f"no EventPublisher has set up namespace {keys.namespace!r} in Redis "
                                   f"at {worker.redis_url} within {_META_WAIT_S:g} s (start the socket's process)")
            self.stopped.wait(0.1)

    def start(self) -> None:
        """In the client's login, the caches filled: the sends and the reading threads start.

        Raises:
            ServiceError: The worker was stopped meanwhile (no thread is started).
        """
        consumer, keys, feed = self.consumer, self._keys, self.feed
        assert consumer is not None and keys is not None and feed is not None  # set by open
        worker = self._worker
        state = feed.state
        with self._lock:  # a close() racing this start either comes first (nothing starts) or stops them all
            if self.stopped.is_set():
                raise ServiceError("the worker was stopped while it started")
            sender = self._sender = SendClient(self._redis, keys, worker.instance.replace("/", "-"), self.stopped)
            sends = FleetSends(sender, SharedFetches(self._redis, keys, self.stopped))
            state.send_hook = sends.send  # send_message and reply go to the socket's process
            state.fetch_hook = sends.fetch
            sender.start()
            consumer.start()
        user = feed.user
        log.info("fleet worker %s of group %s ready as %s (%d partitions in namespace %s)", worker.name,
                 worker.group, user.tag_string if user is not None else "?", consumer.partition_count,
                 keys.namespace)

    def close(self) -> None:
        """In the client's destroy: every fleet thread stops, Redis is let go, the token forgotten."""
        with self._lock:  # after a start() that is starting threads: they are stopped below
            self.stopped.set()
        consumer = self.consumer
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
