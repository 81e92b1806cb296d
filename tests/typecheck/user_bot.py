"""A bot author's script, type-checked with ``mypy --strict`` against the installed package.

It is checked from a directory outside the checkout, so mypy can only find
``service_client`` through the installation (the editable install of the
README, or a wheel); see ``tests/test_packaging.py``.
"""

from __future__ import annotations

from datetime import datetime

from service_client import (
    Client,
    CommandContext,
    CommandDispatcher,
    CommandError,
    Member,
    Message,
    Permissions,
    ServiceAPIError,
)


def build(token: str) -> Client:
    """A client with one command and one listener."""
    client = Client(base_url="http://127.0.0.1:1/api/v2", socket_url="http://127.0.0.1:1")
    commands = CommandDispatcher(client, prefix="!")

    @commands.command(requires=Permissions.KICK_MEMBERS, cooldown=5.0)
    def warn(ctx: CommandContext, user_id: str, *reason: str) -> None:
        member: Member | None = ctx.member
        sent: Message = ctx.reply(f"{user_id} warned by {member.display_name if member else '?'}")
        print(sent.id, " ".join(reason))

    @client.on("message_create")
    def on_message(message: Message) -> None:
        created: datetime | None = message.created_at
        print(message.content, created)

    @client.on("error")
    def on_error(error: BaseException) -> None:
        if isinstance(error, CommandError):
            print(error.command_name, error.context)
        elif isinstance(error, ServiceAPIError):
            status: int = error.status
            print(status)

    uptime: int | None = client.uptime
    print(uptime, token[:0])
    return client
