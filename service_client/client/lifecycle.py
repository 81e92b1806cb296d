"""The blocking :class:`Client`: lifecycle, authentication, connection and state.

The client's other methods come from its bases: the event methods (``on``,
``once``, ``off``, ``listeners``, ``wait_for``, custom events) from
:mod:`service_client.client.listeners`, the operations a logged-in bot
calls (``api_call``, ``send_message``, presence...) from
:mod:`service_client.client.operations`, scheduled work from
:mod:`service_client.client.scheduling`, and the cog and extension methods
(``add_cog``, ``load_extension``...) from :mod:`service_client.client.extensions`. The caches, the socket event parsers
and the nonce-keyed sends live in the client's connection state
(:class:`~service_client.state.ConnectionState`), which every model holds.

Connection lifecycle: after
``ready``, a lost transport or a service-initiated disconnect emits
``disconnect(reason)`` and the socket reconnects in the background without
limit (``reconnect_base`` 1 s doubling to ``reconnect_cap`` 30 s, +/- 50 %
jitter); on recovery ``reconnect`` is emitted and the guild cache is
reconciled with the service before any later event reaches listeners. The
loss and the return are each logged as one WARNING line of the
``service_client.client`` logger, so they show even where logging was never
configured (Python prints WARNING and above to stderr then). While
disconnected, socket operations raise :class:`ServiceAuthError` at once and
REST calls keep working; pending sends and voice joins are not failed by
the cut, each ends by its own bound (events missed offline are lost, except
the new messages a ``catch_up`` policy reads back: see
:mod:`service_client.client.catchup`). A
reconnection refused for the token stops the attempts and emits ``error``
with a :class:`ServiceAuthError`.

Threads a client starts, all daemons, all stopped by :meth:`Client.destroy`:

- ``service_client-gateway-<n>``: the socket reader (decodes packets in order,
  applies cache updates, never runs listeners), plus the reconnect loop
  (``service_client-reconnect-<n>``) and, per connection, a write watchdog
  (``service_client-gateway-watchdog-<n>``) that drops a connection whose
  write stalled past its bound, and per connection attempt a guard
  (``service_client-gateway-handshake-<n>``) that ends it at its deadline;
- ``service_client-rest-<n>``: the REST session's workers (5 requests on the
  wire at most, strict FIFO);
- ``service_client-events-<n>``: the worker pool that runs listeners, keeping
  the order of one channel's (else one server's) events;
- ``service_client-waiters-<n>``: completes ``wait_for`` calls;
- ``service_client-scheduler-<n>``: hands ``call_later`` and ``every`` work to the pool;
- ``service_client-catchup-<n>``: with ``catch_up``, after each reconnect, reads back the
  messages missed (it stops between requests once the client is destroyed).
"""

from __future__ import annotations

import datetime as _dt
import enum
import json
import logging
import sys
import threading
import time
import weakref
from collections.abc import Iterable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as _FutureTimeout
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .. import _defaults, endpoints
from .._defaults import MISSING
from .._secret import REDACTED, Secret
from .._version import __version__
from ..errors import DuplicateClientWarning, ServiceAPIError, ServiceAuthError, ServiceError, ServiceTimeoutError
from ..events._drops import _logging_reaches_a_handler
from ..events.emitter import EventEmitter
from ..events.scheduler import Scheduler
from ..events.workers import OrderedWorkerPool
from ..models.collection import Collection
from ..models.user import User
from ..rest.buckets import BucketStore
from ..rest.retry import DEFAULT_RETRY, RetryPolicy
from ..rest.route import Route
from ..state.connection import RECONCILE_MAX_RETRIES, RECONCILE_TIMEOUT_MS, ConnectionState, check_max_messages
from .catchup import CatchUp, CatchUpResult, CatchUpRunner, ChannelMark, catch_up
from .extensions import ClientExtensions
from .listeners import ClientEvents
from .operations import ClientOperations
from .scheduling import ClientScheduling
from .source import EventFeed, EventSource
from .urls import check_hosts, check_pair, validate_url, warn_always
from .voice import VoiceManager

if TYPE_CHECKING:
    from ..commands import Command
    from ..gateway.connection import GatewayConnection
    from ..managers.channels import ChannelManager
    from ..managers.guilds import GuildManager
    from ..managers.members import MemberManager
    from ..managers.users import UserManager
    from ..managers.voice_states import VoiceStateManager
    from ..rest.seam import Transport

__all__ = ["Client", "ClientState", "MISSING", "RECONCILE_MAX_RETRIES", "RECONCILE_TIMEOUT_MS"]

log = logging.getLogger("service_client.client")

_LIFECYCLE_KEY = "__lifecycle__"


#: Every Client not yet garbage-collected (weak references), guarded by ``_CLIENTS_LOCK``:
#: the pytest plugin reports the clients a test leaves running.
_CLIENTS: weakref.WeakSet[Client] = weakref.WeakSet()
_CLIENTS_LOCK = threading.Lock()


def _warn_visibly(text: str) -> None:
    """One WARNING line of the ``service_client.client`` logger, seen with no logging configured.

    The package's NullHandler keeps Python's last-resort handler quiet, so when no handler of
    the application would get the record, the line is printed on ``sys.stderr`` in the
    last-resort handler's form (``WARNING:service_client.client:...``). A level raised above
    WARNING on the logger (or a parent) silences it either way.
    """
    if not log.isEnabledFor(logging.WARNING):
        return
    if _logging_reaches_a_handler(log):
        log.warning("%s", text)
        return
    try:
        sys.stderr.write(f"WARNING:{log.name}:{text}\n")
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - stderr closed or replaced by something broken
        pass


def _live_clients() -> list[Client]:
    """A snapshot of every Client created in this process and not yet garbage-collected."""
    with _CLIENTS_LOCK:
        return list(_CLIENTS)


class ClientState(enum.Enum):
    """Lifecycle of a :class:`Client`: new -> connecting -> ready -> destroyed."""

    NEW = "new"
    CONNECTING = "connecting"
    READY = "ready"
    DESTROYED = "destroyed"


class Client(ClientEvents, ClientOperations, ClientScheduling, ClientExtensions):
    """A bot's connection to the service: socket, REST session, caches and events.

    Thread-safe:
    every method may be called from any thread, including from inside a
    listener.

    Args:
        base_url: REST base ending in ``/v2``; default ``Client.base_url``.
        socket_url: Socket host; default ``Client.socket_url``.
        site_url: Public web site (invite links); default: the origin of ``base_url``.
        workers: Threads of the listener pool (default 8).
        max_queued_events: Most events waiting for listeners (queued or
            running), in all (default 100,000); one channel (else server) may
            hold at most ``max_queued_events // workers`` of them. An event past
            either bound is dropped, never delivered to listeners (``wait_for``
            still sees it): counted in :attr:`dropped_events` and reported in a
            WARNING on the ``service_client.events`` logger (``sys.stderr``
            when logging is not configured), at most one line every 10 s.
        max_retry_after: Longest ``Retry-After`` waited out, seconds (longer
            ones end the call at once: :class:`RateLimitError` for a 429,
            :class:`ServiceAPIError` for any other status).
        retry: How REST calls are retried: a
            :class:`~service_client.RetryPolicy` (which statuses, how many
            retries, the backoff and its jitter); its defaults when omitted.
            ``api_call(max_retries=n)`` is this policy with ``n`` retries.
        transport: What sends the REST requests (see
            :class:`~service_client.rest.Transport`): the network by default;
            ``MockTransport(handler)`` answers them in memory, for unit tests.
        max_body_bytes: Largest REST answer body read, bytes once decoded
            (gzip, deflate); 16 MiB by default. A longer answer is not read
            further and its call raises :class:`ServiceAPIError`.
        reconnect_base: First reconnect delay, seconds (default 1).
        reconnect_cap: Longest reconnect delay, seconds (default 30).
        bucket_store: Where the REST session keeps its rate-limit buckets: a
            private in-process table by default; a
            :class:`~service_client.rest.RedisBucketStore` shares them with
            the bot's other processes. A store passed in is not closed by
            :meth:`destroy`.
        max_messages: Recent messages kept whole, as received, so that a
            reaction event carries its message (``info.message``): at least
            the last this many, fewer than twice as many (1,000 by default;
            each costs about 300 bytes, more with long texts or embeds). None
            keeps none; the channel of the last 10,000 message ids is kept
            anyway, so that reaction events keep their channel's order.
        catch_up: After a reconnect, read back the messages posted meanwhile
            in the channels active within the policy's window, and hand them
            to listeners as ``message_create`` with ``message.replayed`` True
            (see :class:`~service_client.CatchUp`: its budget, what it
            replays). None (default): nothing missed offline is replayed.
        event_source: Where the service's events come from instead of the socket
            (an :class:`~service_client.client.source.EventSource`: the events
            fleet's streams, recorded frames in a test). ``login`` then opens no
            socket: it reads the bot's user over REST, hands the source an
            :class:`~service_client.client.source.EventFeed`, fills the server
            cache and starts the source; ``destroy`` closes it. Caches,
            listeners, ``wait_for`` and commands work as usual; socket operations
            raise :class:`ServiceAuthError`. None (default): the socket.

    Raises:
        TypeError: An argument has the wrong type (``retry`` not a
            :class:`~service_client.RetryPolicy`).
        ValueError: A URL is not http(s)/ws(s), ``workers`` is not positive or
            ``max_queued_events``, ``max_body_bytes`` or ``max_messages`` is
            below 1;
            or only one of ``base_url`` / ``socket_url`` is given, pointing at
            another host (the emulator...), while the other would be the real
            service's default: the token would be sent to the real service.
            Pass both.

    Warns:
        InsecureHostWarning: At every construction whose URLs point to a host
            other than the service's or localhost, and separately when a
            protocol is not https outside localhost/127.0.0.1.
    """

    #: Default REST base (a subclass may override it).
    base_url: str = _defaults.DEFAULT_BASE_URL
    #: Default socket host (a subclass may override it).
    socket_url: str = _defaults.DEFAULT_SOCKET_URL

    def __init__(
        self,
        *,
        base_url: str | None = None,
        socket_url: str | None = None,
        site_url: str | None = None,
        workers: int = _defaults.DEFAULT_WORKERS,
        max_queued_events: int = _defaults.DEFAULT_MAX_QUEUED_EVENTS,
        max_retry_after: float = _defaults.DEFAULT_MAX_RETRY_AFTER_S,
        reconnect_base: float = _defaults.RECONNECT_BASE_S,
        reconnect_cap: float = _defaults.RECONNECT_CAP_S,
        bucket_store: BucketStore | None = None,
        max_body_bytes: int = _defaults.DEFAULT_MAX_BODY_BYTES,
        max_messages: int | None = _defaults.DEFAULT_MAX_MESSAGES,
        catch_up: CatchUp | None = None,
        retry: RetryPolicy | None = None,
        transport: Transport | None = None,
        event_source: EventSource | None = None,
    ) -> None:
        if catch_up is not None and not isinstance(catch_up, CatchUp):
            raise TypeError(f"catch_up must be a CatchUp or None, got {type(catch_up).__name__}")
        if event_source is not None and not isinstance(event_source, EventSource):
            raise TypeError("event_source must have open(feed, deadline), start() and close() methods, got "
                            f"{type(event_source).__name__}")
        base = validate_url("base_url", base_url if base_url is not None else type(self).base_url)
        sock = validate_url("socket_url", socket_url if socket_url is not None else type(self).socket_url)
        if site_url is None:
            parts = urlsplit(base)
            site_url = f"{parts.scheme}://{parts.netloc}"
        elif not isinstance(site_url, str):
            raise TypeError(f"site_url must be a str, got {type(site_url).__name__}")
        if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
            raise ValueError(f"workers must be a positive int, got {workers!r}")
        if isinstance(max_queued_events, bool) or not isinstance(max_queued_events, int):
            raise TypeError(f"max_queued_events must be an int, got {type(max_queued_events).__name__}")
        if max_queued_events < 1:
            raise ValueError(f"max_queued_events must be at least 1, got {max_queued_events!r}")
        check_max_messages(max_messages)
        for arg, value in (
            ("max_retry_after", max_retry_after),
            ("reconnect_base", reconnect_base),
            ("reconnect_cap", reconnect_cap),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{arg} must be a number of seconds, got {type(value).__name__}")
            if not value > 0 or value != value or value == float("inf"):
                raise ValueError(f"{arg} must be a finite number of seconds > 0, got {value!r}")
        check_pair(base_url, socket_url, base, sock)
        self.base_url = base.rstrip("/")
        self.socket_url = sock.rstrip("/")
        self.site_url = site_url.rstrip("/")
        check_hosts(self.base_url, self.socket_url)

        self._lifecycle = ClientState.NEW
        self._lifecycle_lock = threading.RLock()  # guards _lifecycle, _gateway, _token
        self._token = Secret(None)
        # The token tracebacks are redacted with. Unlike _token it outlives destroy() for as long
        # as a listener that started before it still runs (its traceback must not print the
        # token), and is cleared as soon as none does.
        self._redaction = Secret(None)
        self._logged_in_here = False  # login() (not a subclass's own start) set the token
        self._destroyed = threading.Event()
        self._reconnect_base = reconnect_base
        self._reconnect_cap = reconnect_cap

        from ..rest.session import RestSession  # requests and urllib3 load here, not at import

        self._rest = RestSession(
            self.base_url,
            user_agent=f"service_client/{__version__} (python)",
            max_retry_after=max_retry_after,
            max_body_bytes=max_body_bytes,
            bucket_store=bucket_store,
            retry=DEFAULT_RETRY if retry is None else retry,
            transport=transport,
        )
        self._pool = OrderedWorkerPool(workers, max_queued_events=max_queued_events)
        self._events = EventEmitter(self._pool, redact=self._redact, closing=self._destroyed.is_set)
        self._scheduler = Scheduler(self._pool, self._events)
        self._custom_events: frozenset[str] = frozenset()  # names given to register_event()
        self._custom_events_lock = threading.Lock()  # guards replacing _custom_events
        self._gateway: GatewayConnection | None = None
        #: The caches, parsers and sends every model of this client holds (``model._state``).
        self._connection = ConnectionState(
            self, rest=self._rest, events=self._events, pool=self._pool, site_url=self.site_url,
            max_messages=max_messages,
        )

        #: UTC time of the first successful connection; None before ready and after destroy.
        self.ready_at: _dt.datetime | None = None
        self.voice = VoiceManager(self._connection)
        #: The catch-up after a reconnect (None without ``catch_up``).
        self.catch_up = None if catch_up is None else CatchUpRunner(self._connection, catch_up, self._destroyed)
        self._connection.voice_hook = self.voice._on_event
        self._source = event_source
        if event_source is not None:
            self._connection.no_socket = (
                "this client is fed by an event source and holds no socket: do socket operations (presence, "
                "typing, voice, sends over the socket) in the process that holds it, or over REST")
        #: Loaded commands by name (see :meth:`load_commands`).
        self.commands: Collection[str, Command] = Collection()
        with _CLIENTS_LOCK:
            _CLIENTS.add(self)

    # -- state ---------------------------------------------------------------

    @property
    def state(self) -> ClientState:
        """The lifecycle state (a :class:`ClientState`)."""
        return self._lifecycle

    # -- the caches (held by the connection state) -------------------------------------

    @property
    def retry(self) -> RetryPolicy:
        """The retry policy of this client's REST calls (``Client(retry=...)``), read-only."""
        return self._rest.retry

    @property
    def user(self) -> User | None:
        """The bot's own :class:`User`; None before ``ready``."""
        return self._connection.user

    @user.setter
    def user(self, value: User | None) -> None:
        """Set the logged-in user (the connection state holds it)."""
        self._connection.user = value

    @property
    def users(self) -> UserManager:
        """Every user met (message authors, members, DM recipients), keyed by user id."""
        return self._connection.users

    @property
    def guilds(self) -> GuildManager:
        """The servers the bot is in (filled at login), keyed by server id."""
        return self._connection.guilds

    @property
    def channels(self) -> ChannelManager:
        """One cache of the channels of every server and DM, keyed by channel id."""
        return self._connection.channels

    @property
    def members(self) -> MemberManager:
        """The members of every server, keyed by ``(server id, user id)``."""
        return self._connection.members

    @property
    def voice_states(self) -> VoiceStateManager:
        """The current voice state of each known user, keyed by user id."""
        return self._connection.voice_states

    @property
    def connection_state(self) -> ConnectionState:
        """The client's connection state, the object every model of this client holds.

        Its caches, socket event parsers, REST requests
        (:meth:`~service_client.state.ConnectionState.request`) and nonce-keyed sends, and the
        hooks of parts built on a client: an event tap that sees each socket event the
        parsers apply (``event_tap``, set by an
        :class:`~service_client.fleet.EventPublisher`), and the send and fetch hooks of
        an event source (see :mod:`service_client.client.source`). A bot rarely needs it:
        the client's own methods and managers cover what a bot does. Read-only (the same
        object for the client's whole life).
        """
        return self._connection

    @property
    def uptime(self) -> int | None:
        """Milliseconds since :attr:`ready_at`, or None when not ready."""
        ready_at = self.ready_at
        if ready_at is None:
            return None
        return int((_dt.datetime.now(_dt.timezone.utc) - ready_at).total_seconds() * 1000)

    @property
    def is_connected(self) -> bool:
        """True while the socket's namespace is connected (not merely opened)."""
        if self._source is not None:  # fed by its event source: connected while ready
            return self._lifecycle is ClientState.READY
        gateway = self._gateway
        return gateway is not None and gateway.connected

    @property
    def dropped_events(self) -> int:
        """Events dropped, never delivered to listeners, because ``max_queued_events`` were waiting.

        Counted since the client was created; each drop is also logged (see
        ``max_queued_events``).
        """
        return self._pool.dropped_events

    def _dispatch(self, event: str, *args: Any, key: str | None = None) -> None:
        """Run the listeners of ``event`` on the pool (library use)."""
        self._connection.dispatch(event, *args, key=key)

    def _redact(self, text: str) -> str:
        """``text`` with the bot token (as is, or escaped as a server may quote it) replaced by
        ``[REDACTED]``: for printed tracebacks, and the server's texts the socket quotes in errors."""
        return self._redaction.mask(text)

    # -- lifecycle -------------------------------------------------------------

    def login(self, token: str, *, timeout: float | None = None) -> None:
        """Connect, preload the bot's user and servers, and return at ``ready``.

        State new -> connecting -> ready. Steps: socket CONNECT with
        ``{"token": token}``; ``GET /auth/me`` sets :attr:`user`;
        ``guilds.fetch_all()`` fills :attr:`guilds` and the bot's members; then
        :attr:`ready_at` is set and ``ready`` emitted, and this call returns.

        Args:
            token: The bot token.
            timeout: Seconds for the whole login; None for the built-in bounds
                (15 s socket connect, then the REST timeouts).

        Raises:
            ServiceAuthError: ``token`` is not a non-empty str (message
                "login() requires a non-empty bot token string."), or the service
                refused it (socket ``connect_error``).
            ServiceError: The client is connecting, ready or destroyed; or it
                could not connect or preload (cause chained).
            ServiceTimeoutError: ``timeout`` seconds passed.

        After any failure nothing keeps running, the token is forgotten and the
        client never becomes ready later (a new Client is needed). No frame of
        the traceback holds the token or the CONNECT packet carrying it, so
        tools that record frame locals (error trackers, ``pytest
        --showlocals``) never see it.
        """
        if not isinstance(token, str) or not token.strip():
            raise ServiceAuthError("login() requires a non-empty bot token string.")
        if timeout is not None and (not isinstance(timeout, (int, float)) or timeout <= 0):
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        secret = Secret(token)
        # From here on the token lives only in Secret objects: no frame of a traceback this
        # call raises (which tools may record with its local variables) holds it.
        del token
        if self._source is None:  # a socket's client gets every event: two of them run listeners twice
            self._warn_if_token_in_use(secret)  # before any change: a warning made an error leaves it new
        with self._lifecycle_lock:
            if self._lifecycle is ClientState.DESTROYED:
                raise ServiceError("this client was destroyed; create a new Client to log in again")
            if self._lifecycle is not ClientState.NEW:
                raise ServiceError(f"login() called on a client that is already {self._lifecycle.value}")
            if not self._set_rest_token(secret):
                raise ServiceAuthError(
                    "login() requires a bot token of visible ASCII characters (it goes in an HTTP header)."
                )
            self._lifecycle = ClientState.CONNECTING
            self._token = secret
            self._redaction = Secret(secret.get())
            self._logged_in_here = self._source is None
        del secret
        if timeout is None:
            try:
                self._login_steps(None)
            except BaseException:
                self._fail_login()
                raise
            return
        deadline = time.monotonic() + timeout
        done: Future[None] = Future()

        def runner() -> None:
            """Run the blocking work on this thread and complete the Future with its outcome."""
            try:
                self._login_steps(deadline)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller through the Future
                done.set_exception(exc)
            else:
                done.set_result(None)

        thread = threading.Thread(target=runner, name="service_client-login-0", daemon=True)
        thread.start()
        try:
            done.result(timeout)
        except _FutureTimeout:
            self._fail_login()
            thread.join(_defaults.DESTROY_JOIN_S)
            raise ServiceTimeoutError(f"login() did not complete within {timeout}s") from None
        except BaseException:
            self._fail_login()
            thread.join(_defaults.DESTROY_JOIN_S)
            raise

    def use_token(self, token: str) -> None:
        """Authenticate this client's REST requests with ``token`` without logging in.

        For a process that needs REST requests only: no socket is opened, no event
        arrives, the caches are not filled and the lifecycle state stays new (a
        :class:`~service_client.fleet.StandbySocket` learns the bot's user id this way,
        with a client it then destroys). :meth:`login` may still be called later, with
        its own token; :meth:`destroy` forgets the token. The token is replaced by
        ``[REDACTED]`` in the tracebacks the client reports, as after :meth:`login`.
        Thread-safe.

        Args:
            token: The bot token.

        Raises:
            ServiceAuthError: ``token`` is not a non-empty str of visible ASCII characters
                (it goes in an HTTP header).
            ServiceError: The client is not new (logging in, ready or destroyed).
        """
        if not isinstance(token, str) or not token.strip():
            raise ServiceAuthError("use_token() requires a non-empty bot token string.")
        secret = Secret(token)
        del token  # from here on only Secret objects hold it (no frame of a traceback shows it)
        with self._lifecycle_lock:
            if self._lifecycle is not ClientState.NEW:
                raise ServiceError(f"use_token() called on a client that is {self._lifecycle.value}")
            if not self._set_rest_token(secret):
                raise ServiceAuthError(
                    "use_token() requires a bot token of visible ASCII characters (it goes in an HTTP header)."
                )
            self._token = secret
            self._redaction = Secret(secret.get())  # masked in tracebacks, as after login()

    def catch_up_from(self, marks: Iterable[ChannelMark], policy: CatchUp | None = None) -> CatchUpResult:
        """Read back now, on this thread, the messages posted in each channel after its mark.

        As a catch-up after a reconnect does (see :mod:`service_client.client.catchup`):
        each channel's history is read newest first down to its mark, and each message
        found is handed, oldest first, to the event tap (an
        :class:`~service_client.fleet.EventPublisher` publishes it) and to the listeners
        as ``message_create`` with :attr:`Message.replayed
        <service_client.Message.replayed>` True. A message is handed on once: never one
        the client delivered live and still remembers, and, with ``Client(catch_up=...)``,
        never one the client's own catch-ups replayed (they share one memory). A process
        taking over a bot's socket calls it once logged in, with the channels' marks of
        the process it replaces (see :class:`~service_client.fleet.StandbySocket`).
        Requests stop once the client is destroyed.

        Args:
            marks: Each channel's newest message already handled (most recently active
                channels first: the budget reaches them first).
            policy: The budget; default the client's ``catch_up`` policy, else
                :class:`~service_client.CatchUp`'s defaults.

        Returns:
            What was read back (a :class:`~service_client.client.catchup.CatchUpResult`).
            A request that fails ends its channel's catch-up (logged at WARNING, counted
            in ``incomplete``); nothing is raised.

        Raises:
            TypeError: ``marks`` is not an iterable of
                :class:`~service_client.client.catchup.ChannelMark` (checked before any
                request), or ``policy`` is not a :class:`~service_client.CatchUp` or None.
        """
        if policy is not None and not isinstance(policy, CatchUp):
            raise TypeError(f"policy must be a CatchUp or None, got {type(policy).__name__}")
        try:
            marks = list(marks)
        except TypeError:
            raise TypeError(f"marks must be an iterable of ChannelMark, got {type(marks).__name__}") from None
        for mark in marks:
            if not isinstance(mark, ChannelMark):
                raise TypeError(f"marks must be an iterable of ChannelMark, got a {type(mark).__name__} in it")
        runner = self.catch_up
        if runner is None:
            runner = CatchUpRunner(self._connection, policy or CatchUp(), self._destroyed)
        return catch_up(self._connection, policy or runner.policy, marks, seen=runner.seen, emit=runner.emit,
                        stopped=self._destroyed.is_set)

    def _warn_if_token_in_use(self, secret: Secret) -> None:
        """Warn (:class:`DuplicateClientWarning`) when another client of this process that
        logged in with :meth:`login` holds the same token and is connecting or ready."""
        # The token is read inline, never kept in a local: a warning made an error must leave
        # no frame holding it.
        others = [
            other for other in _live_clients()
            if other is not self and getattr(other, "_logged_in_here", False)
            and other._lifecycle in (ClientState.CONNECTING, ClientState.READY)
            and other._token.get() == secret.get()
        ]
        if others:
            shown = ", ".join(repr(other) for other in others[:3])
            warn_always(
                f"{len(others)} other live Client(s) of this process use this token ({shown}): every event "
                "reaches each of them, so a listener registered on both runs twice. Destroy the old one "
                "first (client.destroy()), or every client of the process with Client.destroy_all().",
                DuplicateClientWarning,
            )

    @classmethod
    def destroy_all(cls) -> int:
        """Destroy every live client of this class (subclasses included) in this process.

        For a notebook whose login cell ran several times, or a script's cleanup: each
        client that is not destroyed yet is destroyed, as :meth:`destroy` does, one after
        another. Thread-safe. The client of a :class:`~service_client.fleet.FleetWorker`
        (``worker.client``) is one of them: its worker stops at once, without the graceful
        hand-off of ``worker.stop()`` (the next owners of its partitions wait out its leases).

        Returns:
            How many clients were destroyed by this call.
        """
        destroyed = 0
        for client in _live_clients():
            if isinstance(client, cls) and client._lifecycle is not ClientState.DESTROYED:
                client.destroy()
                destroyed += 1
        return destroyed

    def _set_rest_token(self, secret: Secret) -> bool:
        """Give the REST session the token; False when it is not a valid header value."""
        try:
            self._rest.token = secret.get()
        except ValueError:
            return False
        return True

    def _login_steps(self, deadline: float | None) -> None:
        if self._source is not None:
            self._source_login_steps(self._source, deadline)
            return
        from ..gateway.connection import GatewayConnection  # websocket-client loads here

        gateway = GatewayConnection(
            self.socket_url,
            auth=self._socket_auth,
            on_event=self._connection.parsers.handle,
            frame_decoders=self._connection.parsers.frame_decoders(GatewayConnection.json_decoder),
            on_connect=self._on_socket_connect,
            on_disconnect=self._on_socket_disconnect,
            on_error=self._on_socket_error,
            reconnect_base=self._reconnect_base,
            reconnect_cap=self._reconnect_cap,
            redact=self._redact,
            event_frames=True,  # an event tap may store a frame in place of encoding its args again
        )
        with self._lifecycle_lock:
            if self._lifecycle is not ClientState.CONNECTING:
                raise ServiceError("login() was interrupted by destroy()")
            self._gateway = gateway
            self._connection.gateway = gateway
        connect_timeout = _defaults.CONNECT_TIMEOUT_S
        if deadline is not None:
            connect_timeout = max(0.01, min(connect_timeout, deadline - time.monotonic()))
        gateway.connect(timeout=connect_timeout)
        self._fetch_me()
        self.guilds.fetch_all()
        self._become_ready()

    def _source_login_steps(self, source: EventSource, deadline: float | None) -> None:
        """login() with an event source: no socket; the source is opened, then started."""
        self._fetch_me()
        source.open(EventFeed(self._connection, self._pool, self._redact), deadline)
        self.guilds.fetch_all()
        with self._lifecycle_lock:
            if self._lifecycle is not ClientState.CONNECTING:
                raise ServiceError("login() was interrupted by destroy()")
        source.start()
        self._become_ready()

    def _fetch_me(self) -> None:
        """``GET /auth/me``: the bot's own user, cached and set as :attr:`user`."""
        try:
            me = self._rest.request(Route(endpoints.GET_ME))
        except ServiceAPIError as exc:
            if exc.status == 401 and self._source is not None:  # (a socket refuses a bad token before this)
                raise ServiceAuthError(f"the service refused the bot token ({exc.status} at "
                                       f"{endpoints.GET_ME.method} {endpoints.GET_ME.path})") from exc
            if exc.status != 404:
                raise
            # Every REST base answers /auth/me: a 404 says the base is not one.
            raise ServiceAPIError(
                exc.status, exc.path, exc.body, exc.data,
                message=(f"API Error 404: GET {self.base_url}{endpoints.GET_ME.path} found nothing: base_url does not look "
                         "like the service's REST base, whose path ends in the API version segment "
                         "(the emulator's is http://host:port/api/v2; did it lose its /api/v2?)"),
            ) from exc
        if not isinstance(me, dict) or not isinstance(me.get("user"), dict):
            raise ServiceError(f"GET {self.base_url}{endpoints.GET_ME.path} did not return a user record")
        state = self._connection
        user = User(state, me["user"])
        state.users.cache.setdefault(user.id, user)
        state.user = user

    def _become_ready(self) -> None:
        """The last login step: ``ready`` (unless destroy() came first)."""
        user = self._connection.user
        assert user is not None  # set by _fetch_me
        with self._lifecycle_lock:
            if self._lifecycle is not ClientState.CONNECTING:
                raise ServiceError("login() was interrupted by destroy()")
            self.ready_at = _dt.datetime.now(_dt.timezone.utc)
            self._lifecycle = ClientState.READY
        log.info("ready as %s in %d servers", user.tag_string, len(self.guilds.cache))
        self._scheduler.set_ready()  # start_on_ready tasks start, wait_until_ready returns
        self._dispatch("ready", key=_LIFECYCLE_KEY)

    def _fail_login(self) -> None:
        self._shutdown(final_state=ClientState.DESTROYED)

    def run(self, token: str) -> None:
        """Log in, then block until :meth:`destroy` is called or Ctrl-C.

        The script entry point. No signal handler is installed: Ctrl-C arrives
        as ``KeyboardInterrupt`` in this thread, which destroys the client and
        returns.

        Args:
            token: The bot token.

        Raises:
            ServiceAuthError, ServiceError, ServiceTimeoutError: As :meth:`login`.
        """
        try:
            self.login(token)
            while not self._destroyed.wait(0.25):
                pass
        except KeyboardInterrupt:
            log.info("interrupted; destroying the client")
        finally:
            self.destroy()

    def destroy(self) -> None:
        """Disconnect and stop everything; idempotent, from any thread or listener.

        State -> destroyed (final).
        Leaves voice, closes the socket with no reconnection, ends pending
        ``send_message`` calls and queued or sleeping REST calls with
        :class:`ServiceError`, removes every listener, clears the token, sets
        :attr:`ready_at` to None. (A private copy that keeps the traceback of a
        listener still running redacted lives until the listeners that started before
        this call have returned; then nothing reachable from the client holds the
        token.) Pending voice joins and ``wait_for`` calls end at once with
        :class:`ServiceError`, cancels scheduled work, then emits ``client_close``
        and waits for its listeners (5 s at most). Every client thread has stopped
        when it returns (within about 1 s), except the calling thread itself
        and a worker still running a listener, which ends as soon as that
        listener returns (queued events are dropped). Caches are left as they
        are but never updated again. Reuse raises: ``login`` a
        :class:`ServiceError`, socket operations and ``api_call`` a
        :class:`ServiceAuthError`.
        """
        self._shutdown(final_state=ClientState.DESTROYED)

    def _shutdown(self, *, final_state: ClientState) -> None:
        with self._lifecycle_lock:
            if self._destroyed.is_set():
                return
            self._destroyed.set()
            self._lifecycle = final_state
            gateway, self._gateway = self._gateway, None
            self._connection.close()
            self._token.clear()
            self.ready_at = None
        self._close_scheduled_work()
        voice = self.voice
        if voice is not None:
            try:  # leave voice first, through the socket just detached from the client
                voice._shutdown(gateway.emit if gateway is not None and gateway.connected else None)
            except Exception:
                log.exception("leaving voice failed during destroy")
        if gateway is not None:
            gateway.close()
        if self._source is not None:
            try:
                self._source.close()
            except Exception:
                log.exception("closing the event source failed during destroy")
        self._rest.token = None
        self._rest.close()
        if self.catch_up is not None:
            self.catch_up.close(_defaults.DESTROY_JOIN_S / 2)  # its request ended with the session
        self._events.close(_defaults.DESTROY_JOIN_S / 2)
        self._pool.shutdown(_defaults.DESTROY_JOIN_S / 2)
        self._pool.when_idle(self._redaction.clear)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.destroy()

    # -- socket callbacks (reader / reconnect thread; keep them quick) --------

    def _socket_auth(self) -> dict[str, str] | None:
        token = self._token.get()
        return None if token is None else {"token": token}

    def _on_socket_connect(self, first: bool) -> None:
        # Reader thread, before any event of this connection.
        if first or self._lifecycle is not ClientState.READY:
            return
        _warn_visibly("connection to the service is back (reconnected)")
        self._dispatch("reconnect", key=_LIFECYCLE_KEY)
        # From here on, live server events are remembered, so the reconcile's list
        # (which may predate them) never overrides what they did.
        self._connection.begin_reconcile()
        # A barrier: events that arrive from now on wait until the guild cache
        # is reconciled (and its guild_create / guild_delete announced).
        if not self._pool.submit_barrier(self._reconcile_guilds, key=_LIFECYCLE_KEY):
            self._connection.end_reconcile()
        if self.catch_up is not None:
            self.catch_up.reconnected()

    def _on_socket_disconnect(self, reason: str) -> None:
        # Reader thread, after the loss; the gateway reconnects by itself.
        # Pending sends are not rejected because of the cut (after ready, a network
        # cut never fails a pending call); each ends by its own 10 s bound.
        _warn_visibly(f"connection to the service lost ({reason}); reconnecting")
        if self.catch_up is not None:
            self.catch_up.disconnected()
        voice = self.voice
        if voice is not None:
            voice._on_disconnect(reason)
        self._dispatch("disconnect", reason, key=_LIFECYCLE_KEY)

    def _on_socket_error(self, exc: BaseException) -> None:
        # Reconnect thread: the service refused a reconnection; attempts have stopped.
        if self._lifecycle is ClientState.DESTROYED:
            return
        log.warning("socket reconnection stopped: %s", type(exc).__name__)
        self._dispatch("error", exc, key=_LIFECYCLE_KEY)

    def _reconcile_guilds(self) -> None:
        """After a reconnect, on the worker pool as a barrier: reconcile the server cache
        (see :meth:`ConnectionState.reconcile_guilds
        <service_client.state.ConnectionState.reconcile_guilds>`), unless the client is no
        longer ready."""
        if self._lifecycle is ClientState.READY:
            self._connection.reconcile_guilds()
        else:
            self._connection.end_reconcile()

    # -- safe snapshots -------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A safe snapshot: token ``"[REDACTED]"`` (None before login), caches as counts."""
        user = self.user
        return {
            "state": self._lifecycle.value,
            "user": None if user is None else {"id": user.id, "username": user.username},
            "ready_at": None if self.ready_at is None else self.ready_at.isoformat(),
            "uptime": self.uptime,
            "base_url": self.base_url,
            "socket_url": self.socket_url,
            "token": None if self._token.get() is None else REDACTED,
            "users": len(self.users.cache),
            "guilds": len(self.guilds.cache),
            "channels": len(self.channels.cache),
            "members": len(self.members.cache),
            "voice_states": len(self.voice_states.cache),
            "commands": len(self.commands),
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as a JSON string."""
        return json.dumps(self.to_dict())

    def __repr__(self) -> str:
        user = self.user
        who = "None" if user is None else f"{user.username!r} ({user.id})"
        token = "None" if self._token.get() is None else REDACTED
        return (
            f"<Client state={self._lifecycle.value} user={who} guilds={len(self.guilds.cache)} "
            f"token={token}>"
        )

    __str__ = __repr__

    def __reduce__(self) -> Any:
        raise TypeError("a Client cannot be pickled: it holds live connections and a secret token")

