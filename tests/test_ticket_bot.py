"""``samples/ticket_bot.py`` end to end against the emulator, over real sockets.

``!ticket`` opens a private channel that only the opener, the "Staff" role and the bot may view;
another member can neither see it nor read it over REST, and receives none of its events on
the socket; ``!close`` deletes it.
"""

from __future__ import annotations

import importlib.util
import pathlib
import queue
import re
from collections.abc import Callable
from typing import Any

import pytest
from emulator.fuzzkit import RawSocket

from service_client import Client, Permissions, ServiceAPIError

ROOT = pathlib.Path(__file__).resolve().parent.parent
TIMEOUT = 10.0


def load_sample() -> Any:
    spec = importlib.util.spec_from_file_location("ticket_bot_sample", ROOT / "samples" / "ticket_bot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Inbox:
    """The ``message_create`` events of one client (channels are dispatched concurrently, so
    messages of different channels may come in any order: :meth:`expect` looks at all of them)."""

    def __init__(self, client: Client) -> None:
        self.items: queue.Queue[Any] = queue.Queue()
        self.seen: list[Any] = []
        client.on("message_create", self.items.put)

    def expect(self, check: Callable[[Any], bool], what: str) -> Any:
        while True:
            for message in self.seen:
                if check(message):
                    return message
            try:
                self.seen.append(self.items.get(timeout=TIMEOUT))
            except queue.Empty:
                raise AssertionError(f"{what}: not received within {TIMEOUT} s") from None


@pytest.fixture
def setup(world: Any, make_client: Callable[..., Client]) -> Any:
    emu = world.emulator
    sid = world.server["publicId"]
    botrole = emu.create_role(sid, "ticket bot", int(Permissions.MANAGE_CHANNELS))["role"]["publicId"]
    emu.update_member(sid, world.bot["publicId"], roles=[botrole])
    staff = emu.create_role(sid, "Staff", 0)["role"]["publicId"]
    users = {name: emu.create_user(name) for name in ("carol", "dave", "eve")}
    for name, user in users.items():
        emu.add_member(sid, user["user"]["publicId"], role_ids=[staff] if name == "dave" else [])
    bot = load_sample().build_client(base_url=emu.base_url, socket_url=emu.socket_url, reconnect_base=0.05)
    try:
        bot.login(world.bot_token, timeout=15)
        clients = {}
        for name, user in users.items():
            clients[name] = make_client(workers=2)
            clients[name].login(user["token"], timeout=15)
        ns = type("Setup", (), {})()
        ns.emu, ns.world, ns.sid, ns.staff, ns.bot, ns.users, ns.clients = emu, world, sid, staff, bot, users, clients
        yield ns
    finally:
        bot.destroy()


def forbidden(call: Callable[[], Any]) -> bool:
    try:
        call()
    except ServiceAPIError as exc:
        return exc.status in (403, 404)
    return False


def test_ticket_opens_a_private_channel_and_close_deletes_it(setup: Any) -> None:
    emu, sid, gid = setup.emu, setup.sid, setup.world.general["publicId"]
    carol, dave, eve = (setup.clients[n] for n in ("carol", "dave", "eve"))
    cu, eu = (setup.users[n]["user"]["publicId"] for n in ("carol", "eve"))
    bot_id = setup.world.bot["publicId"]
    eve_socket = RawSocket(emu, setup.users["eve"]["token"])
    try:
        carol_inbox, dave_inbox = Inbox(carol), Inbox(dave)
        carol.send_message(gid, "!ticket")
        reply = carol_inbox.expect(lambda m: m.author.id == bot_id and m.channel_id == gid, "the bot's reply")
        match = re.fullmatch(r"Ticket opened: <#(\d+)>", reply.content)
        assert match, reply.content
        ticket = match.group(1)
        welcome = carol_inbox.expect(lambda m: m.channel_id == ticket, "the welcome message")
        assert welcome.author.id == bot_id and f"<@{cu}>" in welcome.content
        assert dave_inbox.expect(lambda m: m.channel_id == ticket, "staff sees the ticket").id == welcome.id

        # the channel and its overwrites on the service
        record = carol.channels.fetch(ticket)
        assert record.name == "ticket-carol" and record.is_private
        everyone = next(r for r in emu.member(sid, cu)["roles"] if r["name"] == "@everyone")["publicId"]
        got = {(o["type"], o["targetId"]): (int(o["allow"]), int(o["deny"])) for o in emu.overrides(ticket)}
        access = int(Permissions.VIEW_CHANNELS | Permissions.SEND_MESSAGES)
        assert got == {("MEMBER", bot_id): (access, 0), ("MEMBER", cu): (access, 0),
                       ("ROLE", setup.staff): (access, 0), ("ROLE", everyone): (0, int(Permissions.VIEW_CHANNELS))}

        # eve: not listed, not readable over REST ...
        assert ticket not in {c.id for c in eve.channels.fetch_for_guild(sid, cache=False)}
        assert ticket in {c.id for c in dave.channels.fetch_for_guild(sid, cache=False)}
        assert forbidden(lambda: eve.channels.fetch(ticket))
        assert forbidden(lambda: eve.api_call(f"/chat/{ticket}?limit=50"))
        assert forbidden(lambda: eve.search_messages(ticket, "ticket"))
        assert forbidden(lambda: eve.api_call(f"/chat/{ticket}/pins"))
        eve_socket.emit("message:send", {"channelPublicId": ticket, "content": "let me in", "embeds": [],
                                         "nonce": "eve"})

        # ... and nothing of it on her socket: staff talk arrives at carol, then a probe round trip
        # on eve's ordered socket proves that anything sent to her before has arrived
        dave.send_message(ticket, "staff here")
        carol_inbox.expect(lambda m: m.content == "staff here", "staff's answer")
        eve_socket.probe()
        leaked = [(e, d) for e, d in eve_socket.drain() if isinstance(d, dict) and d.get("channelPublicId") == ticket]
        assert leaked == []
        assert ticket not in emu.channel_ids_of_rooms(eu)
        assert "let me in" not in [m["content"] for m in emu.messages(ticket)]

        # !close from eve elsewhere is refused; from carol inside the ticket it deletes it
        eve_inbox = Inbox(eve)
        eve.send_message(gid, "!close")
        assert eve_inbox.expect(lambda m: m.author.id == bot_id, "refusal").content == "!close only works inside a ticket."
        assert carol.channels.fetch(ticket).id == ticket
        updates: queue.Queue[Any] = queue.Queue()
        carol.on("guild_channels_update", updates.put)
        carol.send_message(ticket, "!close")
        while not forbidden(lambda: carol.channels.fetch(ticket)):
            updates.get(timeout=TIMEOUT)
        assert ticket not in {c.id for c in carol.channels.fetch_for_guild(sid, cache=False)}
        assert emu.overrides(ticket) == []
    finally:
        eve_socket.close()
