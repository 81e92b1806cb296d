"""``CommandContext``: one command invocation, the first argument of a command's ``execute``.

A :class:`~service_client.dispatcher.CommandDispatcher` builds one per
command message and calls ``execute(ctx, *args, **rest)`` with the converted
arguments.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client
    from ..commands import Command
    from ..models.channel import Channel
    from ..models.embed import EmbedBuilder
    from ..models.guild import Guild
    from ..models.member import Member
    from ..models.message import Message
    from ..models.user import User
    from .core import CommandDispatcher

__all__ = ["CommandContext"]


class CommandContext:
    """One command invocation: the message, the command, the words typed.

    Passed as the first argument of ``execute``. Not shared between
    invocations; its methods are as thread-safe as the client's.

    Attributes:
        message: The :class:`Message` that carried the command.
        command: The :class:`Command` being run (None for the built-in help).
        args: The text read for each argument, as typed and before
            conversion, in order: a word per positional parameter (quotes
            removed), each word of ``*name``, the rest of the line for a
            keyword-only parameter. For the built-in help, its words.
        prefix: The prefix the message started with.
        invoked_with: The command word as typed (a name or an alias).
        dispatcher: The :class:`CommandDispatcher` that runs the command.
    """

    __slots__ = ("args", "command", "dispatcher", "invoked_with", "message", "prefix")

    def __init__(
        self,
        dispatcher: CommandDispatcher,
        message: Message,
        command: Command | None,
        *,
        args: Sequence[str] = (),
        prefix: str = "",
        invoked_with: str = "",
    ) -> None:
        self.dispatcher = dispatcher
        self.message = message
        self.command = command
        self.args = list(args)
        self.prefix = prefix
        self.invoked_with = invoked_with

    @property
    def client(self) -> Client:
        """The client the dispatcher listens on."""
        return self.dispatcher.client

    @property
    def author(self) -> User:
        """The message's author.

        Raises:
            LookupError: The message has no author (a system message: the
                dispatcher never runs a command for one, so only a context
                made by hand can raise this).
        """
        author = self.message.author
        if author is None:
            raise LookupError(f"message {self.message.id} has no author (a system message)")
        return author

    @property
    def member(self) -> Member | None:
        """The author's :class:`Member` in the message's server; None in a DM.

        May block on a REST request when the member is not cached: see
        :attr:`Message.member`.
        """
        return self.message.member

    @property
    def channel_id(self) -> str:
        """The channel the command was written in (a DM channel's id in a DM; then
        :attr:`server_id` is None)."""
        return self.message.channel_id

    @property
    def server_id(self) -> str | None:
        """The server the command was written in; None in a DM."""
        return self.message.server_id

    @property
    def channel(self) -> Channel | None:
        """The command's channel, as :attr:`Message.channel <service_client.Message.channel>`
        (its server's channels are listed the first time one is needed); None for a DM channel
        the client has not cached."""
        return self.message.channel

    @property
    def guild(self) -> Guild | None:
        """The cached server, or None (always None in a DM)."""
        return self.message.guild

    def reply(
        self,
        options: str | EmbedBuilder | Any = None,
        *,
        content: str | None = None,
        embeds: Sequence[Any] | None = None,
    ) -> Message:
        """Reply to the command's message; same arguments and errors as :meth:`Message.reply`.

        Blocks until the service echoes the reply (10 s at most).

        Returns:
            The sent :class:`Message`.

        Raises:
            EmptyMessageError: No content and no embed (``"send_message requires non-empty
                content or at least one embed."``; a ServiceAuthError and a ValueError).
            ValueError: Only whitespace and no embed, or over the message limits; nothing is sent.
            ServiceAuthError: The socket is not connected.
            TimeoutError: No echo within 10 s.
        """
        return self.message.reply(options, content=content, embeds=embeds)

    def send(
        self,
        options: str | EmbedBuilder | Any = None,
        *,
        content: str | None = None,
        embeds: Sequence[Any] | None = None,
    ) -> Message:
        """Send a message to the command's channel (not as a reply).

        Same arguments, result and errors as :meth:`Client.send_message`.

        Raises:
            EmptyMessageError: No content and no embed (``"send_message requires non-empty
                content or at least one embed."``; a ServiceAuthError and a ValueError).
            ValueError: Only whitespace and no embed, or over the message limits; nothing is sent.
            ServiceAuthError: The socket is not connected.
            ChannelAccessError: The bot cannot send there.
            TimeoutError: No echo within 10 s.
        """
        return self.client.send_message(self.message.channel_id, options, content=content, embeds=embeds)

    def __repr__(self) -> str:
        return (
            f"<CommandContext invoked_with={self.invoked_with!r} args={self.args!r} "
            f"author={self.author!r} channel_id={self.channel_id!r}>"
        )
