"""Parsers of the socket events: each event's cache update, then its Python event.

:class:`Parsers` is called by the reader thread for every socket event,
in arrival order. For each known event it applies the event's cache effect
first, then queues the Python event with ``state.dispatch`` (listeners run
on the worker pool, never here). Its ordering key is the channel id, else the
server id, else (user-only events) the user id. Events that name a message but
no channel (reactions) take the channel of that message when a recent
``message:new`` told it, so they never overtake the message itself; else the
message id.

``message:new`` fills the connection state's message cache (the messages kept
whole, ``max_messages``, and the channel of each recent message id), written
here inline since it is the hottest path; ``message:deleted`` forgets the
message; the reaction events read it (:meth:`ConnectionState.cached_message
<service_client.state.ConnectionState.cached_message>`).

An event that needs a request first (the member refetch behind
``server:member_update``, the bot's member of a joined server, the channel
listing behind ``server:channels_updated``) reserves its
place in its key's order on arrival; the request runs on the REST session,
and the event fills its place when the request ends. No worker thread waits
for it meanwhile.

A malformed payload (wrong types, missing keys) is logged at WARNING (event
name and error only, never the payload) and dropped; unknown events are
logged at DEBUG, on the ``service_client.state`` logger. :meth:`Parsers.handle` never
raises.

Wire names live here as constants; nothing else in the client reads them.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .. import endpoints
from .._defaults import MESSAGE_CHANNELS_MAX, REACTION_TRACKER_MAX
from ..events.workers import flush_handoff
from ..models._base import read_id, read_str
from ..models._message_layout import _LAYOUTS, _layout
from ..models.message import Message
from ..models.reaction import ReactionEvent
from ..models.user import User
from ..models.user import changes as user_changes
from .payload import (
    _CHANNEL_KEYS,
    _MESSAGE_KEYS,
    _SERVER_KEYS,
    _USER_KEYS,
    MalformedPayload,
    _need_id,
    _obj,
)
from .server_parsers import ServerParsers, event_key

if TYPE_CHECKING:  # pragma: no cover
    from ..managers.users import UserManager
    from ..models._message_wire import AuthorWire, MessageWire
    from .connection import ConnectionState

__all__ = ["Parsers", "ReactionTracker", "diff_reactions"]

log = logging.getLogger("service_client.state")

#: Most message authors remembered with their struct (all forgotten when full).
AUTHORS_MAX = 4096

#: ``Message.__new__``: a message built from a socket record skips ``__init__``'s checks.
_new_message = Message.__new__


class ReactionTracker:
    """The last reaction snapshot per message, bounded LRU.

    Maps a message id to {emoji: set of user ids}; the least recently changed
    message is forgotten beyond ``max_messages`` (a forgotten message's next
    snapshot counts as all new). Thread-safe.
    """

    def __init__(self, max_messages: int = REACTION_TRACKER_MAX) -> None:
        """Create an empty tracker remembering at most ``max_messages`` messages."""
        self._max = max_messages
        self._entries: OrderedDict[str, dict[str, set[str]]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._entries

    def replace(self, message_id: str, snapshot: dict[str, set[str]]) -> dict[str, set[str]]:
        """Store ``snapshot`` for the message; return the previous one (empty when unknown)."""
        with self._lock:
            previous = self._entries.pop(message_id, None)
            self._entries[message_id] = snapshot
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)
        return previous if previous is not None else {}

    def drop(self, message_id: str | None) -> None:
        """Forget a message (``message:deleted``, ``message:reaction_clear``)."""
        if message_id is None:
            return
        with self._lock:
            self._entries.pop(message_id, None)


def diff_reactions(
    previous: Mapping[str, set[str]], current: Mapping[str, set[str]]
) -> list[tuple[str, str, str, int]]:
    """The changes from one reaction snapshot of a message to the next.

    Args:
        previous: {emoji: user ids} before (empty for a first snapshot).
        current: {emoji: user ids} now.

    Returns:
        ``(kind, emoji, user_id, count)`` tuples, ``kind`` being ``"add"`` or
        ``"remove"`` and ``count`` the emoji's user count right after that
        change; per emoji (current order, then vanished emojis) removals come
        before additions, users in sorted order.
    """
    changes: list[tuple[str, str, str, int]] = []
    emojis = list(current) + [e for e in previous if e not in current]
    for emoji in emojis:
        before = previous.get(emoji, set())
        after = current.get(emoji, set())
        count = len(before)
        for user_id in sorted(before - after):
            count -= 1
            changes.append(("remove", emoji, user_id, count))
        for user_id in sorted(after - before):
            count += 1
            changes.append(("add", emoji, user_id, count))
    return changes


class Parsers:
    """Maps every server-to-client socket event to its cache effect and Python event.

    Called only from the socket reader thread (one event at a time, in
    arrival order); it never runs user code and never blocks on I/O (member
    fetches are queued on the REST session and complete a reserved event).

    Args:
        state: The connection state whose caches and dispatcher are used.
    """

    def __init__(self, state: ConnectionState) -> None:
        """Bind to ``state`` and build the event table."""
        self._state = state
        #: The server events' part (servers, members, listings, roles).
        self.servers = ServerParsers(state)
        self.reactions = ReactionTracker()
        #: The record structs' module and message struct, once frame_decoders() has been called.
        self._wire: Any = None
        self._wire_type: type[MessageWire] | None = None
        #: Author id -> (the author struct last merged, the cached user, ``user_changes`` then).
        self._authors: dict[str, tuple[AuthorWire, User, int]] = {}
        self._table: dict[str, Callable[[Any], None]] = {
            endpoints.ON_MESSAGE_NEW: self._message_new,
            endpoints.ON_MESSAGE_UPDATED: self._message_updated,
            endpoints.ON_MESSAGE_DELETED: self._message_deleted,
            endpoints.ON_MESSAGE_REACTION: self._message_reaction,
            endpoints.ON_MESSAGE_REACTION_CLEAR: self._message_reaction_clear,
            endpoints.ON_MESSAGE_PINNED: self._message_pinned,
            **self.servers.table(),
            endpoints.ON_USER_UPDATE: self._user_update,
            endpoints.ON_PRESENCE_UPDATE: self._presence_update,
            endpoints.ON_TYPING_START: self._typing("typing_start"),
            endpoints.ON_TYPING_STOP: self._typing("typing_stop"),
            endpoints.ON_ACTIVITY_UPDATE: self._activity_update,
            endpoints.ON_DM_NEW: self._dm_new,
            endpoints.ON_VOICE_STATE_UPDATE: self._voice_snapshot("voice_state_update"),
            endpoints.ON_VOICE_USER_JOINED: self._voice_snapshot("voice_user_joined"),
            endpoints.ON_VOICE_USER_LEFT: self._voice_user_left,
            endpoints.ON_VOICE_USER_STATE: self._voice_user_state,
            endpoints.ON_VOICE_INCOMING_CALL: self._voice_simple("voice_incoming_call"),
            endpoints.ON_VOICE_CALL_CANCELLED: self._voice_simple("voice_call_cancelled"),
            endpoints.ON_VOICE_LIVEKIT_TOKEN: self._voice_token,
        }

    @property
    def events(self) -> list[str]:
        """The socket event names handled here."""
        return list(self._table)

    def handle(self, event_name: str, args: list[Any], frame: bytes | None = None) -> None:
        """Apply one socket event: cache effect, then its Python event. Never raises.

        The socket reader thread calls this for every event, in arrival order.
        Ignored once the client is destroyed (caches are never updated again).

        Args:
            event_name: The socket event name (``"message:new"``...).
            args: The event's arguments (usually one payload).
            frame: The text frame ``args`` were decoded from, as strict JSON
                (``42["<name>",...]``), or None; handed to an event tap that takes
                frames (see ``ConnectionState.event_tap_frames``).
        """
        if self._state.closed:  # destroyed: caches are never updated again
            return
        try:  # no isinstance check first: a name that is no str is unknown too (or unhashable)
            handler = self._table[event_name]
        except (KeyError, TypeError):
            log.debug("ignored unknown socket event %r", event_name)
            return
        if type(args) is not list:
            args = list(args or ())
        state = self._state
        tap = state.event_tap
        if tap is not None:
            try:
                wire_type = self._wire_type
                if state.event_tap_frames:  # it takes the reader's structs and frame as they are
                    tap(event_name, args, frame)
                elif wire_type is not None and not state.event_tap_wire and any(
                        type(arg) is wire_type for arg in args):
                    # A tap sees every record as a dict, as the general decoder gives it.
                    record_of = self._wire.record_of
                    tap(event_name, [record_of(arg) if type(arg) is wire_type else arg for arg in args])
                else:
                    tap(event_name, args)
            except Exception:  # noqa: BLE001 - a tap must never stop the reader or the event
                log.exception("the event tap failed on %s", event_name)
        try:
            handler(args[0] if args else None)
        except Exception as exc:  # noqa: BLE001 - a bad payload must never kill the reader
            log.warning("dropped malformed %s payload: %s: %s", event_name, type(exc).__name__, exc)

    # -- helpers ----------------------------------------------------------------

    def _dispatch(self, event: str, *args: Any, key: str | None) -> None:
        self._state.dispatch(event, *args, key=key)

    def _message_key(self, data: Mapping[str, Any], message_id: str | None) -> str | None:
        """The ordering key of an event about a message: its channel (from the payload, else
        remembered from ``message:new``), else its server, else the message id."""
        channel_id = read_id(data, *_CHANNEL_KEYS)
        if channel_id is None and message_id is not None:
            channel_id = self._state.message_channel(message_id)
        return channel_id or read_id(data, *_SERVER_KEYS) or message_id

    def _simple(self, python_event: str) -> Callable[[Any], None]:
        def handler(payload: Any) -> None:
            """Apply this event's cache effect, then dispatch it."""
            data = _obj(payload)
            self._dispatch(python_event, data, key=event_key(data))

        return handler

    def _voice_hook(self, event: str, data: Any) -> None:
        hook = self._state.voice_hook
        if hook is None:
            return
        # The hook may wake a join() waiting for its credentials: that caller comes after every
        # event read before this one, as senders and ack callers do.
        flush_handoff()
        try:
            hook(event, data)
        except Exception as exc:  # noqa: BLE001 - the voice manager must not break the reader
            log.warning("voice handler failed on %s: %s: %s", event, type(exc).__name__, exc)

    # -- messages -----------------------------------------------------------------

    def frame_decoders(self, json_decoder: str) -> dict[str, Callable[[bytes], list[Any]]]:
        """The socket events whose frames the reader may decode into structs for :meth:`handle`.

        ``{"message:new": decode}`` when the reader decodes with msgspec
        (``json_decoder`` is ``"msgspec"``: see
        :attr:`GatewayConnection.json_decoder
        <service_client.gateway.GatewayConnection.json_decoder>`), else ``{}``. ``decode`` takes a
        frame's JSON array (bytes) and returns ``["message:new", record
        struct]`` for a record with exactly the service's message keys and
        types, and raises for any other frame (the reader then decodes it the
        general way). From this call on, ``message:new`` takes such a struct as
        well as a dict, with the same outcome; an event tap still gets a dict.
        Importing the structs imports msgspec: the client calls this at login.
        """
        if json_decoder != "msgspec":
            return {}
        from ..models import _message_wire  # msgspec loads at login, not at import service_client

        self._wire = _message_wire
        self._wire_type = _message_wire.MessageWire
        self._table[endpoints.ON_MESSAGE_NEW] = self._message_struct
        return {endpoints.ON_MESSAGE_NEW: _message_wire.decode_frame}

    def _message_new(self, payload: Any) -> None:
        data = payload if type(payload) is dict else _obj(payload)
        # The record's layout (Message's, looked up once here): it also tells whether the
        # record has a webhookId or a nonce, which most have not.
        keys = tuple(data)
        layout = _LAYOUTS.get(keys) or _layout(keys)
        state = self._state
        author: User | None = None
        author_data = data.get("author")
        # A message posted through a webhook: the record says so (webhookId), or its author is a
        # webhook this client has met (a service that does not mark them). It keeps its own
        # uncached author (built by Message): the webhook's pseudo-user shares the webhook's id
        # but may carry another name on every message.
        if isinstance(author_data, dict) and (not layout.webhook or data.get("webhookId") is None):
            users = state.users
            if not users._webhook_ids or not users.is_webhook(
                read_id(author_data, "publicId", "id", "userPublicId", "userId")
            ):
                # users.upsert, with its common case inline: a known author, unchanged.
                ident = author_data.get("publicId")
                known = users.cache.get(ident) if type(ident) is str else None
                if known is not None and known._is_record(author_data):
                    author = known
                else:
                    try:
                        author = users.upsert(author_data)
                    except (TypeError, ValueError) as exc:
                        log.warning("message:new with a broken author: %s", exc)
        message = _new_message(Message)
        message._build(state, data, author, True, layout)  # ValueError: no id or no channel id
        if layout.nonce:
            nonce = data.get("nonce")
            if type(nonce) is str and nonce:
                state.resolve_nonce(nonce, message)
        self._keep(message)

    def _message_struct(self, payload: Any) -> None:
        """``message:new`` once :meth:`frame_decoders` was called: a record struct
        (``_message_wire.MessageWire``) read here, any other payload by :meth:`_message_new`,
        as is a struct whose record is read another way (a webhook's, an empty id)."""
        wire_module = self._wire
        if type(payload) is self._wire_type:
            wire: MessageWire = payload
            state = self._state
            users = state.users
            author_wire = wire.author
            author_id = author_wire.public_id
            if author_id and wire.webhook_id is wire_module.UNSET and (
                not users._webhook_ids or not users.is_webhook(author_id)
            ):
                # The author: the cached user, known to equal this record when it equals the
                # record last merged for this id and no user has changed since.
                known = self._authors.get(author_id)
                if (
                    known is not None
                    and known[2] == user_changes[0]
                    and known[0] == author_wire
                    and users.cache.get(author_id) is known[1]
                ):
                    author: User | None = known[1]
                else:
                    author = self._merge_author(users, author_id, author_wire)
                message = _new_message(Message)
                if author is not None and wire_module.build_message(message, state, wire, author):
                    nonce = wire.nonce
                    if type(nonce) is str and nonce:
                        state.resolve_nonce(nonce, message)
                    self._keep(message)
                    return
            payload = wire_module.record_of(payload)
        self._message_new(payload)

    def _merge_author(self, users: UserManager, author_id: str, author_wire: AuthorWire) -> User | None:
        """The cached user of an author struct, its record merged (None when it is refused),
        remembered with the struct when the user then equals the record."""
        data = self._wire.record_of(author_wire)
        try:
            user = users.upsert(data)
        except (TypeError, ValueError):
            return None
        seen = user_changes[0]  # read before the check: a change after it makes the entry stale
        if user._is_record(data) and users.cache.get(author_id) is user:
            authors = self._authors
            if len(authors) >= AUTHORS_MAX:
                authors.clear()
            authors[author_id] = (author_wire, user, seen)
        return user

    def _keep(self, message: Message) -> None:
        """Put a new message in the state's message cache, then queue ``message_create``."""
        state = self._state
        message_id = message.id
        # The state's message cache, written inline: two generations of plain dicts, a full
        # one becoming the older one (see ConnectionState.__init__); bound 0 keeps none.
        messages = state._messages
        messages[message_id] = message
        if len(messages) >= state._messages_bound:
            if state._messages_bound:
                state._messages_old = messages
            state._messages = {}
        channels = state._message_channels
        channels[message_id] = message.channel_id
        if len(channels) >= MESSAGE_CHANNELS_MAX:
            state._message_channels_old = channels
            state._message_channels = {}
        # state.dispatch without its closed check: handle() checked it just before, on this thread.
        state.events.emit_one("message_create", message, message.channel_id)

    def _message_updated(self, payload: Any) -> None:
        data = _obj(payload)
        message_id = read_id(data, *_MESSAGE_KEYS, "publicId")
        self._dispatch("message_update", data, key=self._message_key(data, message_id))

    def _message_deleted(self, payload: Any) -> None:
        data = _obj(payload)
        message_id = read_id(data, "publicId", *_MESSAGE_KEYS)
        self.reactions.drop(message_id)
        key = self._message_key(data, message_id)
        if message_id is not None:
            self._state.forget_message(message_id)
        self._dispatch("message_delete", data, key=key)

    def _message_reaction(self, payload: Any) -> None:
        data = _obj(payload)
        message_id = _need_id(data, _MESSAGE_KEYS, "messagePublicId")
        entries = data.get("reactions")
        if not isinstance(entries, list):
            raise MalformedPayload("reactions must be a list")
        snapshot: dict[str, set[str]] = {}
        names: dict[str, str | None] = {}
        for entry in entries:
            entry = _obj(entry, "reaction")
            emoji = read_str(entry, "emoji")
            user_id = read_id(entry, *_USER_KEYS)
            if not emoji or user_id is None:
                raise MalformedPayload("reaction needs emoji and userPublicId")
            snapshot.setdefault(emoji, set()).add(user_id)
            names[user_id] = read_str(entry, "userName")
        previous = self.reactions.replace(message_id, snapshot)
        key = self._message_key(data, message_id)
        message = self._state.cached_message(message_id)
        channel_id = read_id(data, *_CHANNEL_KEYS) or self._state.message_channel(message_id)
        server_id = read_id(data, *_SERVER_KEYS) or (message.server_id if message is not None else None)
        if server_id is None and channel_id is not None:
            channel = self._state.channels.cache.get(channel_id)
            server_id = channel.server_id if channel is not None else None
        for kind, emoji, user_id, count in diff_reactions(previous, snapshot):
            user = self._state.users.cache.get(user_id)
            if user is None:
                record: dict[str, Any] = {"publicId": user_id}
                name = names.get(user_id)
                if name is not None:
                    record["name"] = name
                user = User(self._state, record)
            added = kind == "add"
            info = ReactionEvent(self._state, emoji=emoji, count=count, added=added, message_id=message_id, user=user,
                                 message=message, channel_id=channel_id, server_id=server_id)
            self._dispatch("message_reaction_add" if added else "message_reaction_remove", info, user, message_id,
                           key=key)

    def _message_reaction_clear(self, payload: Any) -> None:
        data = _obj(payload)
        message_id = read_id(data, *_MESSAGE_KEYS)
        self.reactions.drop(message_id)
        self._dispatch("message_reaction_remove_all", data, key=self._message_key(data, message_id))

    def _message_pinned(self, payload: Any) -> None:
        data = _obj(payload)
        self._dispatch("message_pin", data, key=self._message_key(data, read_id(data, *_MESSAGE_KEYS)))

    # -- users ----------------------------------------------------------------------

    def _user_update(self, payload: Any) -> None:
        data = _obj(payload)
        user_id = _need_id(data, _USER_KEYS + ("publicId",), "userPublicId")
        user = self._state.users.cache.get(user_id)
        if user is not None:
            user._update(data)
        self._dispatch("user_update", user if user is not None else data, key=user_id)

    def _presence_update(self, payload: Any) -> None:
        data = _obj(payload)
        user_id = _need_id(data, _USER_KEYS, "userPublicId")
        status = data.get("status")
        if not isinstance(status, str):
            raise MalformedPayload("status must be a string")
        user = self._state.users.cache.get(user_id)
        if user is not None and user is not self._state.user:
            # The bot's own status is set locally by set_status at once; an echo of an
            # earlier status arriving late must not overwrite the newer local value.
            user._update({"status": status})
        self._dispatch("presence_update", data, key=user_id)

    def _typing(self, python_event: str) -> Callable[[Any], None]:
        def handler(payload: Any) -> None:
            """Apply this event's cache effect, then dispatch it."""
            if isinstance(payload, str):  # tolerate the bare channel id form
                payload = {"channelPublicId": payload}
            data = _obj(payload)
            self._dispatch(python_event, data, key=event_key(data, *_USER_KEYS))

        return handler

    def _activity_update(self, payload: Any) -> None:
        data = _obj(payload)
        user_id = _need_id(data, _USER_KEYS, "userPublicId")
        activity = data.get("activity")
        if activity is not None and not isinstance(activity, dict):
            raise MalformedPayload("activity must be an object or null")
        self._dispatch("activity_update", data, key=user_id)

    def _dm_new(self, payload: Any) -> None:
        data = _obj(payload)
        self._dispatch("dm_new", data, key=read_id(data, "publicId", *_CHANNEL_KEYS))

    # -- voice ---------------------------------------------------------------------

    def _voice_users(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        users = data.get("users")
        if not isinstance(users, list):
            raise MalformedPayload("users must be a list")
        return [_obj(u, "voice user") for u in users]

    def _voice_snapshot(self, python_event: str) -> Callable[[Any], None]:
        def handler(payload: Any) -> None:
            """Apply this event's cache effect, then dispatch it."""
            data = _obj(payload)
            channel_id = _need_id(data, _CHANNEL_KEYS, "channelPublicId")
            users = self._voice_users(data)
            self._state.voice_states.replace_channel(channel_id, users)
            self._voice_hook(self._wire_name(python_event), data)
            self._dispatch(python_event, data, key=channel_id)

        return handler

    @staticmethod
    def _wire_name(python_event: str) -> str:
        return {
            "voice_state_update": endpoints.ON_VOICE_STATE_UPDATE,
            "voice_user_joined": endpoints.ON_VOICE_USER_JOINED,
        }[python_event]

    def _voice_user_left(self, payload: Any) -> None:
        data = _obj(payload)
        channel_id = _need_id(data, _CHANNEL_KEYS, "channelPublicId")
        user_id = _need_id(data, _USER_KEYS, "userPublicId")
        states = self._state.voice_states
        if "users" in data:
            states.replace_channel(channel_id, self._voice_users(data))
        states.remove(user_id, channel_id)
        self._voice_hook(endpoints.ON_VOICE_USER_LEFT, data)
        self._dispatch("voice_user_left", data, key=channel_id)

    def _voice_user_state(self, payload: Any) -> None:
        data = _obj(payload)
        channel_id = _need_id(data, _CHANNEL_KEYS, "channelPublicId")
        user_id = _need_id(data, _USER_KEYS, "userPublicId")
        self._state.voice_states.merge(user_id, data, channel_id)
        self._voice_hook(endpoints.ON_VOICE_USER_STATE, data)
        self._dispatch("voice_user_state", data, key=channel_id)

    def _voice_simple(self, python_event: str) -> Callable[[Any], None]:
        wire = {"voice_incoming_call": endpoints.ON_VOICE_INCOMING_CALL, "voice_call_cancelled": endpoints.ON_VOICE_CALL_CANCELLED}[
            python_event
        ]

        def handler(payload: Any) -> None:
            """Apply this event's cache effect, then dispatch it."""
            data = _obj(payload)
            channel_id = _need_id(data, _CHANNEL_KEYS, "channelPublicId")
            self._voice_hook(wire, data)
            self._dispatch(python_event, data, key=channel_id)

        return handler

    def _voice_token(self, payload: Any) -> None:
        data = _obj(payload)
        _need_id(data, _CHANNEL_KEYS, "channelPublicId")
        self._voice_hook(endpoints.ON_VOICE_LIVEKIT_TOKEN, data)
