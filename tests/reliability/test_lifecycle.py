"""Connection lifecycle (spec: States and transitions; protocol 2.1, 2.2): loss, reconnection, refusal."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from service_client import Client, ServiceAuthError, _defaults
from service_client.gateway.connection import reconnect_delay

from .conftest import Recorder, answered, replying_bot, wait_until


def test_default_reconnect_policy_is_1s_doubling_to_30s_with_jitter():
    client = Client(base_url="http://127.0.0.1:1/v2", socket_url="http://127.0.0.1:1")
    try:
        assert (client._reconnect_base, client._reconnect_cap) == (1.0, 30.0)
    finally:
        client.destroy()
    middle = [reconnect_delay(n, 1.0, 30.0, _defaults.RECONNECT_JITTER, rand=lambda: 0.5) for n in range(8)]
    assert middle == [1, 2, 4, 8, 16, 30, 30, 30]
    low = reconnect_delay(0, 1.0, 30.0, _defaults.RECONNECT_JITTER, rand=lambda: 0.0)
    high = reconnect_delay(0, 1.0, 30.0, _defaults.RECONNECT_JITTER, rand=lambda: 0.999)
    assert 0.4 <= low < 1.0 < high <= 1.5


@pytest.mark.parametrize("cut", ["drop_transport", "server_disconnect"])
def test_loss_after_ready_disconnects_reconnects_and_keeps_answering(world, emulator, bot, cut):
    recorder = Recorder(bot)
    replying_bot(bot)
    bot_id, channel = world.bot["publicId"], world.general["publicId"]
    first = emulator.post_message(channel, world.human["publicId"], "before")["message"]
    wait_until(lambda: first["publicId"] in answered(emulator, channel, bot_id))

    emulator.set_outage(30)  # keep the bot offline while we look at it
    assert getattr(emulator, cut)(bot_id) == 1
    recorder.wait("disconnect")
    reason = recorder.args("disconnect")[0][0]
    if cut == "server_disconnect":
        assert reason == "io server disconnect"
    else:
        assert reason in ("transport close", "transport error")
    assert not bot.is_connected
    # While disconnected: socket operations raise ServiceAuthError at once; REST keeps working.
    started = time.monotonic()
    with pytest.raises(ServiceAuthError):
        bot.send_message(channel, "offline")
    with pytest.raises(ServiceAuthError):
        bot.set_activity({"type": "playing", "name": "x"})
    assert time.monotonic() - started < 2.0  # not the 10 s a send waits for its ack
    assert bot.api_call("/auth/me")["user"]["publicId"] == bot_id
    assert bot.state.value == "ready" and bot.ready_at is not None

    emulator.set_outage(None)
    recorder.wait("reconnect")
    assert recorder.names().index("disconnect") < recorder.names().index("reconnect")
    wait_until(lambda: emulator.connection_count() == 1)
    second = emulator.post_message(channel, world.human["publicId"], "after")["message"]
    wait_until(lambda: second["publicId"] in answered(emulator, channel, bot_id))
    assert bot.send_message(channel, "back").content == "back"
    counts = answered(emulator, channel, bot_id)
    assert counts == {first["publicId"]: 1, second["publicId"]: 1}  # nothing answered twice


def test_reconnection_attempts_are_unlimited_and_capped(world, emulator, make_client, caplog):
    caplog.set_level(logging.DEBUG, logger="service_client.gateway")
    bot = make_client(reconnect_base=0.05, reconnect_cap=0.2)
    bot.login(world.bot_token, timeout=15)
    recorder = Recorder(bot)
    emulator.set_outage(1.5)
    emulator.drop_transport(world.bot["publicId"])
    recorder.wait("disconnect")
    recorder.wait("reconnect", timeout=10)
    attempts = [r.created for r in caplog.records if r.getMessage().startswith("reconnect attempt")]
    assert len(attempts) >= 5  # every refused upgrade led to another attempt
    gaps = [b - a for a, b in zip(attempts, attempts[1:], strict=False)]
    assert max(gaps) <= 0.2 + 0.6  # the cap (plus one refused attempt and scheduling slack)
    assert bot.is_connected


def test_refused_reconnection_stops_and_emits_auth_error(world, emulator, bot, caplog):
    caplog.set_level(logging.DEBUG, logger="service_client.gateway")
    recorder = Recorder(bot)
    emulator.revoke_token(world.bot["publicId"])  # server-disconnects the bot, refuses its reconnects
    recorder.wait("disconnect")
    recorder.wait("error")
    error = recorder.args("error")[0][0]
    assert isinstance(error, ServiceAuthError)
    attempts = sum(r.getMessage().startswith("reconnect attempt") for r in caplog.records)
    stopped = threading.Event()
    assert not stopped.wait(0.5)  # time for more attempts, if they did not stop
    assert sum(r.getMessage().startswith("reconnect attempt") for r in caplog.records) == attempts
    assert emulator.connection_count() == 0
    assert "reconnect" not in recorder.names()
    with pytest.raises(ServiceAuthError):
        bot.send_message(world.general["publicId"], "x")
    bot.destroy()
    assert not [t for t in threading.enumerate() if "reconnect" in t.name and t.is_alive()]


def test_refuse_auth_toggle_during_reconnect(world, emulator, bot):
    recorder = Recorder(bot)
    emulator.configure(refuse_auth=True)
    try:
        emulator.drop_transport(world.bot["publicId"])
        recorder.wait("error")
    finally:
        emulator.configure(refuse_auth=False)
    assert isinstance(recorder.args("error")[0][0], ServiceAuthError)
    assert not bot.is_connected
