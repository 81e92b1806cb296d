"""Guild cache reconciliation after ``reconnect`` (issue 6): evictions, additions, ordering."""

from __future__ import annotations

import threading
from typing import Any

from .conftest import Recorder, server_the_bot_joined, wait_until


def test_servers_left_and_joined_offline_are_reconciled_before_later_events(world, emulator, bot):
    bot_id, human_id = world.bot["publicId"], world.human["publicId"]
    stay = world.server["publicId"]
    leave = server_the_bot_joined(emulator, bot, world, "Leave", "l")  # its guild_create is behind us
    join = emulator.create_server("Join", human_id, channels=[{"name": "j", "type": "TEXT"}])["server"]["publicId"]
    wait_until(lambda: leave in bot.guilds.cache)
    wait_until(lambda: (leave, bot_id) in bot.members.cache)
    assert join not in bot.guilds.cache

    recorder = Recorder(bot)
    seen: list[tuple[str, Any]] = []
    first_message = threading.Event()

    @bot.on("message_create")
    def on_message(message):
        seen.append(("message_create", (set(bot.guilds.cache), list(recorder.names()))))
        first_message.set()

    emulator.set_outage(30)
    emulator.drop_transport(bot_id)
    recorder.wait("disconnect")
    emulator.remove_member(leave, bot_id)  # both happen while the bot is offline: no event reaches it
    emulator.add_member(join, bot_id)
    emulator.clear_requests()
    emulator.add_fault("GET", "/servers", delay_ms=400)  # a slow reconcile: later events must wait for it
    emulator.set_outage(None)
    recorder.wait("reconnect")
    emulator.post_message(world.general["publicId"], human_id, "right after the reconnect")

    recorder.wait("guild_create")
    recorder.wait("guild_delete")
    assert first_message.wait(10)
    # The cache is exact and the announcements came first.
    assert set(bot.guilds.cache) == {stay, join}
    assert (join, bot_id) in bot.members.cache and (leave, bot_id) not in bot.members.cache
    guilds_at_message, events_at_message = seen[0][1]
    assert guilds_at_message == {stay, join}
    assert events_at_message.index("reconnect") < events_at_message.index("guild_delete")
    assert "guild_create" in events_at_message
    created = recorder.args("guild_create")[0][0]
    deleted = recorder.args("guild_delete")[0][0]
    assert created.id == join and created is bot.guilds.cache[join]
    assert deleted.id == leave
    # One GET /servers plus the bot-member fetch of the new server only.
    paths = [(r["method"], r["path"]) for r in emulator.requests()]
    assert paths.count(("GET", "/servers")) == 1
    member_fetches = [p for m, p in paths if "/members/" in p]
    assert member_fetches == [f"/servers/{join}/members/{bot_id}"]


def test_failed_reconcile_changes_nothing_and_events_still_flow(world, emulator, bot):
    bot_id = world.bot["publicId"]
    recorder = Recorder(bot)
    before = set(bot.guilds.cache)
    got = threading.Event()
    bot.on("message_create", lambda m: got.set())
    emulator.add_fault("GET", "/servers", status=500, count=None)
    emulator.drop_transport(bot_id)
    recorder.wait("reconnect")
    emulator.post_message(world.general["publicId"], world.human["publicId"], "still here")
    assert got.wait(10)
    assert set(bot.guilds.cache) == before
    emulator.clear_faults()
