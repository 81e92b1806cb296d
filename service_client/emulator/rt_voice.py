"""Voice signalling over the socket: joins, leaves, state changes and the media server's credentials."""

from __future__ import annotations

import secrets
import time
from typing import TYPE_CHECKING, Any

from .. import endpoints
from .socket_server import (
    DEFAULT_VOICE_URL,
    MAX_ID_CHARS,
    VOICE_BOOL_KEYS,
    VOICE_STR_KEYS,
    server_room,
    user_room,
)
from .store import NotFound

if TYPE_CHECKING:
    from .realtime import Realtime


class VoiceEvents:
    """Voice signalling over the socket: joins, leaves, state changes and the media server's credentials.

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
            endpoints.EMIT_VOICE_JOIN: self._on_voice_join,
            endpoints.EMIT_VOICE_LEAVE: self._on_voice_leave,
            endpoints.EMIT_VOICE_STATE: self._on_voice_state,
        }

    def _voice_user(self, uid: str, sid: str | None) -> dict[str, Any]:
        user = self.rt.store.users.user(uid)
        return {"userPublicId": uid, "userName": user["name"], "userTag": user["tag"], "userImage": user["image"],
                "socketId": sid, "muted": False, "deafened": False, "speaking": False,
                "joinedAt": int(time.time() * 1000), "isStreaming": False, "isCameraOn": False}

    def voice_channel_of(self, uid: str) -> str | None:
        """Return the voice channel a user is in, else None."""
        for cid, users in self.rt.voice.items():
            if uid in users:
                return cid
        return None

    def hidden_from(self, cid: str) -> list[str]:
        """The connected sockets whose user may not view channel ``cid`` (its voice events skip them)."""
        seen: dict[str, bool] = {}
        out = []
        for sid, uid in list(self.rt.sessions.items()):
            if uid not in seen:
                seen[uid] = self.rt.store.channels.can_view(cid, uid)
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
            chan = self.rt.store.channels.channel_row(cid)
        except NotFound:
            return False
        if chan["type"] != "VOICE" or chan["server_id"] is None or \
                not self.rt.store.members.has_perm(chan["server_id"], uid, "CONNECT") or not self.rt.store.channels.can_view(cid, uid):
            return False
        current = self.voice_channel_of(uid)
        if current is not None and current != cid:
            await self.voice_leave(uid)
        users = self.rt.voice.setdefault(cid, {})
        entry = users.get(uid) or self._voice_user(uid, sid)
        entry["socketId"] = sid
        users[uid] = entry
        url = self.rt.voice_url
        if self.rt.media is not None and self.rt.media_url is not None and url == DEFAULT_VOICE_URL:
            url = self.rt.media_url
            token = self.rt.media.token(uid, cid, name=entry["userName"])
        else:
            token = secrets.token_urlsafe(32)
        creds = {"channelPublicId": cid, "token": token, "url": url, "e2eeKey": self.rt.voice_e2ee_key}
        if sid is not None:
            await self.rt.sio.emit(endpoints.ON_VOICE_LIVEKIT_TOKEN, creds, to=sid)
        else:
            await self.rt.emit(endpoints.ON_VOICE_LIVEKIT_TOKEN, creds, user_room(uid))
        await self.rt.emit(endpoints.ON_VOICE_USER_JOINED, {"channelPublicId": cid, "user": entry, "users": list(users.values())},
                           server_room(chan["server_id"]), skip=self.hidden_from(cid))
        return True

    async def voice_leave(self, uid: str) -> bool:
        """Take a user out of its voice channel; broadcast ``voice:user-left``. False if not in one."""
        cid = self.voice_channel_of(uid)
        if cid is None:
            return False
        users = self.rt.voice[cid]
        users.pop(uid, None)
        if self.rt.media is not None:
            await self.rt.media.leave(cid, uid)
        if not users:
            self.rt.voice.pop(cid, None)
        try:
            server_id = self.rt.store.channels.channel_row(cid)["server_id"]
        except NotFound:
            return True
        await self.rt.emit(endpoints.ON_VOICE_USER_LEFT, {"channelPublicId": cid, "userPublicId": uid, "users": list(users.values())},
                           [server_room(server_id), user_room(uid)],
                           skip=[s for s in self.hidden_from(cid) if self.rt.sessions.get(s) != uid])
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
        self.rt.voice[cid][uid].update(clean)
        server_id = self.rt.store.channels.channel_row(cid)["server_id"]
        await self.rt.emit(endpoints.ON_VOICE_USER_STATE, dict({"channelPublicId": cid, "userPublicId": uid}, **clean),
                           server_room(server_id), skip=self.hidden_from(cid))
        return True

    async def _on_voice_join(self, sid: str, data: Any = None) -> None:
        uid = self.rt.sessions.get(sid)
        if uid is None or not isinstance(data, dict) or not isinstance(data.get("channelPublicId"), str):
            return
        await self.voice_join(uid, data["channelPublicId"], sid)

    async def _on_voice_leave(self, sid: str, *args: Any) -> None:
        uid = self.rt.sessions.get(sid)
        if uid is not None:
            await self.voice_leave(uid)

    async def _on_voice_state(self, sid: str, data: Any = None) -> None:
        uid = self.rt.sessions.get(sid)
        if uid is not None and isinstance(data, dict):
            await self.voice_state(uid, data)
