"""Socket connections (auth, rooms joined) and the message, reaction and moderation events."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import socketio  # type: ignore[import-untyped]

from .. import endpoints
from .._message_rules import message_problem
from .rt_voice import VoiceEvents
from .socket_server import (
    MAX_CONTENT_CHARS,
    MAX_EMBEDS_JSON_CHARS,
    MAX_EMOJI_CHARS,
    MAX_ID_CHARS,
    channel_room,
    user_room,
)
from .store import Forbidden, NotFound
from .wire import RUN_SIZE, MessageRun, Wire

logger = logging.getLogger("service_client.emulator.realtime")

#: The emulator's own answer to a refused ``message:send`` or ``message:edit``: not an event of
#: the service, which answers a refused message with nothing. Always sent for a message that
#: breaks the message rules (:mod:`service_client._message_rules`: empty, and in limit mode over
#: the limits), which the client refuses before sending; for the other refusals (unknown channel,
#: missing permission) only when configured so (``send_errors``).
SEND_ERROR_EVENT = "message:error"


class MessageEvents(VoiceEvents):
    """Connections, messages, reactions and moderation acks (see :class:`~.realtime.Realtime`)."""

    # ------------------------------------------------------------------ connection
    async def _on_connect(self, sid: str, environ: dict[str, Any], auth: Any = None) -> None:
        token = auth.get("token") if isinstance(auth, dict) else None
        uid = self.store.users.user_by_token(token)
        if uid is None or self.refuse_auth:
            raise socketio.exceptions.ConnectionRefusedError("Authentication failed")
        self.sessions[sid] = uid
        protocol = getattr(environ.get("asgi.send"), "__self__", None)
        if isinstance(protocol, Wire):
            self.wires[sid] = protocol
        transport = getattr(protocol, "transport", None)
        if transport is not None:
            self.transports[sid] = transport
        await self.join_user_rooms(sid, uid)
        asyncio.get_running_loop().create_task(self._after_connect(sid, uid))

    async def _after_connect(self, sid: str, uid: str) -> None:
        """Show the user online (:meth:`came_online`), then send one ``voice:state-update`` per
        non-empty voice channel of the user's servers."""
        try:
            if sid in self.sessions:  # still connected
                await self.came_online(uid)
            servers = set(self.store.servers.server_ids_of(uid))
            for cid, users in list(self.voice.items()):
                if not users:
                    continue
                try:
                    chan = self.store.channels.channel_row(cid)
                except NotFound:
                    continue
                if chan["server_id"] in servers and self.store.channels.can_view(cid, uid):
                    await self.emit(endpoints.ON_VOICE_STATE_UPDATE,
                                    {"channelPublicId": cid, "users": list(users.values())}, user_room(uid))
        except Exception:
            logger.debug("after-connect voice snapshot failed", exc_info=True)

    async def _on_disconnect(self, sid: str, reason: Any = None) -> None:
        uid = self.sessions.pop(sid, None)
        self.transports.pop(sid, None)
        self.wires.pop(sid, None)
        if uid is None:
            return
        await self.went_offline(uid)
        for users in list(self.voice.values()):
            entry = users.get(uid)
            if entry is not None and entry.get("socketId") == sid:
                await self.voice_leave(uid)

    async def drop(self, uid: str | None = None) -> int:
        """Close matching sockets at the transport level (no socket.io / Engine.IO close packet).

        Returns:
            The number of sockets dropped.
        """
        count = 0
        for sid in self.sids_of(uid):
            transport = self.transports.get(sid)
            if transport is not None:
                transport.abort()
            else:  # fall back to an engine.io abort without a close packet
                eio_sid = self.sio.manager.eio_sid_from_sid(sid, "/")
                try:
                    sock = self.sio.eio._get_socket(eio_sid)
                except KeyError:
                    continue
                await sock.close(wait=False, abort=True)
            count += 1
        return count

    async def server_disconnect(self, uid: str | None = None) -> int:
        """Send socket.io DISCONNECT to matching sockets; return how many."""
        sids = self.sids_of(uid)
        for sid in sids:
            await self.sio.disconnect(sid)
        return len(sids)

    # ------------------------------------------------------------------ messages
    async def deliver_messages(self, records: list[dict[str, Any]], nonce: Any = None,
                               sender_sid: str | None = None) -> None:
        """Broadcast stored messages as ``message:new`` to their channel room (sender included).

        With ``sender_sid`` (a ``message:send``), the echo to that socket follows the echo mode:
        ``normal``, ``drop`` (not sent), ``duplicate`` (sent twice) or ``delay`` (sent
        ``echo_delay_ms`` later, the others at once).
        """
        if not records:
            return
        if len(records) == 1:
            rec = records[0]
            if nonce is not None:
                rec = dict(rec, nonce=nonce)
            room = channel_room(rec["channelPublicId"])
            if sender_sid is None or self.echo == "normal":
                await self.emit(endpoints.ON_MESSAGE_NEW, rec, room)
                return
            in_room = any(s == sender_sid for s, _e in self.sio.manager.get_participants("/", room))
            await self.emit(endpoints.ON_MESSAGE_NEW, rec, room, skip=[sender_sid])
            if not in_room or self.echo == "drop":
                return
            if self.echo == "duplicate":
                await self.sio.emit(endpoints.ON_MESSAGE_NEW, rec, to=sender_sid)
                await self.sio.emit(endpoints.ON_MESSAGE_NEW, rec, to=sender_sid)
            else:
                asyncio.get_running_loop().create_task(self._late_echo(rec, sender_sid, self.echo_delay_ms))
            return
        for rec in records:
            await self.emit(endpoints.ON_MESSAGE_NEW, rec, channel_room(rec["channelPublicId"]))

    async def deliver_bulk(self, cid: str, ids: list[str], contents: list[str], shared: dict[str, Any]) -> None:
        """Broadcast stored messages of one bulk post as ``message:new`` to their channel room, in
        order, in runs of :data:`~.wire.RUN_SIZE` (arguments as :meth:`Store.insert_bulk` returns them)."""
        room = channel_room(cid)
        for start in range(0, len(ids), RUN_SIZE):
            await self.emit_run(MessageRun(ids[start:start + RUN_SIZE], contents[start:start + RUN_SIZE], shared),
                                room)

    async def _late_echo(self, rec: dict[str, Any], sid: str, delay_ms: float) -> None:
        await asyncio.sleep(max(0.0, delay_ms) / 1000.0)
        if sid in self.sessions:
            await self.sio.emit(endpoints.ON_MESSAGE_NEW, rec, to=sid)

    def check_content(self, content: str, embeds: list[Any]) -> str | None:
        """Return an error key when content or embeds break the hard caps (always on:
        :data:`MAX_CONTENT_CHARS`, :data:`MAX_EMBEDS_JSON_CHARS`), the emptiness rule or (limit
        mode) the limits of :mod:`service_client._message_rules`; None when acceptable."""
        if len(content) > MAX_CONTENT_CHARS:
            return "messages.errors.too_long"
        try:
            size = len(json.dumps(embeds))
        except (TypeError, ValueError):
            return "messages.errors.invalid"
        if size > MAX_EMBEDS_JSON_CHARS:
            return "messages.errors.embed_too_large"
        found = message_problem(content, embeds, limits=self.limits)
        return None if found is None else found[0]

    async def _refuse(self, sid: str, nonce: Any, error: str, *, always: bool = False) -> None:
        """Answer a refused send with :data:`SEND_ERROR_EVENT` when ``always`` (a message rule
        broken) or ``send_errors`` is on."""
        if always or self.send_errors:
            await self.sio.emit(SEND_ERROR_EVENT, {"nonce": nonce, "error": error}, to=sid)

    async def _on_message_send(self, sid: str, data: Any = None) -> None:
        uid = self.sessions.get(sid)
        if uid is None or not isinstance(data, dict):
            return
        nonce = data.get("nonce")
        cid = data.get("channelPublicId")
        content = data.get("content", "")
        embeds = data.get("embeds", [])
        reply_to = data.get("replyToId")
        if content is None:
            content = ""
        if embeds is None:
            embeds = []
        if nonce is not None and (not isinstance(nonce, str) or len(nonce) > MAX_ID_CHARS):
            await self._refuse(sid, None, "messages.errors.invalid")
            return
        if not isinstance(cid, str) or not isinstance(content, str) or not isinstance(embeds, list) \
                or not all(isinstance(e, dict) for e in embeds) \
                or (reply_to is not None and (not isinstance(reply_to, str) or len(reply_to) > MAX_ID_CHARS)):
            await self._refuse(sid, nonce, "messages.errors.invalid")
            return
        error = self.check_content(content, embeds)
        if error is not None:
            await self._refuse(sid, nonce, error, always=True)
            return
        if not self.may_send(cid, uid):
            await self._refuse(sid, nonce, "messages.errors.missing_permission")
            return
        records = self.store.messages.insert_messages(cid, uid, [content], embeds, reply_to)
        await self.deliver_messages(records, nonce, sender_sid=sid)

    def may_send(self, cid: str, uid: str) -> bool:
        """Whether a user may post in a channel (DM participant, or VIEW + SEND_MESSAGES with the
        channel's overrides applied)."""
        return self.store.channels.may_send(cid, uid)

    async def _on_message_edit(self, sid: str, data: Any = None) -> None:
        uid = self.sessions.get(sid)
        if uid is None or not isinstance(data, dict):
            return
        mid, content, embeds = data.get("messagePublicId"), data.get("content"), data.get("embeds")
        if not isinstance(mid, str) or not isinstance(content, str) or \
                (embeds is not None and (not isinstance(embeds, list) or
                                         not all(isinstance(e, dict) for e in embeds))):
            return
        try:
            row = self.store.messages.message_row(mid)
        except NotFound:
            return
        if row["author_id"] != uid or not self.store.channels.can_view(row["channel_id"], uid):
            return
        error = self.check_content(content, embeds if embeds is not None else json.loads(row["embeds"]))
        if error is not None:
            await self.sio.emit(SEND_ERROR_EVENT, {"messagePublicId": mid, "error": error}, to=sid)
            return
        rec = self.store.messages.edit_message(mid, content, embeds)
        await self.emit(endpoints.ON_MESSAGE_UPDATED, rec, channel_room(rec["channelPublicId"]))

    async def _on_message_delete(self, sid: str, data: Any = None) -> None:
        uid = self.sessions.get(sid)
        if uid is None or not isinstance(data, dict) or not isinstance(data.get("messagePublicId"), str):
            return
        mid = data["messagePublicId"]
        try:
            row = self.store.messages.message_row(mid)
        except NotFound:
            return
        if not self.store.channels.can_view(row["channel_id"], uid):
            return
        if row["author_id"] != uid and not (row["server_id"] and
                                            self.store.members.has_perm(row["server_id"], uid, "MANAGE_MESSAGES")):
            return
        self.store.messages.delete_message(mid)
        await self.emit(endpoints.ON_MESSAGE_DELETED, {"publicId": mid, "messagePublicId": mid,
                                            "channelPublicId": row["channel_id"],
                                            "serverPublicId": row["server_id"]}, channel_room(row["channel_id"]))

    # ------------------------------------------------------------------ reactions
    def _reactable(self, uid: str, mid: Any, perm: str) -> Any:
        """The message row when ``uid`` may act on it with ``perm`` (DM participants may react
        but never clear), else None."""
        if not isinstance(mid, str) or not mid or len(mid) > MAX_ID_CHARS:
            return None
        try:
            row = self.store.messages.message_row(mid)
        except NotFound:
            return None
        if not self.store.channels.can_view(row["channel_id"], uid):
            return None
        if row["server_id"] is None:
            return row if perm == "ADD_REACTION" else None
        return row if self.store.members.has_perm(row["server_id"], uid, perm) else None

    async def _on_message_react(self, sid: str, data: Any = None) -> None:
        """``message:react {messagePublicId, emoji}``: toggle the caller's reaction, then send the
        full snapshot ``message:reaction {messagePublicId, reactions}`` to the channel room."""
        uid = self.sessions.get(sid)
        if uid is None or not isinstance(data, dict):
            return
        emoji = data.get("emoji")
        if not isinstance(emoji, str) or not emoji.strip() or len(emoji) > MAX_EMOJI_CHARS:
            return
        row = self._reactable(uid, data.get("messagePublicId"), "ADD_REACTION")
        if row is None:
            return
        await self.toggle_reaction(row, emoji, uid)

    async def toggle_reaction(self, row: Any, emoji: str, uid: str) -> bool:
        """Toggle one reaction and broadcast the snapshot; return True when it was added."""
        added = self.store.messages.toggle_reaction(row["id"], emoji, uid)
        await self.emit(endpoints.ON_MESSAGE_REACTION, {"messagePublicId": row["id"], "reactions": self.store.messages.reactions(row["id"])},
                        channel_room(row["channel_id"]))
        return added

    async def _on_reaction_clear(self, sid: str, data: Any = None) -> None:
        """``message:reaction_clear {messagePublicId}`` (MANAGE_MESSAGES): remove every reaction,
        broadcast ``message:reaction_clear {messagePublicId}``."""
        uid = self.sessions.get(sid)
        if uid is None or not isinstance(data, dict):
            return
        row = self._reactable(uid, data.get("messagePublicId"), "MANAGE_MESSAGES")
        if row is None:
            return
        await self.clear_reactions(row)

    async def clear_reactions(self, row: Any) -> None:
        """Remove every reaction of a message and broadcast ``message:reaction_clear``."""
        self.store.messages.clear_reactions(row["id"])
        await self.emit(endpoints.ON_MESSAGE_REACTION_CLEAR, {"messagePublicId": row["id"]}, channel_room(row["channel_id"]))

    # ------------------------------------------------------------------ moderation (acks)
    async def _on_kick(self, sid: str, data: Any = None) -> Any:
        return await self.ops.members.moderate("kick", self.sessions.get(sid), data)

    async def _on_ban(self, sid: str, data: Any = None) -> Any:
        return await self.ops.members.moderate("ban", self.sessions.get(sid), data)

    async def _on_unban(self, sid: str, data: Any = None) -> Any:
        return await self.ops.members.moderate("unban", self.sessions.get(sid), data)

    async def _typing(self, sid: str, data: Any, event: str) -> None:
        uid = self.sessions.get(sid)
        if uid is None or not isinstance(data, str) or not self.store.channels.can_view(data, uid):
            return
        user = self.store.users.user(uid)
        await self.emit(event, {"channelPublicId": data, "userPublicId": uid, "userName": user["name"]},
                        channel_room(data), skip=[sid])

    async def typing_as(self, uid: str, cid: str, *, stop: bool) -> None:
        """Control plane: ``typing:start`` (``typing:stop`` when ``stop``) as a user's socket
        would send it, to the channel's room (the user's own sockets included: none of them sent it).

        Raises:
            NotFound: Unknown user or channel. Forbidden: The user may not view the channel.
        """
        user = self.store.users.user(uid)
        self.store.channels.channel_row(cid)
        if not self.store.channels.can_view(cid, uid):
            raise Forbidden("channels.errors.missing_permission")
        await self.emit(endpoints.ON_TYPING_STOP if stop else endpoints.ON_TYPING_START,
                        {"channelPublicId": cid, "userPublicId": uid, "userName": user["name"]}, channel_room(cid))

    async def _on_typing_start(self, sid: str, data: Any = None) -> None:
        await self._typing(sid, data, endpoints.ON_TYPING_START)

    async def _on_typing_stop(self, sid: str, data: Any = None) -> None:
        await self._typing(sid, data, endpoints.ON_TYPING_STOP)
