"""Presence and activity over the socket: statuses shown to the rooms that see a user."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from .. import endpoints
from .socket_server import (
    ACTIVITY_TYPES,
    server_room,
    user_room,
)
from .store import STATUSES, NotFound

if TYPE_CHECKING:
    from .realtime import Realtime


class PresenceEvents:
    """Presence and activity over the socket: statuses shown to the rooms that see a user.

    Given the :class:`~.realtime.Realtime` it belongs to (sessions, rooms, emits, settings, the
    other groups); runs on the emulator's loop.

    Args:
        rt: The socket side.
    """

    def __init__(self, rt: Realtime) -> None:
        self.rt = rt

    def handlers(self) -> dict[str, Any]:
        """The socket event handlers of this group, by the catalog's event name."""
        return {
            endpoints.EMIT_PRESENCE_UPDATE: self._on_presence,
            endpoints.EMIT_ACTIVITY_UPDATE: self._on_activity,
        }

    def presence_rooms(self, uid: str) -> list[str]:
        """The rooms a user's presence and activity go to: its server rooms and its own room."""
        return [server_room(s) for s in self.rt.store.servers.server_ids_of(uid)] + [user_room(uid)]

    async def set_presence(self, uid: str, status: str) -> None:
        """Store a status the user chose and broadcast ``presence:update`` (``invisible`` shown
        as ``offline``). A chosen status stays when the user's sockets go."""
        self.rt.auto_online.discard(uid)
        await self._show_status(uid, status)

    async def _show_status(self, uid: str, status: str, *, others_only: bool = False) -> None:
        """Store ``status`` and broadcast it; ``others_only`` leaves out the user's own sockets."""
        self.rt.store.users.set_status(uid, status)
        shown = "offline" if status == "invisible" else status
        rooms = [server_room(s) for s in self.rt.store.servers.server_ids_of(uid)] if others_only else self.presence_rooms(uid)
        await self.rt.emit(endpoints.ON_PRESENCE_UPDATE, {"userPublicId": uid, "status": shown}, rooms,
                           skip=self.rt.sids_of(uid) if others_only else ())

    async def came_online(self, uid: str) -> None:
        """A socket of ``uid`` connected: a user with no chosen status (stored ``offline``) is
        shown ``online`` (stored, ``presence:update`` to its servers' rooms, not to its own
        sockets) until its last socket goes."""
        if uid in self.rt.auto_online:
            return
        try:
            status = self.rt.store.users.user(uid, viewer=uid)["status"]
        except NotFound:
            return
        if status == "offline":
            self.rt.auto_online.add(uid)
            await self._show_status(uid, "online", others_only=True)

    async def went_offline(self, uid: str) -> None:
        """A socket of ``uid`` went: when it was the last one of a user shown ``online`` by
        :meth:`came_online`, the user is ``offline`` again (stored, ``presence:update``)."""
        if uid not in self.rt.auto_online or self.rt.sids_of(uid):
            return
        self.rt.auto_online.discard(uid)
        try:
            self.rt.store.users.user_row(uid)
        except NotFound:
            return
        await self._show_status(uid, "offline", others_only=True)

    async def _on_presence(self, sid: str, data: Any = None) -> None:
        uid = self.rt.sessions.get(sid)
        if uid is None or not isinstance(data, dict) or data.get("status") not in STATUSES:
            return
        await self.set_presence(uid, data["status"])

    async def set_activity(self, uid: str, activity: dict[str, Any] | None) -> None:
        """Store an activity (None clears) and broadcast ``activity:update``."""
        self.rt.store.users.set_activity(uid, activity)
        await self.rt.emit(endpoints.ON_ACTIVITY_UPDATE, {"userPublicId": uid, "activity": activity}, self.presence_rooms(uid))

    async def _on_activity(self, sid: str, data: Any = None) -> None:
        uid = self.rt.sessions.get(sid)
        if uid is None or not isinstance(data, dict):
            return
        kind = data.get("type")
        if kind == "none":
            await self.set_activity(uid, None)
            return
        name = data.get("name", "")
        details = data.get("details")
        started = data.get("startedAt")
        if kind not in ACTIVITY_TYPES or not isinstance(name, str) or \
                (details is not None and not isinstance(details, str)):
            return
        if started is not None and (isinstance(started, bool) or not isinstance(started, int) or
                                    not 0 <= started < 2**53):
            return
        if started is None:
            started = int(time.time() * 1000)
        activity: dict[str, Any] = {"type": kind, "name": name[:128]}
        if details is not None:
            activity["details"] = details[:64]
        activity["startedAt"] = int(started)
        await self.set_activity(uid, activity)
