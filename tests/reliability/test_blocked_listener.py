"""A listener that blocks while its channel keeps receiving: the client's bound on the events waiting.

Over the socket, as a bot sees it: past ``Client(max_queued_events=...)`` the
blocked channel's newest events are dropped, counted in
``client.dropped_events`` and logged; the other channel, sends (the nonce's
echo) and ``wait_for`` keep working meanwhile, and once released the listener
gets the events that were kept, in order.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any

import pytest

from service_client import Client


def _dropped_counts(caplog: pytest.LogCaptureFixture) -> list[int]:
    counts = []
    for record in caplog.records:
        match = re.match(r"dropped (\d+) event\(s\)", record.getMessage())
        if record.name == "service_client.events" and match:
            assert record.levelno == logging.WARNING
            counts.append(int(match[1]))
    return counts


@pytest.mark.parametrize(("value", "error"), [(0, ValueError), (True, TypeError), ("10", TypeError)])
def test_max_queued_events_is_checked_at_construction(value, error):
    with pytest.raises(error, match="max_queued_events"):
        Client(base_url="http://127.0.0.1:9/v2", socket_url="http://127.0.0.1:9", max_queued_events=value)


def test_a_blocked_channel_drops_its_newest_events_and_nothing_else_stops(world, emulator, make_client, caplog):
    caplog.set_level(logging.WARNING, logger="service_client.events")
    bot: Client = make_client(workers=2, max_queued_events=200)  # 100 events per channel
    bot.login(world.bot_token, timeout=15)
    human_id = world.human["publicId"]
    slow = world.general["publicId"]
    other = emulator.create_channel(world.server["publicId"], "other")["publicId"]
    release = threading.Event()
    blocked = threading.Event()
    lock = threading.Lock()
    got: dict[str, list[str]] = {slow: [], other: []}
    other_done = threading.Event()
    slow_done = threading.Event()

    @bot.on("message_create")
    def on_message(message: Any) -> None:
        if message.author is None or message.author.bot:
            return
        with lock:
            got[message.channel_id].append(message.content)
        if message.content == "block":
            blocked.set()
            assert release.wait(30)
        if message.channel_id == other and len(got[other]) == 50:
            other_done.set()
        if message.channel_id == slow and len(got[slow]) == 100:
            slow_done.set()

    try:
        emulator.post_message(slow, human_id, "block")
        assert blocked.wait(10)
        emulator.post_messages(slow, human_id, [f"m {i}" for i in range(300)])
        emulator.post_messages(other, human_id, [f"o {i}" for i in range(50)])
        assert other_done.wait(15)  # the other channel is not starved
        assert got[other] == [f"o {i}" for i in range(50)]
        assert bot.dropped_events == 201  # 100 of the slow channel kept, the running one included
        assert _dropped_counts(caplog)  # logged at the first drop

        # The reader still resolves a send's echo and wait_for, even for an event the listeners lost.
        assert bot.send_message(other, "replies still work").content == "replies still work"
        pings = 0
        result: list[Any] = []
        waiter = threading.Thread(target=lambda: result.append(
            bot.wait_for("message_create", check=lambda m: m.content == "ping", timeout=15)))
        waiter.start()
        while not result and pings < 50:
            emulator.post_message(slow, human_id, "ping")  # until the waiter has registered
            pings += 1
            waiter.join(0.2)
        assert result and result[0].content == "ping" and result[0].channel_id == slow
        bot.send_message(other, "after the pings")  # its echo comes after every ping
        assert bot.dropped_events == 201 + pings

        release.set()
        assert slow_done.wait(15)
        assert got[slow] == ["block", *(f"m {i}" for i in range(99))]
    finally:
        release.set()
    dropped = bot.dropped_events
    bot.destroy()
    assert sum(_dropped_counts(caplog)) == dropped  # every drop is in a line by the end
    assert got[slow] == ["block", *(f"m {i}" for i in range(99))]  # nothing else reached it
