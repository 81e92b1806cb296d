"""Listeners and ``wait_for`` results a bot author writes correctly: ``mypy --strict`` must pass.

Checked by ``tests/test_event_typing.py`` from a directory outside the checkout, against the
installed package, together with ``events_wrong.py``.
"""

from __future__ import annotations

from typing import Any

from typing_extensions import assert_type

from service_client import Client, Guild, Member, Message, Role, User
from service_client.events.catalog import CustomEvent, EventName
from service_client.fleet import FleetWorker


def build() -> Client:
    """A client whose listeners match their events."""
    client = Client(base_url="http://127.0.0.1:1/api/v2", socket_url="http://127.0.0.1:1")

    @client.on("message_create")
    def on_message(message: Message) -> None:
        print(message.content)

    @client.once("ready")
    def on_ready() -> None:
        print("ready")

    @client.on("error")
    def on_error(error: BaseException) -> None:  # a wider parameter type is fine
        print(error)

    def on_reaction(info: dict[str, Any], user: User, message_id: str) -> None:
        print(info["emoji"], user.id, message_id)

    client.on("message_reaction_add", on_reaction)

    @client.on("guild_member_update")
    def on_member(member: Member | dict[str, Any]) -> None:
        print(member.display_name if isinstance(member, Member) else member["memberPublicId"])

    @client.on("role_delete")
    def on_role_delete(role: Role | str) -> None:
        print(role)

    @client.on("guild_create")
    def on_guild(guild: Guild) -> None:
        print(guild.name)

    client.on("disconnect", lambda reason: print(reason.upper()))
    client.on("presence_update", lambda data: print(data.get("status")))

    return client


def wait(client: Client) -> None:
    """``wait_for`` results have the event's types."""
    message = client.wait_for("message_create", check=lambda m: m.author is not None, timeout=5)
    assert_type(message, Message)
    print(message.content.strip())
    info, user, message_id = client.wait_for("message_reaction_add", timeout=5)
    assert_type(user, User)
    print(info, message_id.upper())
    reason = client.wait_for("disconnect")
    assert_type(reason, str)
    client.wait_for("reconnect", timeout=1)
    guild = client.wait_for("guild_update")
    assert_type(guild, "Guild | dict[str, Any]")


def custom(client: Client) -> None:
    """Custom events: registered, then any listener signature."""
    opened: CustomEvent = client.register_event("ticket_opened")

    @client.on(opened)
    def announce(channel_id: str, opener: str) -> None:
        print(opener, channel_id)

    client.dispatch(opened, "c1", "alice", key="c1")
    print(client.wait_for(opened, timeout=1))


def dynamic(client: Client, names: list[EventName]) -> None:
    """An event name held in a variable is typed with ``EventName``."""
    for name in names:
        client.on(name, lambda *args: print(args))
        client.off(name)


def worker_listeners(worker: FleetWorker) -> None:
    """A fleet worker offers its client's listening API with the same types."""

    @worker.on("message_create")
    def on_message(message: Message) -> None:
        print(message.content)

    @worker.event
    def message_create(message: Message) -> None:
        print(message.content)

    message = worker.wait_for("message_create", timeout=1)
    assert_type(message, Message)
    worker.off("message_create", on_message)
    client: Client = worker.client
    print(client, worker.guilds.cache, worker.user)
