"""Presence follows the sockets: a user with no chosen status is online while connected.

A bot that logs in never chooses a status, yet a person looking at the emulator's page expects
to see it online while it runs, and offline once it stopped.
"""

from __future__ import annotations

import threading
import time

import requests

from service_client.emulator import Emulator

from .fuzzkit import Conn


def _status_seen_by(world, token: str, user_id: str) -> str:
    """The status of ``user_id`` as ``GET /servers/{sid}/members`` shows it to ``token``'s user."""
    answer = requests.get(f"{world.emulator.base_url}/servers/{world.server['publicId']}/members",
                          headers={"Authorization": f"Bearer {token}"}, timeout=10)
    assert answer.status_code == 200, answer.text
    return next(m["user"]["status"] for m in answer.json() if m["userId"] == user_id)


def _server_counts_connections(emulator, count: int, timeout: float = 10.0) -> None:
    """Wait until the emulator counts ``count`` sockets. A socket's disconnect sends nothing to
    anyone else, so there is no event to await: the count is read every 10 ms, at most
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while emulator.connection_count() != count:
        assert time.monotonic() < deadline, f"the emulator did not count {count} connections in {timeout} s"
        threading.Event().wait(0.01)


def _is_presence_of(user_id: str, status: str):
    return lambda data: data == {"userPublicId": user_id, "status": status}


def test_a_bot_is_online_while_its_socket_is_connected(world, conns):
    bot_id = world.bot["publicId"]
    human = conns(world.human_token, world.human["publicId"])
    assert _status_seen_by(world, world.human_token, bot_id) == "offline"
    bot = conns(world.bot_token, bot_id)
    human.wait("presence:update", check=_is_presence_of(bot_id, "online"))
    assert _status_seen_by(world, world.human_token, bot_id) == "online"
    assert world.emulator.user(bot_id)["status"] == "online"
    bot.close()
    human.wait("presence:update", check=_is_presence_of(bot_id, "offline"))
    assert _status_seen_by(world, world.human_token, bot_id) == "offline"


def test_the_user_goes_offline_only_when_its_last_socket_goes(world, conns):
    bot_id = world.bot["publicId"]
    human = conns(world.human_token, world.human["publicId"])
    first = conns(world.bot_token, bot_id)
    human.wait("presence:update", check=_is_presence_of(bot_id, "online"))
    second = conns(world.bot_token, bot_id)
    second.probe()                                     # connected and served
    first.close()
    _server_counts_connections(world.emulator, 2)      # the server has handled first's disconnect
    assert [d for e, d in human.before_marker() if e == "presence:update" and d["userPublicId"] == bot_id] == []
    assert world.emulator.user(bot_id)["status"] == "online"
    second.close()
    human.wait("presence:update", check=_is_presence_of(bot_id, "offline"))


def test_a_status_the_user_chose_stays_when_it_disconnects(world, conns):
    bot_id = world.bot["publicId"]
    human = conns(world.human_token, world.human["publicId"])
    bot = conns(world.bot_token, bot_id)
    human.wait("presence:update", check=_is_presence_of(bot_id, "online"))
    bot.emit("presence:update", {"status": "dnd"})
    human.wait("presence:update", check=_is_presence_of(bot_id, "dnd"))
    bot.close()
    _server_counts_connections(world.emulator, 1)
    assert [d for e, d in human.before_marker() if e == "presence:update" and d["userPublicId"] == bot_id] == []
    assert world.emulator.user(bot_id)["status"] == "dnd"


def test_a_restart_keeping_state_leaves_nobody_online():
    emu = Emulator().start()
    try:
        bot = emu.create_user("kept", bot=True)
        bot_id = bot["user"]["publicId"]
        conn = Conn(emu, bot["token"], bot_id)
        try:
            conn.probe()                                  # connected, and shown online meanwhile
            assert emu.user(bot_id)["status"] == "online"
            emu.restart()                                                         # every socket is gone
            assert conn.closed.wait(5)
            assert emu.user(bot_id)["status"] == "offline"
        finally:
            conn.close()
    finally:
        emu.stop()
