"""Spec, States: after ready, network cuts never reject a promise; each wait ends by its own bound."""

from __future__ import annotations

import threading
import time

import pytest

from service_client import _defaults

from .conftest import Recorder


def test_a_send_pending_across_a_transport_drop_ends_by_its_own_timeout(bot, world, emulator, monkeypatch):
    monkeypatch.setattr(_defaults, "SEND_TIMEOUT_S", 1.5)
    recorder = Recorder(bot)
    emulator.configure(echo="delay", echo_delay_ms=5000)  # the echo cannot arrive before the cut
    outcome: dict[str, object] = {}

    def send() -> None:
        started = time.monotonic()
        try:
            bot.send_message(world.general["publicId"], "in flight")
        except BaseException as exc:  # noqa: BLE001 - recorded for the assertions
            outcome["error"] = exc
        outcome["elapsed"] = time.monotonic() - started

    sender = threading.Thread(target=send)
    sender.start()
    deadline = time.monotonic() + 5
    while not bot._connection.pending_sends() and time.monotonic() < deadline:
        time.sleep(0.005)
    assert bot._connection.pending_sends(), "the send never became pending"
    dropped_at = time.monotonic()
    emulator.drop_transport(world.bot["publicId"])
    recorder.wait("disconnect")
    sender.join(10)
    assert isinstance(outcome["error"], TimeoutError)
    assert str(outcome["error"]).startswith("send_message timeout after 10s: no echo of nonce ")
    # not rejected at the cut: the wait ran its full bound
    assert outcome["elapsed"] >= 1.5 - 0.05
    assert time.monotonic() - dropped_at >= 0.5
    recorder.wait("reconnect")
    assert bot._connection.pending_sends() == 0


def test_socket_operations_while_disconnected_raise_at_once(bot, world, emulator):
    from service_client import ServiceAuthError

    recorder = Recorder(bot)
    emulator.set_outage(30)
    try:
        emulator.drop_transport(world.bot["publicId"])
        recorder.wait("disconnect")
        started = time.monotonic()
        with pytest.raises(ServiceAuthError):
            bot.send_message(world.general["publicId"], "while offline")
        assert time.monotonic() - started < 2.0  # not the 10 s a send waits for its ack
    finally:
        emulator.set_outage(None)
    recorder.wait("reconnect")
