"""Listeners and ``wait_for`` results that do not match their events: ``mypy --strict`` must
report each line marked ``# error: <code>``, and nothing else.

Checked by ``tests/test_event_typing.py`` together with ``events_ok.py``.
"""

from __future__ import annotations

from service_client import Client, Guild, Member, Message
from service_client.fleet import FleetWorker


def build(client: Client) -> None:
    """Listener parameters that the events' arguments do not fit."""

    @client.on("message_create")  # error: type-var
    def wrong_type(message: str) -> None:
        print(message)

    @client.on("guild_update")  # error: type-var
    def too_narrow(guild: Guild) -> None:  # the event may carry the raw payload
        print(guild.name)

    @client.on("message_create")
    def kept(message: Message) -> None:
        print(message)

    kept("not a message")  # error: arg-type

    def one_argument(member: Member) -> None:
        print(member)

    client.on("message_reaction_add", one_argument)  # error: call-overload
    client.once("guild_member_add", lambda member: member.nonexistent)  # error: call-overload
    client.on("mesage_create", print)  # error: call-overload
    client.dispatch("ticket_opened")  # error: arg-type
    client.dispatch("message_create")  # error: arg-type

    @client.on("command_error")  # error: type-var
    def like_discord_py(ctx: object, error: Exception) -> None:  # the context is error.context here
        print(ctx, error)


def wait(client: Client) -> None:
    """``wait_for`` results used as something they are not."""
    count: int = client.wait_for("message_create")  # error: assignment
    message: Message = client.wait_for("guild_create")  # error: assignment
    info, user = client.wait_for("message_reaction_add")  # error: misc
    print(count, message, info, user)
    client.wait_for("message_create", check=lambda m: m.nonexistent)  # error: call-overload
    client.off("mesage_create")  # error: arg-type


def worker(worker: FleetWorker) -> None:
    """A fleet worker's listeners are checked as a client's; what it does not offer is the client's."""

    @worker.on("message_create")  # error: type-var
    def wrong_type(message: str) -> None:
        print(message)

    count: int = worker.wait_for("message_create")  # error: assignment
    worker.add_cog(object())  # error: attr-defined
    not_a_client: Client = worker  # error: assignment
    print(count, not_a_client)
