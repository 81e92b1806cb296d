"""``destroy()`` from every state and thread (spec: States and transitions; protocol pitfall 11)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from service_client import ServiceAuthError, ServiceError
from service_client.permissions import Permissions

from .conftest import Recorder, client_threads, threads_gone, wait_until


def assert_destroyed(client, emulator) -> None:
    """The common post-conditions of destroy()."""
    assert threads_gone() == []
    assert client.state.value == "destroyed" and client.ready_at is None
    assert client._token.get() is None and client._rest.token is None
    assert client.to_dict()["token"] is None
    assert client.listeners("message_create") == [] and client.listeners("disconnect") == []
    client.destroy()  # a second destroy does nothing
    # Every refusal says what to do: create a new Client (never "call login()", which would fail).
    refusals: list[tuple[type[BaseException], Callable[[], Any]]] = [
        (ServiceError, lambda: client.login("anything")),
        (ServiceAuthError, lambda: client.send_message("123", "x")),
        (ServiceAuthError, lambda: client.set_status("idle")),
        (ServiceAuthError, lambda: client.api_call("/auth/me")),
        (ServiceAuthError, lambda: client.create_dm("U1")),
        (ServiceAuthError, lambda: client.voice.join("123", media=False)),
        (ServiceError, lambda: client.wait_for("message_create", timeout=1)),
    ]
    for kind, call in refusals:
        with pytest.raises(kind) as info:
            call()
        text = str(info.value)
        assert "destroyed" in text and "new Client" in text and "login()" not in text, text
    wait_until(lambda: emulator.connection_count() == 0, timeout=5)


def test_destroy_new_client(make_client, emulator):
    client = make_client()
    client.on("message_create", lambda m: None)
    client.destroy()
    assert_destroyed(client, emulator)
    assert emulator.requests() == []


def test_destroy_while_connecting_during_a_slow_login(world, make_client, emulator):
    emulator.add_fault("GET", "/auth/me", delay_ms=5000)
    client = make_client()
    outcome: list[BaseException] = []
    finished = threading.Event()

    def login() -> None:
        try:
            client.login(world.bot_token)
        except BaseException as exc:  # noqa: BLE001 - recorded for the assertion
            outcome.append(exc)
        finished.set()

    threading.Thread(target=login, name="test-login").start()
    wait_until(lambda: any(r["path"] == "/auth/me" for r in emulator.requests()) or client.state.value != "new")
    wait_until(lambda: emulator.connection_count() == 1)
    started = time.monotonic()
    client.destroy()
    assert time.monotonic() - started < 1.5
    assert finished.wait(1.0), "login() did not end at once"
    assert isinstance(outcome[0], ServiceError)
    assert client.user is None or client.ready_at is None
    assert_destroyed(client, emulator)


def test_destroy_while_reconnecting_stops_reconnection(world, make_client, emulator):
    client = make_client()
    client.login(world.bot_token, timeout=15)
    recorder = Recorder(client)
    emulator.set_outage(0.6)
    emulator.drop_transport(world.bot["publicId"])
    recorder.wait("disconnect")
    client.destroy()
    assert_destroyed(client, emulator)
    assert not threading.Event().wait(1.0)  # the outage is over: a live reconnect loop would be back now
    assert emulator.connection_count() == 0
    assert "reconnect" not in recorder.names()


def test_destroy_after_failed_login_and_after_refused_reconnect(world, make_client, emulator):
    failed = make_client()
    with pytest.raises(ServiceAuthError):
        failed.login("not-a-token", timeout=10)
    failed.destroy()
    assert_destroyed(failed, emulator)

    refused = make_client()
    refused.login(world.bot_token, timeout=15)
    recorder = Recorder(refused)
    emulator.revoke_token(world.bot["publicId"])
    recorder.wait("error")
    refused.destroy()
    assert_destroyed(refused, emulator)


def _no_connect_voice(world, emulator) -> str:
    """Take CONNECT away from @everyone so that a voice join is refused silently (it then pends)."""
    member = emulator.member(world.server["publicId"], world.bot["publicId"])
    everyone = next(r for r in member["roles"] if r["name"] == "@everyone")
    emulator.update_role(
        world.server["publicId"], everyone["publicId"], permissions=str(int(Permissions.DEFAULT & ~Permissions.CONNECT))
    )
    return next(c["publicId"] for c in world.channels if c["type"] == "VOICE")


@pytest.mark.parametrize("where", ["other_thread", "listener"])
def test_destroy_ends_every_pending_call_at_once(world, make_client, emulator, where):
    human_id = world.human["publicId"]
    hidden = emulator.create_server("Hidden", human_id, channels=[{"name": "h", "type": "TEXT"}])
    hidden_channel = hidden["channels"][0]["publicId"]  # the bot is no member: its sends get no echo
    voice_channel = _no_connect_voice(world, emulator)
    client = make_client()
    client.login(world.bot_token, timeout=15)
    client.channels.fetch(voice_channel)  # cached, so join() only waits for credentials
    emulator.add_fault("GET", "/servers/*/stats", status=503, retry_after=30, count=None)  # a sleeping retry
    emulator.add_fault("GET", "/users/*", delay_ms=8000, count=None)  # five calls on the wire ...
    never = client.register_event("never_happens")  # a custom event nothing emits
    calls: dict[str, Callable[[], Any]] = {
        "send_message": lambda: client.send_message(hidden_channel, "never echoed"),
        "api_call_sleeping": lambda: client.api_call(f"/servers/{world.server['publicId']}/stats"),
        "voice_join": lambda: client.voice.join(voice_channel, timeout=14, media=False),
        "wait_for": lambda: client.wait_for(never),
        "wait_for_timeout": lambda: client.wait_for(never, timeout=30),
    }
    for n in range(5):
        calls[f"api_call_wire_{n}"] = lambda n=n: client.api_call(f"/users/{human_id}")
    calls["api_call_queued"] = lambda: client.api_call(f"/users/{human_id}")  # ... this one waits in the FIFO
    results: dict[str, BaseException | None] = {}
    ended = {name: threading.Event() for name in calls}

    def run(name: str) -> None:
        try:
            calls[name]()
            results[name] = None
        except BaseException as exc:  # noqa: BLE001
            results[name] = exc
        ended[name].set()

    for name in calls:
        threading.Thread(target=run, args=(name,), name=f"test-{name}").start()
    rest = client._rest
    # Every call in its wait: five on the wire, the sleeping retry parked, the last one in the FIFO.
    wait_until(lambda: emulator.max_in_flight() >= 5 and client._connection.pending_sends() == 1
               and client.voice._pending and len(rest._delays) == 1 and len(rest._fifo) == 1)

    started = time.monotonic()
    if where == "listener":
        destroyed = threading.Event()
        client.on("message_create", lambda m: (client.destroy(), destroyed.set()))
        emulator.post_message(world.general["publicId"], human_id, "please destroy")
        assert destroyed.wait(5)
    else:
        client.destroy()
    for name, event in ended.items():
        assert event.wait(max(0.1, started + 1.5 - time.monotonic())), f"{name} did not end at once"
    for name, exc in results.items():
        assert isinstance(exc, ServiceError), (name, exc)
    emulator.clear_faults()
    assert_destroyed(client, emulator)
    assert client._connection.pending_sends() == 0 and client.voice._pending == {}
    assert [t for t in client_threads()] == []
