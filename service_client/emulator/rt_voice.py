"""Presence, activity and voice signalling over the socket."""

from __future__ import annotations

import secrets
import time
from typing import Any

from .. import endpoints
from .rt_base import RealtimeBase
from .socket_server import ACTIVITY_TYPES, MAX_ID_CHARS, VOICE_BOOL_KEYS, VOICE_STR_KEYS, server_room, user_room
from .store import STATUSES, NotFound


class VoiceEvents(RealtimeBase):
    """Presence, activity and voice signalling (see :class:`~.realtime.Realtime`)."""

    # ------------------------------------------------------------------ presence
    def presence_rooms(self, uid: str) -> list[str]:
        """The rooms a user's presence and activity go to: its server rooms and its own room."""
        return [server_room(s) for s in self.store.servers.server_ids_of(uid)] + [user_room(uid)]

    async def set_presence(self, uid: str, status: str) -> None:
        """Store a status the user chose and broadcast ``presence:update`` (``invisible`` shown
        as ``offline``). A chosen status stays when the user's sockets go."""
        self.auto_online.discard(uid)
        await self._show_status(uid, status)

    async def _show_status(self, uid: str, status: str, *, others_only: bool = False) -> None:
        """Store ``status`` and broadcast it; ``others_only`` leaves out the user's own sockets."""
        self.store.users.set_status(uid, status)
        shown = "offline" if status == "invisible" else status
        rooms = [server_room(s) for s in self.store.servers.server_ids_of(uid)] if others_only else self.presence_rooms(uid)
        await self.emit(endpoints.ON_PRESENCE_UPDATE, {"userPublicId": uid, "status": shown}, rooms,
                        skip=self.sids_of(uid) if others_only else ())

    async def came_online(self, uid: str) -> None:
        """A socket of ``uid`` connected: a user with no chosen status (stored ``offline``) is
        shown ``online`` (stored, ``presence:update`` to its servers' rooms, not to its own
        sockets) until its last socket goes."""
        if uid in self.auto_online:
            return
        try:
            status = self.store.users.user(uid, viewer=uid)["status"]
        except NotFound:
            return
        if status == "offline":
            self.auto_online.add(uid)
            await self._show_status(uid, "online", others_only=True)

    async def went_offline(self, uid: str) -> None:
        """A socket of ``uid`` went: when it was the last one of a user shown ``online`` by
        :meth:`came_online`, the user is ``offline`` again (stored, ``presence:update``)."""
        if uid not in self.auto_online or self.sids_of(uid):
            return
        self.auto_online.discard(uid)
        try:
            self.store.users.user_row(uid)
        except NotFound:
            return
        await self._show_status(uid, "offline", others_only=True)

    async def _on_presence(self, sid: str, data: Any = None) -> None:
        uid = self.sessions.get(sid)
        if uid is None or not isinstance(data, dict) or data.get("status") not in STATUSES:
            return
        await self.set_presence(uid, data["status"])

    async def set_activity(self, uid: str, activity: dict[str, Any] | None) -> None:
        """Store an activity (None clears) and broadcast ``activity:update``."""
        self.store.users.set_activity(uid, activity)
        await self.emit(endpoints.ON_ACTIVITY_UPDATE, {"userPublicId": uid, "activity": activity}, self.presence_rooms(uid))

    async def _on_activity(self, sid: str, data: Any = None) -> None:
        uid = self.sessions.get(sid)
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

    # ------------------------------------------------------------------ voice
    def _voice_user(self, uid: str, sid: str | None) -> dict[str, Any]:
        user = self.store.users.user(uid)
        return {"userPublicId": uid, "userName": user["name"], "userTag": user["tag"], "userImage": user["image"],
                "socketId": sid, "muted": False, "deafened": False, "speaking": False,
                "joinedAt": int(time.time() * 1000), "isStreaming": False, "isCameraOn": False}

    def voice_channel_of(self, uid: str) -> str | None:
        """Return the voice channel a user is in, else None."""
        for cid, users in self.voice.items():
            if uid in users:
                return cid
        return None

    def hidden_from(self, cid: str) -> list[str]:
        """The connected sockets whose user may not view channel ``cid`` (its voice events skip them)."""
        seen: dict[str, bool] = {}
        out = []
        for sid, uid in list(self.sessions.items()):
            if uid not in seen:
                seen[uid] = self.store.channels.can_view(cid, uid)
            if not seen[uid]:
                out.append(sid)
        return out

    async def voice_join(self, uid: str, cid: str, sid: str | None = None) -> bool:
        """Put a user in a voice channel (leaving any other); return False if refused.

        Sends ``voice:livekit-token`` to the joiner (when ``sid`` is given, that socket, else
        the user room) and ``voice:user-joined`` to the server room, but for the
        members who may not view the channel (as ``voice:user-left`` and ``voice:user-state``).
        """
        try:
            chan = self.store.channels.channel_row(cid)
        except NotFound:
            return False
        if chan["type"] != "VOICE" or chan["server_id"] is None or \
                not self.store.members.has_perm(chan["server_id"], uid, "CONNECT") or not self.store.channels.can_view(cid, uid):
            return False
        current = self.voice_channel_of(uid)
        if current is not None and current != cid:
            await self.voice_leave(uid)
        users = self.voice.setdefault(cid, {})
        entry = users.get(uid) or self._voice_user(uid, sid)
        entry["socketId"] = sid
        users[uid] = entry
        token = secrets.token_urlsafe(32)
        creds = {"channelPublicId": cid, "token": token, "url": self.voice_url, "e2eeKey": self.voice_e2ee_key}
        if sid is not None:
            await self.sio.emit(endpoints.ON_VOICE_LIVEKIT_TOKEN, creds, to=sid)
        else:
            await self.emit(endpoints.ON_VOICE_LIVEKIT_TOKEN, creds, user_room(uid))
        await self.emit(endpoints.ON_VOICE_USER_JOINED, {"channelPublicId": cid, "user": entry, "users": list(users.values())},
                        server_room(chan["server_id"]), skip=self.hidden_from(cid))
        return True

    async def voice_leave(self, uid: str) -> bool:
        """Take a user out of its voice channel; broadcast ``voice:user-left``. False if not in one."""
        cid = self.voice_channel_of(uid)
        if cid is None:
            return False
        users = self.voice[cid]
        users.pop(uid, None)
        if not users:
            self.voice.pop(cid, None)
        try:
            server_id = self.store.channels.channel_row(cid)["server_id"]
        except NotFound:
            return True
        await self.emit(endpoints.ON_VOICE_USER_LEFT, {"channelPublicId": cid, "userPublicId": uid, "users": list(users.values())},
                        [server_room(server_id), user_room(uid)],
                        skip=[s for s in self.hidden_from(cid) if self.sessions.get(s) != uid])
        return True

    async def voice_state(self, uid: str, changes: dict[str, Any]) -> bool:
        """Merge voice state changes and broadcast ``voice:user-state``; False if not in voice."""
        cid = self.voice_channel_of(uid)
        if cid is None:
            return False
        clean: dict[str, Any] = {}
        for key, value in changes.items():
            if key in VOICE_BOOL_KEYS:
                if not isinstance(value, bool):
                    return False  # one bad field refuses the whole update
                clean[key] = value
            elif key in VOICE_STR_KEYS:
                if value is not None and (not isinstance(value, str) or len(value) > MAX_ID_CHARS):
                    return False
                clean[key] = value
        if not clean:
            return False
        self.voice[cid][uid].update(clean)
        server_id = self.store.channels.channel_row(cid)["server_id"]
        await self.emit(endpoints.ON_VOICE_USER_STATE, dict({"channelPublicId": cid, "userPublicId": uid}, **clean),
                        server_room(server_id), skip=self.hidden_from(cid))
        return True

    async def _on_voice_join(self, sid: str, data: Any = None) -> None:
        uid = self.sessions.get(sid)
        if uid is None or not isinstance(data, dict) or not isinstance(data.get("channelPublicId"), str):
            return
        await self.voice_join(uid, data["channelPublicId"], sid)

    async def _on_voice_leave(self, sid: str, *args: Any) -> None:
        uid = self.sessions.get(sid)
        if uid is not None:
            await self.voice_leave(uid)

    async def _on_voice_state(self, sid: str, data: Any = None) -> None:
        uid = self.sessions.get(sid)
        if uid is not None and isinstance(data, dict):
            await self.voice_state(uid, data)
