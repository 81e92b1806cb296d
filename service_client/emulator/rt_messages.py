"""Messages, reactions and typing over the socket, and the fan-out of messages posted elsewhere."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from .. import endpoints
from .._message_rules import message_problem
from .socket_server import (
    MAX_CONTENT_CHARS,
    MAX_EMBEDS_JSON_CHARS,
    MAX_EMOJI_CHARS,
    MAX_ID_CHARS,
    channel_room,
)
from .store import Forbidden, NotFound
from .wire import RUN_SIZE, MessageRun

if TYPE_CHECKING:
    from .realtime import Realtime

#: The emulator's own answer to a refused ``message:send`` or ``message:edit``: not an event of
#: the service, which answers a refused message with nothing. Always sent for a message that
#: breaks the message rules (:mod:`service_client._message_rules`: empty, and in limit mode over
#: the limits), which the client refuses before sending; for the other refusals (unknown channel,
#: missing permission) only when configured so (``send_errors``).
SEND_ERROR_EVENT = "message:error"


class MessageEvents:
    """Messages, reactions and typing over the socket, and the fan-out of messages posted elsewhere.

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
            endpoints.EMIT_MESSAGE_SEND: self._on_message_send,
            endpoints.EMIT_MESSAGE_EDIT: self._on_message_edit,
            endpoints.EMIT_MESSAGE_DELETE: self._on_message_delete,
            endpoints.EMIT_MESSAGE_REACT: self._on_message_react,
            endpoints.EMIT_MESSAGE_REACTION_CLEAR: self._on_reaction_clear,
            endpoints.EMIT_TYPING_START: self._on_typing_start,
            endpoints.EMIT_TYPING_STOP: self._on_typing_stop,
        }

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
            if sender_sid is None or self.rt.echo == "normal":
                await self.rt.emit(endpoints.ON_MESSAGE_NEW, rec, room)
                return
            in_room = any(s == sender_sid for s, _e in self.rt.sio.manager.get_participants("/", room))
            await self.rt.emit(endpoints.ON_MESSAGE_NEW, rec, room, skip=[sender_sid])
            if not in_room or self.rt.echo == "drop":
                return
            if self.rt.echo == "duplicate":
                await self.rt.sio.emit(endpoints.ON_MESSAGE_NEW, rec, to=sender_sid)
                await self.rt.sio.emit(endpoints.ON_MESSAGE_NEW, rec, to=sender_sid)
            else:
                asyncio.get_running_loop().create_task(self._late_echo(rec, sender_sid, self.rt.echo_delay_ms))
            return
        for rec in records:
            await self.rt.emit(endpoints.ON_MESSAGE_NEW, rec, channel_room(rec["channelPublicId"]))

    async def deliver_bulk(self, cid: str, ids: list[str], contents: list[str], shared: dict[str, Any]) -> None:
        """Broadcast stored messages of one bulk post as ``message:new`` to their channel room, in
        order, in runs of :data:`~.wire.RUN_SIZE` (arguments as :meth:`Store.insert_bulk` returns them)."""
        room = channel_room(cid)
        for start in range(0, len(ids), RUN_SIZE):
            await self.rt.emit_run(MessageRun(ids[start:start + RUN_SIZE], contents[start:start + RUN_SIZE], shared),
                                   room)

    async def _late_echo(self, rec: dict[str, Any], sid: str, delay_ms: float) -> None:
        await asyncio.sleep(max(0.0, delay_ms) / 1000.0)
        if sid in self.rt.sessions:
            await self.rt.sio.emit(endpoints.ON_MESSAGE_NEW, rec, to=sid)

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
        found = message_problem(content, embeds, limits=self.rt.limits)
        return None if found is None else found[0]

    async def _refuse(self, sid: str, nonce: Any, error: str, *, always: bool = False) -> None:
        """Answer a refused send with :data:`SEND_ERROR_EVENT` when ``always`` (a message rule
        broken) or ``send_errors`` is on."""
        if always or self.rt.send_errors:
            await self.rt.sio.emit(SEND_ERROR_EVENT, {"nonce": nonce, "error": error}, to=sid)

    async def _on_message_send(self, sid: str, data: Any = None) -> None:
        uid = self.rt.sessions.get(sid)
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
        records = self.rt.store.messages.insert_messages(cid, uid, [content], embeds, reply_to)
        await self.deliver_messages(records, nonce, sender_sid=sid)

    def may_send(self, cid: str, uid: str) -> bool:
        """Whether a user may post in a channel (DM participant, or VIEW + SEND_MESSAGES with the
        channel's overrides applied)."""
        return self.rt.store.channels.may_send(cid, uid)

    async def _on_message_edit(self, sid: str, data: Any = None) -> None:
        uid = self.rt.sessions.get(sid)
        if uid is None or not isinstance(data, dict):
            return
        mid, content, embeds = data.get("messagePublicId"), data.get("content"), data.get("embeds")
        if not isinstance(mid, str) or not isinstance(content, str) or \
                (embeds is not None and (not isinstance(embeds, list) or
                                         not all(isinstance(e, dict) for e in embeds))):
            return
        try:
            row = self.rt.store.messages.message_row(mid)
        except NotFound:
            return
        if row["author_id"] != uid or not self.rt.store.channels.can_view(row["channel_id"], uid):
            return
        error = self.check_content(content, embeds if embeds is not None else json.loads(row["embeds"]))
        if error is not None:
            await self.rt.sio.emit(SEND_ERROR_EVENT, {"messagePublicId": mid, "error": error}, to=sid)
            return
        rec = self.rt.store.messages.edit_message(mid, content, embeds)
        await self.rt.emit(endpoints.ON_MESSAGE_UPDATED, rec, channel_room(rec["channelPublicId"]))

    async def _on_message_delete(self, sid: str, data: Any = None) -> None:
        uid = self.rt.sessions.get(sid)
        if uid is None or not isinstance(data, dict) or not isinstance(data.get("messagePublicId"), str):
            return
        mid = data["messagePublicId"]
        try:
            row = self.rt.store.messages.message_row(mid)
        except NotFound:
            return
        if not self.rt.store.channels.can_view(row["channel_id"], uid):
            return
        if row["author_id"] != uid and not (row["server_id"] and
                                            self.rt.store.members.has_perm(row["server_id"], uid, "MANAGE_MESSAGES")):
            return
        self.rt.store.messages.delete_message(mid)
        deleted = {"publicId": mid, "messagePublicId": mid, "channelPublicId": row["channel_id"],
                   "serverPublicId": row["server_id"]}
        await self.rt.emit(endpoints.ON_MESSAGE_DELETED, deleted, channel_room(row["channel_id"]))

    def _reactable(self, uid: str, mid: Any, perm: str) -> Any:
        """The message row when ``uid`` may act on it with ``perm`` (DM participants may react
        but never clear), else None."""
        if not isinstance(mid, str) or not mid or len(mid) > MAX_ID_CHARS:
            return None
        try:
            row = self.rt.store.messages.message_row(mid)
        except NotFound:
            return None
        if not self.rt.store.channels.can_view(row["channel_id"], uid):
            return None
        if row["server_id"] is None:
            return row if perm == "ADD_REACTION" else None
        return row if self.rt.store.members.has_perm(row["server_id"], uid, perm) else None

    async def _on_message_react(self, sid: str, data: Any = None) -> None:
        """``message:react {messagePublicId, emoji}``: toggle the caller's reaction, then send the
        full snapshot ``message:reaction {messagePublicId, reactions}`` to the channel room."""
        uid = self.rt.sessions.get(sid)
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
        added = self.rt.store.messages.toggle_reaction(row["id"], emoji, uid)
        await self.rt.emit(endpoints.ON_MESSAGE_REACTION, {"messagePublicId": row["id"], "reactions": self.rt.store.messages.reactions(row["id"])},
                           channel_room(row["channel_id"]))
        return added

    async def _on_reaction_clear(self, sid: str, data: Any = None) -> None:
        """``message:reaction_clear {messagePublicId}`` (MANAGE_MESSAGES): remove every reaction,
        broadcast ``message:reaction_clear {messagePublicId}``."""
        uid = self.rt.sessions.get(sid)
        if uid is None or not isinstance(data, dict):
            return
        row = self._reactable(uid, data.get("messagePublicId"), "MANAGE_MESSAGES")
        if row is None:
            return
        await self.clear_reactions(row)

    async def clear_reactions(self, row: Any) -> None:
        """Remove every reaction of a message and broadcast ``message:reaction_clear``."""
        self.rt.store.messages.clear_reactions(row["id"])
        await self.rt.emit(endpoints.ON_MESSAGE_REACTION_CLEAR, {"messagePublicId": row["id"]}, channel_room(row["channel_id"]))

    async def _typing(self, sid: str, data: Any, event: str) -> None:
        uid = self.rt.sessions.get(sid)
        if uid is None or not isinstance(data, str) or not self.rt.store.channels.can_view(data, uid):
            return
        user = self.rt.store.users.user(uid)
        await self.rt.emit(event, {"channelPublicId": data, "userPublicId": uid, "userName": user["name"]},
                           channel_room(data), skip=[sid])

    async def typing_as(self, uid: str, cid: str, *, stop: bool) -> None:
        """Control plane: ``typing:start`` (``typing:stop`` when ``stop``) as a user's socket
        would send it, to the channel's room (the user's own sockets included: none of them sent it).

        Raises:
            NotFound: Unknown user or channel. Forbidden: The user may not view the channel.
        """
        user = self.rt.store.users.user(uid)
        self.rt.store.channels.channel_row(cid)
        if not self.rt.store.channels.can_view(cid, uid):
            raise Forbidden("channels.errors.missing_permission")
        await self.rt.emit(endpoints.ON_TYPING_STOP if stop else endpoints.ON_TYPING_START,
                           {"channelPublicId": cid, "userPublicId": uid, "userName": user["name"]}, channel_room(cid))

    async def _on_typing_start(self, sid: str, data: Any = None) -> None:
        await self._typing(sid, data, endpoints.ON_TYPING_START)

    async def _on_typing_stop(self, sid: str, data: Any = None) -> None:
        await self._typing(sid, data, endpoints.ON_TYPING_STOP)
