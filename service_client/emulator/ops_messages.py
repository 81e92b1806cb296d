"""Operations on messages: messages posted by the emulator, bulk deletes and pins."""

from __future__ import annotations

from typing import Any

from .. import endpoints
from .._message_rules import CONTENT_MAX_CHARS, RULES, is_blank, js_length
from .ops_checks import (
    need_str,
)
from .realtime import MAX_ID_CHARS, Realtime, channel_room
from .store import (
    BadRequest,
    NotFound,
)
from .store.channels import ChannelRepository
from .store.messages import MessageRepository
from .store.users import UserRepository


class MessageOps:
    """Messages posted by the emulator, bulk deletes and pins.

    Every method is a coroutine to run on the emulator's loop; each change sends the events the
    service sends for it (see :class:`~.ops.Operations`).

    Args:
        users: The users repository.
        channels: The channels repository.
        messages: The messages repository.
        realtime: The socket.io side (rooms, emits).
    """

    def __init__(self, *, users: UserRepository, channels: ChannelRepository, messages: MessageRepository,
                 realtime: Realtime) -> None:
        self.users = users
        self.channels = channels
        self.messages = messages
        self.rt = realtime

    async def post_message(self, cid: Any, author_id: Any, content: Any, embeds: Any = None) -> dict[str, Any]:
        """Store and deliver a message as if ``author_id`` had sent it (no permission check).

        Returns:
            ``{"message": Message}``.

        Raises:
            BadRequest: Bad types, or a message that breaks the message rules (empty content
                without embeds; in limit mode, over the limits). NotFound: Unknown channel or author.
        """
        need_str(cid, "channelId")
        need_str(author_id, "authorId")
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise BadRequest("content must be a string")
        embeds = [] if embeds is None else embeds
        if not isinstance(embeds, list) or not all(isinstance(e, dict) for e in embeds):
            raise BadRequest("embeds must be a list of objects")
        error = self.rt.message_events.check_content(content, embeds)
        if error is not None:
            raise BadRequest(f"{error}: {RULES[error]}" if error in RULES else error)
        self.users.user_row(author_id)
        records = self.messages.insert_messages(cid, author_id, [content], embeds)
        await self.rt.message_events.deliver_messages(records)
        return {"message": records[0]}

    async def post_messages(self, cid: Any, author_id: Any, contents: Any) -> int:
        """Store many messages in one transaction and deliver them in order; return the count."""
        need_str(cid, "channelId")
        need_str(author_id, "authorId")
        if not isinstance(contents, list) or not all(isinstance(c, str) and not is_blank(c) for c in contents):
            raise BadRequest("contents must be a list of non-empty strings")
        if self.rt.limits:
            for index, content in enumerate(contents):
                if js_length(content) > CONTENT_MAX_CHARS:
                    raise BadRequest(f"contents[{index}]: messages.errors.too_long: {RULES['messages.errors.too_long']}")
        self.users.user_row(author_id)
        ids, escaped, shared = self.messages.insert_bulk(cid, author_id, contents)
        await self.rt.message_events.deliver_bulk(cid, ids, escaped, shared)
        return len(ids)

    async def bulk_delete(self, cid: str, ids: Any) -> int:
        """Delete up to 100 messages of a channel; one ``message:deleted`` each. Ids that are not
        messages of this channel are skipped. Returns how many were deleted.

        Raises:
            BadRequest: ``ids`` is not a list of 1 to 100 strings.
        """
        if not isinstance(ids, list) or not 1 <= len(ids) <= 100 or \
                not all(isinstance(i, str) and 0 < len(i) <= MAX_ID_CHARS for i in ids):
            raise BadRequest("messageIds must be a list of 1 to 100 message ids")
        chan = self.channels.channel_row(cid)
        found = []
        for mid in dict.fromkeys(ids):
            try:
                row = self.messages.message_row(mid)
            except NotFound:
                continue
            if row["channel_id"] == cid:
                found.append(mid)
        self.messages.delete_messages(found)
        for mid in found:
            await self.rt.emit(endpoints.ON_MESSAGE_DELETED, {"publicId": mid, "messagePublicId": mid, "channelPublicId": cid,
                                                              "serverPublicId": chan["server_id"]}, channel_room(cid))
        return len(found)

    async def set_pinned(self, cid: str, mid: str, pinned: bool) -> None:
        """Pin or unpin a message of a channel; ``message:pinned {messagePublicId, channelPublicId,
        pinned}`` to the channel room when that changed something.

        Raises:
            NotFound: No such message in this channel.
        """
        row = self.messages.message_row(mid)
        if row["channel_id"] != cid:
            raise NotFound("messages.errors.not_found")
        if self.messages.set_pinned(mid, pinned):
            await self.rt.emit(endpoints.ON_MESSAGE_PINNED, {"messagePublicId": mid, "channelPublicId": cid, "pinned": pinned},
                               channel_room(cid))
