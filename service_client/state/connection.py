"""``ConnectionState``: the caches, the payload parsers and the transport seen by models.

A :class:`~service_client.Client` builds one :class:`ConnectionState` and hands every model
and manager this object (``model._state``): the state implements the
:class:`~service_client.models._port.State` port. It owns

- the caches (the managers ``users``, ``guilds``, ``channels``, ``members``,
  ``voice_states``), the bot's own ``user``, and the message cache: the recent messages
  kept whole (sized by the client's ``max_messages``) and the channel of each recent
  message id;
- the parsers of the socket events (:class:`~service_client.state.parsers.Parsers`),
  called by the reader thread (``parsers.handle``);
- the reconcile of the server cache after a reconnect;
- the nonce-keyed futures of ``send_message``.

The client keeps the threads and the lifecycle: it creates the REST session, the worker
pool and the socket, gives them to the state (:attr:`ConnectionState.gateway` is set while a
socket exists), and calls :meth:`ConnectionState.close` when it is destroyed. Thread-safe.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from concurrent.futures import TimeoutError as _FutureTimeout
from typing import TYPE_CHECKING, Any

from .. import _defaults, endpoints
from ..errors import ChannelAccessError, ServiceAPIError, ServiceAuthError, ServiceError, ServiceTimeoutError
from ..events.workers import flush_handoff
from ..managers.channels import ChannelManager
from ..managers.emojis import EmojiManager
from ..managers.guilds import GuildManager
from ..managers.invites import InviteManager
from ..managers.members import MemberManager
from ..managers.roles import RoleManager
from ..managers.users import UserManager
from ..managers.voice_states import VoiceStateManager
from ..models._port import GuildManagers
from ..models.guild import Guild
from ..models.message import Message
from ..models.outgoing import build_message_payload
from ..permissions import Permissions
from ..rest.retry import RetryPolicy
from ..rest.route import Route
from .parsers import Parsers

if TYPE_CHECKING:  # pragma: no cover
    from ..events.emitter import EventEmitter, EventSlot
    from ..events.workers import OrderedWorkerPool
    from ..gateway.connection import GatewayConnection
    from ..models._port import ClientLike
    from ..models.embed import EmbedBuilder
    from ..models.member import Member
    from ..models.user import User
    from ..rest.session import RestSession

__all__ = [
    "ConnectionState",
    "RECONCILE_MAX_RETRIES",
    "RECONCILE_TIMEOUT_MS",
    "SEND_PROBE_AFTER_S",
    "check_max_messages",
]

log = logging.getLogger("service_client.client")

#: Per-attempt timeout of the reconcile requests after a reconnect, milliseconds
#: (bounded: later events wait for the reconcile).
RECONCILE_TIMEOUT_MS = 10_000
#: Retries of each reconcile request after the first attempt.
RECONCILE_MAX_RETRIES = 2
#: Seconds ``send_message`` waits for its echo before it asks the service whether the channel
#: exists and is visible to the bot (an echo normally comes within milliseconds).
SEND_PROBE_AFTER_S = 1.0
#: What the bot needs in a channel to send there.
SEND_NEEDS = Permissions.VIEW_CHANNELS | Permissions.SEND_MESSAGES
#: The causes a send's timeout names.
SEND_TIMEOUT_CAUSES = (
    "the channel does not exist or is hidden from the bot, the bot lacks SEND_MESSAGES there "
    "(a channel overwrite), the service dropped the message (an embed over its limits), or the "
    "connection dropped before the echo came; the service answers nothing when it refuses a message"
)


def check_max_messages(value: Any) -> int | None:
    """``value`` when it is a valid ``max_messages``: None, or an int of at least 1.

    Raises:
        TypeError: ``value`` is neither None nor an int (a bool is refused).
        ValueError: ``value`` is below 1 (None is how to keep no messages).
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"max_messages must be an int or None, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"max_messages must be at least 1 (None keeps no messages), got {value!r}")
    return value


class ConnectionState:
    """What a connected client's models and managers share: caches, transport, dispatch.

    Built by :class:`~service_client.Client`; implements the
    :class:`~service_client.models._port.State` port. Thread-safe: every method may be called
    from any thread; ``parsers.handle`` is called by the socket reader thread only.

    Args:
        client: The owning client (:attr:`client`; models give it as ``model.client``).
        rest: The REST session every request goes through.
        events: The listener registry; events go to its worker pool.
        pool: The ordered worker pool (tasks that must keep an event key's order).
        site_url: The service's public web site (invite links).
        max_messages: Recent messages kept whole (see :attr:`max_messages`); None keeps
            none. The default is 1,000.

    Raises:
        TypeError, ValueError: ``max_messages`` is not None or an int of at least 1.

    Attributes:
        user: The bot's own :class:`User`; None before ``ready``.
        users, guilds, channels, members, voice_states: The caches.
        gateway: The socket while the client has one (set and cleared by the client).
        voice_hook: Called with ``(socket event, payload)`` for every voice signalling event,
            on the reader thread (the client's voice manager); None for none.
        event_tap: Called with ``(socket event, args)`` for every socket event the parsers
            know (``(socket event, args, frame)`` with ``event_tap_frames``), on the reader
            thread, in arrival order, before its cache effect; None for none. It must be quick, must not block, must not change ``args`` and should not
            raise (an exception is logged and the event goes on). The events fleet's
            publisher is one.
        no_socket: Why this client holds no socket (it is fed by an event source), else None:
            socket operations raise :class:`ServiceAuthError` with it.
        send_hook: Called as ``send_hook(payload)`` by :meth:`send_message` instead of the
            socket, with the ``message:send`` payload; returns the posted message's record
            (its own errors go to the caller). None: the socket. An event source that carries
            the bot's messages sets it.
        fetch_hook: Called as ``fetch_hook(route, params, request)`` for each GET
            :meth:`submit` queues (``request()`` queues it as usual); returns its Future. None:
            none. An event source that shares the requests the parsers make sets it.
        event_tap_wire: False (the default): ``event_tap`` sees every record as a dict, as
            the general decoder gives it. True: a ``message:new`` record that the reader
            decoded into its msgspec struct (see :meth:`Parsers.frame_decoders
            <service_client.state.parsers.Parsers.frame_decoders>`) reaches the tap as
            that struct, unconverted (msgspec encodes it to the same JSON as its dict); set
            by a tap that handles it.
        event_tap_frames: False (the default). True: as with ``event_tap_wire``, and the tap
            is called ``(socket event, args, frame)``: ``frame`` is the text frame the reader
            decoded ``args`` from (``42["<name>",...]``, bytes, strict JSON), or None (no
            such frame: the standard library's decoder, or a record a catch-up read back);
            set by a tap that takes both, such as the events fleet's publisher.
        parsers: The socket event parsers.
    """

    def __init__(
        self,
        client: ClientLike,
        *,
        rest: RestSession,
        events: EventEmitter,
        pool: OrderedWorkerPool,
        site_url: str,
        max_messages: int | None = _defaults.DEFAULT_MAX_MESSAGES,
    ) -> None:
        """Create empty caches bound to ``rest``, ``events`` and ``pool``."""
        self._max_messages = check_max_messages(max_messages)
        self._owner = client
        self.rest = rest
        self.events = events
        self.pool = pool
        self.site_url = site_url
        self.gateway: GatewayConnection | None = None
        self.voice_hook: Callable[[str, Any], None] | None = None
        self.event_tap: Callable[..., None] | None = None
        self.no_socket: str | None = None
        self.send_hook: Callable[[dict[str, Any]], Mapping[str, Any]] | None = None
        self.fetch_hook: Callable[[Route, Mapping[str, Any] | None, Callable[[], Future[Any]]], Future[Any]] | None = None
        self.event_tap_wire = False
        self.event_tap_frames = False
        #: True once the client is destroyed: no more dispatch, no more cache updates.
        self.closed = False
        self.user: User | None = None
        self.users = UserManager(self)
        self.guilds = GuildManager(self)
        self.channels = ChannelManager(self)
        self.members = MemberManager(self)
        self.voice_states = VoiceStateManager(self)
        self._nonces_lock = threading.Lock()  # guards _nonces
        self._nonces: dict[str, Future[Any]] = {}
        # The message cache. The parsers write it, on the reader thread only, inline in
        # ``message:new`` (the hottest path: two dict writes a message, no call), and forget a
        # deleted message; anything may read it (see cached_message and message_channel).
        #: The most recent messages themselves, in two generations: when ``_messages`` holds
        #: ``_messages_bound``, it becomes ``_messages_old`` and the older one is dropped whole.
        #: At least the last ``max_messages`` are kept, fewer than twice as many (an ordered
        #: dict's eviction of the oldest would cost more per message). Bound 0: none kept.
        self._messages: dict[str, Message] = {}
        self._messages_old: dict[str, Message] = {}
        self._messages_bound = self._max_messages or 0
        #: The channel of each recent message id, two generations as above, bound
        #: :data:`~service_client._defaults.MESSAGE_CHANNELS_MAX` whatever ``max_messages``
        #: is: a reaction keeps its channel's order and names its channel.
        self._message_channels: dict[str, str] = {}
        self._message_channels_old: dict[str, str] = {}
        self.parsers = Parsers(self)

    @property
    def client(self) -> ClientLike:
        """The :class:`~service_client.Client` that owns this state."""
        return self._owner

    # -- the message cache ----------------------------------------------------------

    @property
    def max_messages(self) -> int | None:
        """Recent messages kept whole: at least the last this many, fewer than twice as many
        (two generations); None when none are kept."""
        return self._max_messages

    def cached_message(self, message_id: str) -> Message | None:
        """The message of ``message_id`` as received, when it is still kept whole, else None.

        No request. Any thread (the reader thread alone writes the cache).
        """
        message = self._messages.get(message_id)
        return self._messages_old.get(message_id) if message is None else message

    def message_channel(self, message_id: str) -> str | None:
        """The channel id of a recent message, else None: from the channel of each recent
        message id (kept even with ``max_messages=None``), else from the message kept whole.

        No request. Any thread.
        """
        channel_id = self._message_channels.get(message_id)
        if channel_id is None:
            channel_id = self._message_channels_old.get(message_id)
            if channel_id is None:
                message = self.cached_message(message_id)
                return message.channel_id if message is not None else None
        return channel_id

    def forget_message(self, message_id: str) -> None:
        """Drop a (deleted) message from the message cache and from the channel of each id."""
        self._messages.pop(message_id, None)
        self._messages_old.pop(message_id, None)
        self._message_channels.pop(message_id, None)
        self._message_channels_old.pop(message_id, None)

    # -- transport ---------------------------------------------------------------

    def request(
        self,
        route: Route,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        timeout_ms: int | None = None,
        retry: RetryPolicy | int | None = None,
        authorized: bool = True,
    ) -> Any:
        """Perform one REST request through the session's queue; blocks.

        ``headers`` are added to the request's own (``Authorization`` is never replaced);
        ``authorized=False`` sends no ``Authorization`` header and needs no login
        (webhook execution). ``retry`` is the call's retry policy: None for the client's,
        an int for the client's with that many retries. ``timeout_ms`` bounds each attempt:
        None for the session's (its default is read there only).

        Returns:
            The parsed JSON answer, or None for 204 and an empty body.

        Raises:
            ServiceAuthError: No token (before login, after destroy); nothing is sent.
            ServiceAPIError, RateLimitError, ServiceTimeoutError, ServiceError: As
                :meth:`Client.api_call <service_client.Client.api_call>`.
        """
        return self.rest.request(
            route, params=params, json=json, headers=headers, timeout_ms=timeout_ms, retry=retry,
            authorized=authorized,
        )

    def submit(
        self,
        route: Route,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        timeout_ms: int | None = None,
        retry: RetryPolicy | int | None = None,
    ) -> Future[Any]:
        """Queue one REST request; its Future completes as :meth:`request` would return or raise.

        Raises:
            ServiceError: The session is closed (the client was destroyed).
        """
        hook = self.fetch_hook
        if hook is not None and route.method == "GET" and json is None:
            return hook(route, params, functools.partial(
                self.rest.submit, route, params=params, json=json, timeout_ms=timeout_ms, retry=retry))
        return self.rest.submit(route, params=params, json=json, timeout_ms=timeout_ms, retry=retry)

    def require_gateway(self) -> GatewayConnection:
        """The socket, when its namespace is connected.

        Raises:
            ServiceAuthError: Not connected (before login, during a reconnect, after destroy).
        """
        gateway = self.gateway
        if gateway is None or not gateway.connected:
            if self.closed:
                raise ServiceAuthError("the client was destroyed; create a new Client")
            if self.no_socket is not None:
                raise ServiceAuthError(self.no_socket)
            raise ServiceAuthError("the socket is not connected (call login() first, or wait for reconnect)")
        return gateway

    def emit(self, event: str, *args: Any) -> None:
        """Emit a socket event, fire-and-forget (returns once written).

        Raises:
            ServiceAuthError: The socket is not connected; nothing is sent.
            ServiceTimeoutError: The write could not be done within 10 s.
        """
        self.require_gateway().emit(event, *args)

    def call(self, event: str, *args: Any, timeout: float = _defaults.ACK_TIMEOUT_S) -> list[Any]:
        """Emit a socket event and wait for its acknowledgement; returns the ack's arguments.

        Raises:
            ServiceAuthError: The socket is not connected; nothing is sent.
            ServiceTimeoutError: No acknowledgement within ``timeout`` seconds.
            ServiceError: The socket dropped or the client was destroyed first.
        """
        return self.require_gateway().call(event, *args, timeout=timeout)

    # -- events ------------------------------------------------------------------------

    def dispatch(self, event: str, *args: Any, key: str | None = None) -> None:
        """Hand an event to its listeners on the worker pool, after earlier events of ``key``.

        Nothing is dispatched once the client is destroyed.
        """
        if not self.closed:
            self.events.emit(event, *args, key=key)

    def run(self, fn: Callable[[], None], *, key: str | None = None) -> None:
        """Run ``fn`` on the worker pool after the earlier tasks of ``key``."""
        self.pool.submit(fn, key=key)

    def reserve_dispatch(self, *, key: str | None = None) -> EventSlot:
        """Reserve the next place in ``key``'s event order for an event emitted later."""
        return self.events.reserve(key=key)

    # -- the nonce-keyed send ------------------------------------------------------------

    def send_message(
        self,
        channel_id: str,
        options: str | EmbedBuilder | Mapping[str, Any] | None = None,
        *,
        content: str | None = None,
        embeds: Sequence[EmbedBuilder | Mapping[str, Any]] | None = None,
        reply_to_id: str | None = None,
    ) -> Message:
        """Send ``message:send`` with a fresh nonce and wait for its ``message:new`` echo.

        See :meth:`Client.send_message <service_client.Client.send_message>` for the
        arguments, the 10 s bound and every error.
        """
        if not isinstance(channel_id, str):
            raise TypeError(f"channel_id must be a str, got {type(channel_id).__name__}")
        if not channel_id:
            raise ValueError("channel_id must be a non-empty str")
        nonce = uuid.uuid4().hex
        payload = build_message_payload(
            channel_id, options, content=content, embeds=embeds, reply_to_id=reply_to_id, nonce=nonce
        )
        hook = self.send_hook
        if hook is not None:  # the event source carries the bot's messages
            if self.closed:
                raise ServiceAuthError("the client was destroyed; create a new Client")
            self._check_send(channel_id)
            return Message(self, hook(payload))
        gateway = self.require_gateway()
        self._check_send(channel_id)
        bound = _defaults.SEND_TIMEOUT_S
        deadline = time.monotonic() + bound
        fut: Future[Message] = Future()
        with self._nonces_lock:
            self._nonces[nonce] = fut
        try:
            if self.closed:
                raise ServiceAuthError("the client was destroyed; create a new Client")
            try:
                # The 10 s cover the wait for the socket (another thread may be writing),
                # the write and the echo.
                gateway.emit(endpoints.EMIT_MESSAGE_SEND, payload, timeout=bound)
                return self._await_echo(fut, channel_id, deadline)
            except (_FutureTimeout, ServiceTimeoutError):
                raise TimeoutError(
                    f"send_message timeout after 10s: no echo of nonce {nonce} in channel {channel_id}. "
                    f"Likely causes: {SEND_TIMEOUT_CAUSES}"
                ) from None
        finally:
            with self._nonces_lock:
                self._nonces.pop(nonce, None)

    def _check_send(self, channel_id: str) -> None:
        """Refuse at once a send the caches show cannot succeed (nothing is sent then).

        Raises:
            ChannelAccessError: The channel's server is not one of the bot's, or the bot
                lacks VIEW_CHANNELS or SEND_MESSAGES there (known overwrites applied).
        """
        channel = self.channels.cache.get(channel_id)
        if channel is None or channel.server_id is None:
            return
        server_id = channel.server_id
        if server_id not in self.guilds.cache:
            raise ChannelAccessError(channel_id, action="send", reason="not_a_member",
                                     detail=f"the bot is not in its server {server_id}")
        user = self.user
        member = self.members.get(server_id, user.id) if user is not None else None
        perms = channel.permissions_for(member) if member is not None else None
        if perms is None:
            return
        missing = SEND_NEEDS & ~perms
        if missing:
            names = " and ".join(flag.name or "" for flag in Permissions if flag in missing)
            raise ChannelAccessError(channel_id, action="send", reason="missing_permissions", missing=missing,
                                     detail=f"the bot lacks {names} there (its roles and the channel's overwrites)")

    def _await_echo(self, fut: Future[Message], channel_id: str, deadline: float) -> Message:
        """Wait for the echo; after :data:`SEND_PROBE_AFTER_S` without one, ask the service
        whether the channel exists and is visible, and fail at once when it is not.

        Raises:
            concurrent.futures.TimeoutError: No echo by ``deadline``.
            ChannelAccessError: No echo yet, and the service answers that the channel does
                not exist (404) or is hidden from the bot (403).
        """
        try:
            return fut.result(max(0.0, min(SEND_PROBE_AFTER_S, deadline - time.monotonic())))
        except _FutureTimeout:
            pass
        left_ms = int((deadline - time.monotonic()) * 1000)
        if left_ms < 100:
            return fut.result(max(0.0, deadline - time.monotonic()))
        try:
            probe = self.submit(Route(endpoints.GET_CHANNEL, channel_id=channel_id),
                                timeout_ms=left_ms, retry=0)
        except ServiceError:  # the session is closing: the echo's wait decides
            return fut.result(max(0.0, deadline - time.monotonic()))
        wait((fut, probe), timeout=max(0.0, deadline - time.monotonic()), return_when=FIRST_COMPLETED)
        if not fut.done() and probe.done():
            error = probe.exception()
            if isinstance(error, ServiceAPIError) and error.status in (403, 404):
                unknown = error.status == 404
                raise ChannelAccessError(
                    channel_id, action="send", reason="unknown_channel" if unknown else "missing_permissions",
                    missing=None if unknown else Permissions.VIEW_CHANNELS,
                    detail="the service knows no such channel (404)" if unknown
                    else "the service hides it from the bot (403): not its server, or no VIEW_CHANNELS",
                ) from None
        return fut.result(max(0.0, deadline - time.monotonic()))

    def resolve_nonce(self, nonce: str, message: Message) -> None:
        """Complete the pending ``send_message`` of ``nonce`` (reader thread)."""
        with self._nonces_lock:
            fut = self._nonces.pop(nonce, None)
        if fut is not None and not fut.done():
            # Only our own sends wake a caller (other members' echoes carry their nonces too):
            # the woken sender comes after every event read before its message.
            flush_handoff()
            try:
                fut.set_result(message)
            except Exception:  # noqa: BLE001 - completed concurrently (timeout): nothing to do
                pass

    def pending_sends(self) -> int:
        """How many ``send_message`` calls wait for their echo now."""
        with self._nonces_lock:
            return len(self._nonces)

    def close(self) -> None:
        """The client is destroyed: stop dispatching, fail the pending sends at once."""
        self.closed = True
        self.gateway = None
        with self._nonces_lock:
            pending, self._nonces = self._nonces, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(ServiceError("the client was destroyed before the message was echoed"))

    # -- cache writes models ask for -----------------------------------------------------

    def store_user(self, data: Any, *, cache: bool = True) -> User:
        """A User for a user record: with ``cache`` the cached one, updated in place (or
        newly cached); else a new, uncached User.

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record has no id.
        """
        return self.users.from_record(data, cache=cache)

    def store_member(self, data: Any, server_id: str | None, *, cache: bool = True) -> Member:
        """A Member for a member record; with ``cache`` its user is upserted and it is cached.

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record names no user or no server.
        """
        return self.members.from_record(data, server_id, cache=cache)

    def build_guild(self, data: Mapping[str, Any]) -> Guild:
        """A new, uncached Guild for a server record.

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record has no id.
        """
        return Guild(self, data)

    def guild_managers(self, server_id: str) -> GuildManagers:
        """New, empty role, invite and emoji managers for the server ``server_id``."""
        return GuildManagers(RoleManager(self, server_id), InviteManager(self, server_id),
                             EmojiManager(self, server_id))

    def note_webhook(self, webhook_id: str) -> None:
        """Remember that ``webhook_id`` is a webhook: its messages' author is no user."""
        self.users.note_webhook(webhook_id)

    def evict_guild(self, server_id: str) -> Guild | None:
        """A server the bot left (or that was deleted): evict it with its channels and members.

        Returns:
            The Guild that was cached, or None.
        """
        guild = self.guilds.evict_live(server_id)
        self._forget_guild_entries(server_id)
        return guild

    def _forget_guild_entries(self, server_id: str) -> None:
        self.channels.remove_guild(server_id)
        self.members.remove_guild(server_id)

    # -- reconcile after a reconnect -------------------------------------------------------

    def begin_reconcile(self) -> None:
        """A reconnect happened (reader thread, before any event of the new connection):
        remember live server changes from now on, so the reconcile never undoes them."""
        self.guilds.begin_reconcile()

    def end_reconcile(self) -> None:
        """End the tracking begun by :meth:`begin_reconcile` without reconciling."""
        self.guilds.end_reconcile()

    def reconcile_guilds(self) -> None:
        """Bring the server cache in line with the service after a reconnect.

        Runs on the worker pool as a barrier (events received after the reconnect reach
        listeners only after it): one ``GET /servers``; servers left while offline are
        evicted with their channels and members and announced with ``guild_delete``;
        servers joined are cached, get the bot's member fetched and are announced with
        ``guild_create``; known ones are refreshed (their role and invite caches kept). A
        server that a live event changed since :meth:`begin_reconcile` keeps that event's
        effect (the list may be older). Bounded: each request has
        :data:`RECONCILE_TIMEOUT_MS` and :data:`RECONCILE_MAX_RETRIES`. A failure changes
        nothing and is logged at WARNING. Always ends the tracking begun by
        :meth:`begin_reconcile`.
        """
        options: dict[str, Any] = {"timeout_ms": RECONCILE_TIMEOUT_MS, "retry": RECONCILE_MAX_RETRIES}
        try:
            if self.closed:
                return
            data = self.request(Route(endpoints.LIST_SERVERS), **options)
            items = data.get("servers") if isinstance(data, dict) else data
            fresh: dict[str, Guild] = {}
            for item in items if isinstance(items, list) else ():
                try:
                    guild = Guild(self, item)
                except (TypeError, ValueError) as exc:
                    log.warning("skipped a malformed server record: %s", exc)
                    continue
                fresh[guild.id] = guild
            if self.closed:
                return
            deleted, joined = self.guilds.apply_reconcile(fresh)
            for server_id, gone in deleted:
                self._forget_guild_entries(server_id)
                self.dispatch(
                    "guild_delete", gone if gone is not None else {"serverPublicId": server_id}, key=server_id
                )
            user = self.user
            if user is not None and joined:
                self.guilds.preload_members(joined, user.id, **options)
            for guild in joined:
                self.dispatch("guild_create", self.guilds.cache.get(guild.id, guild), key=guild.id)
        except Exception as exc:  # noqa: BLE001 - best effort; the caches stay as they were
            log.warning("could not reconcile the guild cache after reconnect: %s", exc)
        finally:
            self.guilds.end_reconcile()

    def __repr__(self) -> str:
        return f"<ConnectionState user={self.user!r} guilds={len(self.guilds.cache)} closed={self.closed}>"

    def __reduce__(self) -> Any:
        raise TypeError("a ConnectionState cannot be pickled: it holds live connections")
