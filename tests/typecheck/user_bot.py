"""A bot author's script, type-checked with ``mypy --strict`` against the installed package.

It is checked from a directory outside the checkout, so mypy can only find
``service_client`` through the installation (the editable install of the
README, or a wheel); see ``tests/test_packaging.py``.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta

from service_client import (
    BucketType,
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

    @commands.command(cooldown=86400, cooldown_per=BucketType.MEMBER, max_concurrency=1)
    def daily(ctx: CommandContext) -> None:
        now: datetime = ctx.client.clock.utcnow()
        ctx.reply(f"paid at {now + timedelta(0):%H:%M}")

    @client.every(time=[time(9, 0)], start_on_ready=True)
    def morning() -> None:
        client.wait_until_ready(timeout=5.0)

    @morning.before_loop
    def before_morning() -> None:
        seconds: float = client.clock.now()
        print(seconds)

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
