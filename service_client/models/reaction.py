"""``ReactionEvent``: one reaction added to or removed from a message, with its context."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ._port import State
    from .channel import Channel
    from .guild import Guild
    from .member import Member
    from .message import Message
    from .user import User

__all__ = ["ReactionEvent"]


class ReactionEvent(dict[str, Any]):
    """One reaction added or removed: what ``message_reaction_add`` and
    ``message_reaction_remove`` listeners get first.

    As a dict it holds the keys ``emoji``, ``messagePublicId`` and ``count`` (the emoji's
    user count after the change). Its attributes carry the context: the message's channel
    and server, the member who reacted, and the message itself when the client still
    remembers it (always for the last 1,000 messages it received, and for up to 999 older
    ones, as they were received; the channel of the last 10,000 always, and of up to 9,999
    older ones). Where the cache does not know an object, its id is there and the
    object is None. Reading an attribute makes no request. Not thread-safe to mutate; safe to read from any thread.

    Attributes:
        emoji: The emoji (a unicode emoji or a custom emoji's text).
        count: How many users reacted with it after this change.
        added: True for a reaction added, False for one removed.
        message_id: The message's id.
        channel_id: Its channel's id, or None when the client never saw the message.
        server_id: Its server's id, or None in a DM or when the client never saw the message.
        user: The :class:`User` who reacted (the cached one, else one built from the
            event's id and name).
        message: The :class:`Message`, as the client received it (edits not applied),
            or None when it does not remember it.
    """

    __slots__ = ("_state", "added", "channel_id", "count", "emoji", "message", "message_id", "server_id", "user")

    _state: State
    emoji: str
    count: int
    added: bool
    message_id: str
    channel_id: str | None
    server_id: str | None
    user: User
    message: Message | None

    def __init__(self, state: State, *, emoji: str, count: int, added: bool, message_id: str, user: User,
                 message: Message | None, channel_id: str | None, server_id: str | None) -> None:
        """Build the event (the parsers of the socket events do)."""
        super().__init__(emoji=emoji, messagePublicId=message_id, count=count)
        self._state = state
        self.emoji = emoji
        self.count = count
        self.added = added
        self.message_id = message_id
        self.user = user
        self.message = message
        self.channel_id = channel_id
        self.server_id = server_id

    @property
    def user_id(self) -> str:
        """The id of the user who reacted."""
        return self.user.id

    @property
    def channel(self) -> Channel | None:
        """The channel of the message, as ``Message.channel`` (**may block** the first time a
        channel of its server is needed); None when unknown."""
        return self._state.channels.get_or_list(self.channel_id, self.server_id)

    @property
    def guild(self) -> Guild | None:
        """The cached server of the message, or None (a DM, or not cached)."""
        return None if self.server_id is None else self._state.guilds.cache.get(self.server_id)

    @property
    def member(self) -> Member | None:
        """The cached member who reacted, or None (a DM, or not cached: fetch it with
        ``guild.fetch_member(event.user_id)``)."""
        if self.server_id is None:
            return None
        return self._state.members.get(self.server_id, self.user.id)

    def __repr__(self) -> str:
        kind = "added" if self.added else "removed"
        return (f"<ReactionEvent {kind} emoji={self.emoji!r} message_id={self.message_id!r} "
                f"user_id={self.user.id!r} count={self.count}>")

    def __reduce__(self) -> Any:
        return (dict, (dict(self),))
