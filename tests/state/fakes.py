"""A recording fake :class:`~service_client.models._port.State` for model, parser and manager tests.

No client, no socket, no server: :class:`FakeState` answers requests from a scripted
table and records every request, emit, acknowledged call, dispatch, reserved event,
resolved nonce, voice event and send, and owns the real managers (so the caches behave as
in a client). Models built with it (``Message(state, record)``) hold it as ``_state``.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Mapping
from typing import Any

from service_client._defaults import DEFAULT_MAX_MESSAGES
from service_client.errors import ServiceAPIError
from service_client.managers.channels import ChannelManager
from service_client.managers.guilds import GuildManager
from service_client.managers.members import MemberManager
from service_client.managers.users import UserManager
from service_client.managers.voice_states import VoiceStateManager
from service_client.models._port import State
from service_client.models.guild import Guild
from service_client.state.connection import ConnectionState

Answer = Any


class FakeState:
    """Records calls; answers requests from ``self.routes``: {(METHOD, path): answer}.

    An answer may be a value, an exception instance (raised), or a callable
    taking (route, params, json). ``acks`` answers acknowledged emits the same
    way, keyed by event name (default: ``[{}]``, a success). Its message cache is
    the real one (:class:`ConnectionState`'s code over this fake's own dicts), sized
    by ``max_messages``.
    """

    max_messages = ConnectionState.max_messages
    cached_message = ConnectionState.cached_message
    message_channel = ConnectionState.message_channel
    forget_message = ConnectionState.forget_message
    guild_managers = ConnectionState.guild_managers

    def __init__(self, *, max_messages: int | None = DEFAULT_MAX_MESSAGES) -> None:
        self._max_messages = max_messages
        self._messages: dict[str, Any] = {}
        self._messages_old: dict[str, Any] = {}
        self._messages_bound = max_messages or 0
        self._message_channels: dict[str, str] = {}
        self._message_channels_old: dict[str, str] = {}
        self.user: Any = None
        self.site_url = "https://site.example"
        #: What ``model.client`` gives: this fake itself, unless a test sets a client.
        self.client: Any = self
        self.routes: dict[tuple[str, str], Answer] = {}
        self.acks: dict[str, Answer] = {}
        self.requests: list[tuple[str, str, Any, Any]] = []
        self.submitted: list[tuple[str, str]] = []
        self.dispatched: list[tuple[str, tuple[Any, ...], Any]] = []
        self.ran: list[Any] = []
        self.reserved: list[Any] = []
        self.cancelled: list[Any] = []
        self.emitted: list[tuple[str, tuple[Any, ...]]] = []
        self.calls: list[tuple[str, tuple[Any, ...], float]] = []
        self.nonces: list[tuple[str, Any]] = []
        self.sent: list[tuple[Any, ...]] = []
        self.voice_events: list[tuple[str, Any]] = []
        self.evicted: list[str] = []
        self.closed = False
        self.voice_hook: Callable[[str, Any], None] | None = self._record_voice
        self.event_tap: Callable[[str, list[Any]], None] | None = None
        self.event_tap_wire = False
        self.event_tap_frames = False
        self.users = UserManager(self)
        self.guilds = GuildManager(self)
        self.channels = ChannelManager(self)
        self.members = MemberManager(self)
        self.voice_states = VoiceStateManager(self)
        #: The event registry (a connection state's ``events``): emits land in ``dispatched``.
        self.events = _RecordingEvents(self)

    # -- REST -----------------------------------------------------------------

    def _answer(self, table: Mapping[Any, Answer], key: Any, *args: Any) -> Any:
        if key not in table:
            raise ServiceAPIError(404, str(key), '{"error": "not found"}', {"error": "not found"})
        answer = table[key]
        if isinstance(answer, BaseException):
            raise answer
        if callable(answer):
            return answer(*args)
        return answer

    def request(self, route: Any, *, params: Any = None, json: Any = None, **options: Any) -> Any:
        self.requests.append((route.method, route.path, params, json))
        return self._answer(self.routes, (route.method, route.path), route, params, json)

    def submit(self, route: Any, *, params: Any = None, json: Any = None, **options: Any) -> concurrent.futures.Future[Any]:
        self.submitted.append((route.method, route.path))
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        try:
            future.set_result(self.request(route, params=params, json=json))
        except Exception as exc:  # noqa: BLE001
            future.set_exception(exc)
        return future

    # -- socket / events ------------------------------------------------------

    def emit(self, event: str, *args: Any) -> None:
        self.emitted.append((event, args))

    def call(self, event: str, *args: Any, timeout: float = 10.0) -> list[Any]:
        self.calls.append((event, args, timeout))
        return self._answer({**{event: [{}]}, **self.acks}, event, event, args)  # type: ignore[no-any-return]

    def dispatch(self, event: str, *args: Any, key: Any = None) -> None:
        self.dispatched.append((event, args, key))

    def run(self, fn: Callable[[], None], *, key: Any = None) -> None:
        self.ran.append(key)
        fn()

    def reserve_dispatch(self, *, key: Any = None) -> Any:
        """A reserved event: recorded in ``dispatched`` when it is emitted (``reserved`` keeps the keys)."""
        self.reserved.append(key)
        state = self

        class Slot:
            def emit(self, event: str, *args: Any) -> None:
                state.dispatched.append((event, args, key))

            def cancel(self) -> None:
                state.cancelled.append(key)

        return Slot()

    def resolve_nonce(self, nonce: str, message: Any) -> None:
        self.nonces.append((nonce, message))

    def _record_voice(self, event: str, data: Any) -> None:
        self.voice_events.append((event, data))

    def send_message(self, channel_id: str, options: Any = None, **kwargs: Any) -> Any:
        self.sent.append((channel_id, options, kwargs))
        return "sent"

    # -- cache writes -----------------------------------------------------------

    def store_user(self, data: Any, *, cache: bool = True) -> Any:
        return self.users.from_record(data, cache=cache)

    def store_member(self, data: Any, server_id: str | None, *, cache: bool = True) -> Any:
        return self.members.from_record(data, server_id, cache=cache)

    def build_guild(self, data: Any) -> Guild:
        return Guild(self, data)

    def note_webhook(self, webhook_id: str) -> None:
        self.users.note_webhook(webhook_id)

    def evict_guild(self, server_id: str) -> Any:
        self.evicted.append(server_id)
        guild = self.guilds.evict_live(server_id)
        self.channels.remove_guild(server_id)
        self.members.remove_guild(server_id)
        return guild

    # -- helpers for tests ----------------------------------------------------

    def events_named(self, name: str | None = None) -> list[tuple[str, tuple[Any, ...], Any]]:
        return [d for d in self.dispatched if name is None or d[0] == name]


class _RecordingEvents:
    """The event registry of :func:`connection_state`: emits land in the fake's ``dispatched``."""

    def __init__(self, fake: FakeState) -> None:
        self.fake = fake

    def emit(self, event: str, *args: Any, key: Any = None) -> None:
        self.fake.dispatched.append((event, args, key))

    def emit_one(self, event: str, arg: Any, key: Any) -> None:
        self.emit(event, arg, key=key)

    def reserve(self, *, key: Any = None) -> Any:
        return self.fake.reserve_dispatch(key=key)


class _InlinePool:
    """The worker pool of :func:`connection_state`: runs each task at once."""

    def __init__(self, fake: FakeState) -> None:
        self.fake = fake

    def submit(self, fn: Callable[[], None], *, key: Any = None) -> None:
        self.fake.run(fn, key=key)


def connection_state(fake: FakeState) -> Any:
    """A real :class:`~service_client.state.ConnectionState` whose REST session, event registry
    and worker pool are ``fake`` (answers from ``fake.routes``, records in ``fake.dispatched``)."""
    from service_client.state.connection import ConnectionState

    return ConnectionState(
        fake,  # type: ignore[arg-type]
        rest=fake,  # type: ignore[arg-type]
        events=_RecordingEvents(fake),  # type: ignore[arg-type]
        pool=_InlinePool(fake),  # type: ignore[arg-type]
        site_url=fake.site_url,
    )


def _conforms(fake: FakeState) -> State:
    """Type-checked: a FakeState is a State (the models' port)."""
    return fake


#: The name the older tests use.


# -- wire record factories (protocol.md section 3) ----------------------------

def user_rec(uid: str = "U1", name: str = "alice", **extra: Any) -> dict[str, Any]:
    rec = {"publicId": uid, "name": name, "tag": "0001", "image": None, "isBot": False, "status": "online"}
    rec.update(extra)
    return rec


def server_rec(sid: str = "S1", name: str = "Guild", owner: str = "OWNER", **extra: Any) -> dict[str, Any]:
    rec = {"publicId": sid, "name": name, "imageUrl": None, "memberCount": 3, "ownerId": owner}
    rec.update(extra)
    return rec


def role_rec(rid: str = "R1", perms: Any = "552448", sid: str = "S1", **extra: Any) -> dict[str, Any]:
    rec = {"publicId": rid, "name": f"role-{rid}", "color": "#112233", "hoist": False,
           "serverPublicId": sid, "position": 0, "permissions": perms}
    rec.update(extra)
    return rec


def member_rec(uid: str = "U1", sid: str = "S1", roles: list[Any] | None = None, **extra: Any) -> dict[str, Any]:
    rec = {"publicId": "M-" + uid, "userId": uid, "user": user_rec(uid), "serverPublicId": sid,
           "roles": roles if roles is not None else [role_rec()], "joinedAt": "2026-01-02T03:04:05.678Z",
           "nickname": None, "isOwner": False}
    rec.update(extra)
    return rec


def channel_rec(cid: str = "C1", name: str = "general", sid: str | None = "S1", **extra: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {"publicId": cid, "name": name, "type": "TEXT"}
    if sid is not None:
        rec["serverPublicId"] = sid
    rec.update(extra)
    return rec


def message_rec(mid: str = "MSG1", content: str = "hi", cid: str = "C1", sid: str | None = "S1", **extra: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {"publicId": mid, "content": content, "author": user_rec(), "channelPublicId": cid,
                           "createdAt": "2026-01-02T03:04:05.678Z", "embeds": []}
    if sid is not None:
        rec["serverPublicId"] = sid
    rec.update(extra)
    return rec
