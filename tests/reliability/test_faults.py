"""Faults the client must survive against the emulator (issue 6), and destroy() during each of them.

Every test ends by checking that nothing is left behind: no library thread, no socket connection on
the emulator, no pending Future.
"""

from __future__ import annotations

import gc
import threading
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

from service_client import Client, RateLimitError, ServiceAPIError, ServiceError, ServiceTimeoutError
from service_client.emulator import Emulator

from .conftest import Recorder, answered, replying_bot, threads_gone, wait_until


def assert_nothing_left(client: Client, emulator: Any, *, allow: tuple[threading.Thread, ...] = ()) -> None:
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline and [t for t in threading.enumerate() if _ours(t, allow)]:
        time.sleep(0.01)
    assert [t.name for t in threading.enumerate() if _ours(t, allow)] == []
    assert client._connection.pending_sends() == 0 and client.voice._pending == {} and not client._rest._live
    assert client._gateway is None
    wait_until(lambda: emulator.connection_count() == 0, timeout=5)


def _ours(thread: threading.Thread, allow: tuple[threading.Thread, ...]) -> bool:
    return (
        thread.is_alive()
        and thread not in allow
        and thread.name.startswith("service_client-")
        and not thread.name.startswith("service_client-emulator")
    )


def timed_destroy(client: Client) -> None:
    started = time.monotonic()
    client.destroy()
    assert time.monotonic() - started < 1.5


# -- the emulator goes away -------------------------------------------------------------------


def test_emulator_stopped_and_restarted_on_the_same_port(tmp_path):
    emu = Emulator(db=str(tmp_path / "state.db")).start()
    client: Client | None = None
    try:
        human = emu.create_user("alice")["user"]
        bot_user = emu.create_user("pingbot", bot=True)
        created = emu.create_server("S", human["publicId"], channels=[{"name": "general", "type": "TEXT"}])
        emu.add_member(created["server"]["publicId"], bot_user["user"]["publicId"])
        channel = created["channels"][0]["publicId"]
        bot_id = bot_user["user"]["publicId"]
        client = Client(base_url=emu.base_url, socket_url=emu.socket_url, reconnect_base=0.05, reconnect_cap=0.3)
        client.login(bot_user["token"], timeout=15)
        recorder = Recorder(client)
        replying_bot(client)
        first = emu.post_message(channel, human["publicId"], "one")["message"]["publicId"]
        wait_until(lambda: first in answered(emu, channel, bot_id))
        port = emu.port

        emu.stop()
        recorder.wait("disconnect")
        started = time.monotonic()
        with pytest.raises(ServiceError):  # REST is down too: a network failure after the retries
            client.api_call("/auth/me", timeout_ms=500, max_retries=1)
        assert time.monotonic() - started < 5
        emu.start()
        assert emu.port == port
        recorder.wait("reconnect", timeout=10)
        second = emu.post_message(channel, human["publicId"], "two")["message"]["publicId"]
        wait_until(lambda: second in answered(emu, channel, bot_id))
        assert answered(emu, channel, bot_id) == {first: 1, second: 1}
        timed_destroy(client)
        assert threads_gone() == []
        wait_until(lambda: emu.connection_count() == 0, timeout=5)
    finally:
        if client is not None:
            client.destroy()
        emu.stop()


def test_destroy_while_the_emulator_is_down(tmp_path, world, make_client):
    emu = Emulator(db=str(tmp_path / "state.db")).start()
    try:
        bot_user = emu.create_user("pingbot", bot=True)
        client = Client(base_url=emu.base_url, socket_url=emu.socket_url, reconnect_base=0.05, reconnect_cap=0.3)
        client.login(bot_user["token"], timeout=15)
        recorder = Recorder(client)
        emu.stop()
        recorder.wait("disconnect")
        timed_destroy(client)
        assert threads_gone() == []
        emu.start()
        assert not threading.Event().wait(0.5)  # a live reconnect loop would be back by now
        assert emu.connection_count() == 0
    finally:
        emu.stop()


# -- REST faults ----------------------------------------------------------------------------


@pytest.mark.parametrize("status", [500, 502, 503, 429])
def test_every_route_failing_for_a_while(world, emulator, bot, status):
    replying_bot(bot)
    channel, bot_id = world.general["publicId"], world.bot["publicId"]
    emulator.add_fault("*", "/*", status=status, count=None, retry_after="0.2" if status != 500 else None)
    started = time.monotonic()
    with pytest.raises(RateLimitError if status == 429 else ServiceAPIError) as info:
        bot.api_call("/auth/me", max_retries=1)
    assert info.value.status == status
    assert time.monotonic() - started < (0.2 + 0.3) * 1.5 + 0.3
    # The socket does not depend on REST: messages are still answered.
    posted = emulator.post_message(channel, world.human["publicId"], "during the outage")["message"]["publicId"]
    wait_until(lambda: posted in answered(emulator, channel, bot_id))
    # A call made during the fault, with retries left, succeeds once the fault is over (500 is not retried).
    outcome: list[Any] = []
    call = threading.Thread(target=lambda: outcome.append(_catch(lambda: bot.api_call("/auth/me"))))
    call.start()
    threading.Event().wait(0.3)
    emulator.clear_faults()
    call.join(10)
    assert not call.is_alive()
    if status == 500:
        assert isinstance(outcome[0], ServiceAPIError)
    else:
        assert outcome[0]["user"]["publicId"] == bot_id
    assert bot.is_connected


def _catch(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - returned for the assertion
        return exc


def test_slow_responses_past_the_timeout(world, emulator, bot):
    emulator.add_fault("GET", "/auth/me", delay_ms=3000, count=None)
    started = time.monotonic()
    with pytest.raises(ServiceTimeoutError):
        bot.api_call("/auth/me", timeout_ms=200, max_retries=1)
    elapsed = time.monotonic() - started
    assert 0.2 * 2 + 0.5 <= elapsed <= (0.2 * 2 + 0.5) * 2 + 1.0  # well under the 3 s delay
    # Another route is not held up by the slow one.
    started = time.monotonic()
    assert bot.guilds.fetch(world.server["publicId"]).id == world.server["publicId"]
    assert time.monotonic() - started < 2.0


# -- event floods and misbehaving listeners ---------------------------------------------------


@pytest.mark.slow
def test_flood_of_10000_message_create_in_order_and_memory_comes_back(world, emulator, make_client):
    human_id = world.human["publicId"]
    channels = [world.general["publicId"]] + [
        emulator.create_channel(world.server["publicId"], f"flood{i}")["publicId"] for i in range(3)
    ]
    bot = make_client()
    bot.login(world.bot_token, timeout=15)
    per_channel = 2500
    total = per_channel * len(channels)
    seen: dict[str, list[int]] = {c: [] for c in channels}
    lock = threading.Lock()
    count = [0]
    all_seen = threading.Event()

    @bot.on("message_create")
    def on_message(message: Any) -> None:
        if message.author is None or message.author.bot:
            return
        number = int(message.content.split()[1])
        seen[message.channel_id].append(number)
        if number % 100 == 0:
            message.reply(f"ack {number}")
        with lock:
            count[0] += 1
            if count[0] == total:
                all_seen.set()

    # Warm up (threads, buffers, caches), then measure.
    emulator.post_message(channels[0], human_id, "warm -1")
    wait_until(lambda: count[0] == 1)
    seen[channels[0]].clear()
    count[0] = 0
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for channel in channels:
            for start in range(0, per_channel, 500):
                emulator.post_messages(channel, human_id, [f"m {i}" for i in range(start, start + 500)])
        assert all_seen.wait(60)
        for channel in channels:
            assert seen[channel] == list(range(per_channel))  # all handled, per-channel order kept
            wait_until(lambda c=channel: len(answered(emulator, c, world.bot["publicId"])) == per_channel // 100)
        seen.clear()
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 2_000_000, f"{grown} bytes still held after the flood"
    timed_destroy(bot)
    assert_nothing_left(bot, emulator)


def test_a_listener_that_raises_on_every_event(world, emulator, bot, listener_errors):
    listener_errors.expect(RuntimeError, match="listener bug")
    errors: list[BaseException] = []
    handled: list[str] = []
    done = threading.Event()
    bot.on("error", errors.append)

    @bot.on("message_create")
    def broken(message: Any) -> None:
        raise RuntimeError("listener bug")

    @bot.on("message_create")
    def fine(message: Any) -> None:
        if message.author is not None and not message.author.bot:
            handled.append(message.content)
            if len(handled) == 200:
                done.set()

    emulator.post_messages(world.general["publicId"], world.human["publicId"], [f"m {i}" for i in range(200)])
    assert done.wait(15)
    assert handled == [f"m {i}" for i in range(200)]
    wait_until(lambda: len(errors) >= 200)
    assert all(isinstance(e, RuntimeError) for e in errors)
    assert bot.send_message(world.general["publicId"], "still alive").content == "still alive"
    timed_destroy(bot)
    assert_nothing_left(bot, emulator)


@pytest.mark.parametrize("destroy_while_blocked", [False, True])
def test_a_listener_blocking_one_channel_does_not_stop_the_others(world, emulator, bot, destroy_while_blocked):
    human_id = world.human["publicId"]
    slow_channel = world.general["publicId"]
    other = emulator.create_channel(world.server["publicId"], "other")["publicId"]
    release = threading.Event()
    blocked = threading.Event()
    order: dict[str, list[str]] = {slow_channel: [], other: []}
    other_done = threading.Event()
    blocked_thread: list[threading.Thread] = []

    @bot.on("message_create")
    def on_message(message: Any) -> None:
        if message.author is None or message.author.bot:
            return
        order[message.channel_id].append(message.content)
        if message.content == "block":
            blocked_thread.append(threading.current_thread())
            blocked.set()
            release.wait(60)  # "blocks for a minute", released at the end of the test
        if message.channel_id == other and len(order[other]) == 50:
            other_done.set()

    try:
        emulator.post_message(slow_channel, human_id, "block")
        assert blocked.wait(5)
        emulator.post_messages(slow_channel, human_id, ["after 1", "after 2"])
        emulator.post_messages(other, human_id, [f"o {i}" for i in range(50)])
        assert other_done.wait(10)  # the other channel flows while the first is blocked
        assert order[other] == [f"o {i}" for i in range(50)]
        assert order[slow_channel] == ["block"]
        assert bot.send_message(other, "replies still work").content == "replies still work"
        if destroy_while_blocked:
            timed_destroy(bot)
            assert_nothing_left(bot, emulator, allow=tuple(blocked_thread))
            release.set()
            blocked_thread[0].join(1.0)
            assert not blocked_thread[0].is_alive()
            assert order[slow_channel] == ["block"]  # nothing queued runs after destroy
        else:
            release.set()
            wait_until(lambda: order[slow_channel] == ["block", "after 1", "after 2"])
            timed_destroy(bot)
            assert_nothing_left(bot, emulator)
    finally:
        release.set()


# -- destroy() in the middle of each fault ----------------------------------------------------


def _scenario_flood(world: Any, emulator: Any, bot: Client) -> None:
    bot.on("message_create", lambda m: m.reply("x") if m.author and not m.author.bot else None)
    emulator.post_messages(world.general["publicId"], world.human["publicId"], [f"m {i}" for i in range(2000)])


def _scenario_rest_faults(world: Any, emulator: Any, bot: Client) -> None:
    emulator.add_fault("*", "/*", status=503, retry_after="5", count=None)
    for _ in range(8):
        threading.Thread(target=_catch, args=(lambda: bot.api_call("/auth/me"),), name="test-call").start()
    wait_until(lambda: len(emulator.requests()) >= 8)


def _scenario_slow_rest(world: Any, emulator: Any, bot: Client) -> None:
    emulator.add_fault("*", "/*", delay_ms=10_000, count=None)
    for _ in range(8):
        threading.Thread(target=_catch, args=(lambda: bot.api_call("/auth/me"),), name="test-call").start()
    wait_until(lambda: emulator.max_in_flight() >= 5)


def _scenario_raising(world: Any, emulator: Any, bot: Client) -> None:
    def broken(message: Any) -> None:
        raise RuntimeError("bug")

    bot.on("message_create", broken)
    emulator.post_messages(world.general["publicId"], world.human["publicId"], [f"m {i}" for i in range(500)])


def _scenario_transport_drop(world: Any, emulator: Any, bot: Client) -> None:
    emulator.set_outage(5)
    emulator.drop_transport(world.bot["publicId"])
    wait_until(lambda: not bot.is_connected)


@pytest.mark.parametrize(
    "scenario", [_scenario_flood, _scenario_rest_faults, _scenario_slow_rest, _scenario_raising, _scenario_transport_drop],
    ids=["flood", "rest_503", "slow_rest", "raising_listener", "transport_drop"],
)
def test_destroy_during_a_fault(world, emulator, make_client, scenario, listener_errors):
    # Listeners still running when destroy() lands fail their sends; the raising scenario raises.
    listener_errors.expect(ServiceError)
    listener_errors.expect(RuntimeError, match="^bug$")
    bot = make_client()
    bot.login(world.bot_token, timeout=15)
    emulator.clear_requests()
    scenario(world, emulator, bot)
    timed_destroy(bot)
    emulator.clear_faults()
    emulator.set_outage(None)
    assert_nothing_left(bot, emulator)
    assert threads_done()  # the test's own callers got their answer (an error) at once


def threads_done() -> bool:
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        if not [t for t in threading.enumerate() if t.name == "test-call" and t.is_alive()]:
            return True
        time.sleep(0.01)
    return False
