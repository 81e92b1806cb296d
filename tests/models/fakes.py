"""A tiny fake client for model, handler and manager unit tests (no I/O).

It records ``_request`` / ``_submit`` calls (answered from a scripted table),
``_dispatch`` and ``_run`` calls (``_run`` executes at once, in order), emits,
and resolved nonces, and owns the real managers.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import Any

from service_client.errors import ServiceAPIError
from service_client.managers.channels import ChannelManager
from service_client.managers.guilds import GuildManager
from service_client.managers.members import MemberManager
from service_client.managers.users import UserManager
from service_client.managers.voice_states import VoiceStateManager

Answer = Any


class FakeClient:
    """Records calls; answers requests from ``self.routes``: {(METHOD, path): answer}.

    An answer may be a value, an exception instance (raised), or a callable
    taking (route, params, json).
    """

    def __init__(self) -> None:
        self.user: Any = None
        self.site_url = "https://site.example"
        self.routes: dict[tuple[str, str], Answer] = {}
        self.requests: list[tuple[str, str, Any, Any]] = []
        self.submitted: list[tuple[str, str]] = []
        self.dispatched: list[tuple[str, tuple[Any, ...], Any]] = []
        self.ran: list[Any] = []
        self.reserved: list[Any] = []
        self.cancelled: list[Any] = []
        self.emitted: list[tuple[str, tuple[Any, ...]]] = []
        self.nonces: list[tuple[str, Any]] = []
        self.sent: list[tuple[Any, ...]] = []
        self.voice_events: list[tuple[str, Any]] = []
        self.users = UserManager(self)  # type: ignore[arg-type]
        self.guilds = GuildManager(self)  # type: ignore[arg-type]
        self.channels = ChannelManager(self)  # type: ignore[arg-type]
        self.members = MemberManager(self)  # type: ignore[arg-type]
        self.voice_states = VoiceStateManager(self)  # type: ignore[arg-type]

    # -- REST -----------------------------------------------------------------

    def _answer(self, route: Any, params: Any, json: Any) -> Any:
        key = (route.method, route.path)
        if key not in self.routes:
            raise ServiceAPIError(404, route.path, '{"error": "not found"}', {"error": "not found"})
        answer = self.routes[key]
        if isinstance(answer, BaseException):
            raise answer
        if callable(answer):
            return answer(route, params, json)
        return answer

    def _request(self, route: Any, *, params: Any = None, json: Any = None, **options: Any) -> Any:
        self.requests.append((route.method, route.path, params, json))
        return self._answer(route, params, json)

    def _submit(self, route: Any, *, params: Any = None, json: Any = None, **options: Any) -> concurrent.futures.Future[Any]:
        self.requests.append((route.method, route.path, params, json))
        self.submitted.append((route.method, route.path))
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        try:
            future.set_result(self._answer(route, params, json))
        except Exception as exc:  # noqa: BLE001
            future.set_exception(exc)
        return future

    # -- socket / events ------------------------------------------------------

    def _emit(self, event: str, *args: Any) -> None:
        self.emitted.append((event, args))

    def _dispatch(self, event: str, *args: Any, key: Any = None) -> None:
        self.dispatched.append((event, args, key))

    def _run(self, fn: Callable[[], None], *, key: Any = None) -> None:
        self.ran.append(key)
        fn()

    def _reserve_dispatch(self, *, key: Any = None) -> Any:
        """A reserved event: recorded in ``dispatched`` when it is emitted (``reserved`` keeps the keys)."""
        self.reserved.append(key)
        client = self

        class Slot:
            def emit(self, event: str, *args: Any) -> None:
                client.dispatched.append((event, args, key))

            def cancel(self) -> None:
                client.cancelled.append(key)

        return Slot()

    def _resolve_nonce(self, nonce: str, message: Any) -> None:
        self.nonces.append((nonce, message))

    def _on_voice_event(self, event: str, data: Any) -> None:
        self.voice_events.append((event, data))

    def send_message(self, channel_id: str, options: Any = None, **kwargs: Any) -> Any:
        self.sent.append((channel_id, options, kwargs))
        return "sent"

    # -- helpers for tests ----------------------------------------------------

    def events(self, name: str | None = None) -> list[tuple[str, tuple[Any, ...], Any]]:
        return [d for d in self.dispatched if name is None or d[0] == name]


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
