"""``Client.run`` (blocks until destroy, Ctrl-C destroys and returns) and the ``send_message`` timeout."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from service_client import ClientState, ServiceError, _defaults


def _eventually(predicate: Any, timeout: float = 5.0) -> bool:
    """Poll emulator-side state (observable only by polling) until true or ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _run_in_thread(client: Any, token: str) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def target() -> None:
        try:
            client.run(token)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    thread = threading.Thread(target=target, name="test-run", daemon=True)
    thread.start()
    return thread, errors


def test_run_blocks_until_destroy_is_called_from_another_thread(world, emulator, make_client, client_threads):
    client = make_client()
    ready = threading.Event()
    client.on("ready", lambda *args: ready.set())
    thread, errors = _run_in_thread(client, world.bot_token)
    assert ready.wait(15), errors
    thread.join(0.6)  # a few turns of run's wait loop: it must still be blocking
    assert thread.is_alive(), "run() returned before destroy()"
    assert client.state is ClientState.READY and client.is_connected
    client.destroy()
    thread.join(2.0)
    assert not thread.is_alive(), "run() did not return after destroy()"
    assert errors == []
    assert client.state is ClientState.DESTROYED
    assert client_threads() == []


class _InterruptedWait(threading.Event):
    """An Event whose first wait() while unset raises KeyboardInterrupt, as Ctrl-C would in run()."""

    def __init__(self) -> None:
        super().__init__()
        self.interrupted = False

    def wait(self, timeout: float | None = None) -> bool:
        if not self.interrupted and not self.is_set():
            self.interrupted = True
            raise KeyboardInterrupt
        return super().wait(timeout)


def test_keyboard_interrupt_in_run_destroys_the_client_and_returns(world, emulator, make_client, client_threads):
    client = make_client()
    ready = threading.Event()
    client.on("ready", lambda *args: ready.set())
    client._destroyed = _InterruptedWait()  # the Event run() waits on after login
    thread, errors = _run_in_thread(client, world.bot_token)
    thread.join(15)
    assert not thread.is_alive()
    assert client._destroyed.interrupted and ready.is_set()  # interrupted while running, after ready
    assert errors == []  # returned, did not raise
    assert client.state is ClientState.DESTROYED and not client.is_connected
    assert client.to_dict()["token"] is None
    assert client_threads() == []
    assert _eventually(lambda: emulator.connection_count() == 0)
    with pytest.raises(ServiceError):
        client.login(world.bot_token)


def test_keyboard_interrupt_during_login_in_run_destroys_and_returns(world, emulator, make_client, monkeypatch,
                                                                     client_threads):
    client = make_client()
    real_login = client.login

    def login(token: str, **kwargs: Any) -> None:
        real_login(token, **kwargs)
        raise KeyboardInterrupt  # Ctrl-C just as login finishes

    monkeypatch.setattr(client, "login", login)
    thread, errors = _run_in_thread(client, world.bot_token)
    thread.join(15)
    assert not thread.is_alive()
    assert errors == []
    assert client.state is ClientState.DESTROYED
    assert client_threads() == []


def test_send_message_timeout_is_a_builtin_timeout_error_and_clears_the_nonce(bot, world, emulator, monkeypatch):
    emulator.configure(echo="drop")  # the service stores and broadcasts, but the sender gets no echo
    monkeypatch.setattr(_defaults, "SEND_TIMEOUT_S", 0.3)
    started = time.monotonic()
    with pytest.raises(TimeoutError) as info:
        bot.send_message(world.general["publicId"], "into the void")
    assert time.monotonic() - started < 5  # bounded by SEND_TIMEOUT_S, read at call time
    assert type(info.value) is TimeoutError  # the builtin, not a library subclass
    assert str(info.value).startswith("send_message timeout after 10s: no echo of nonce ")
    assert world.general["publicId"] in str(info.value) and "Likely causes" in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__
    assert bot._connection.pending_sends() == 0
    # the send itself did happen: only the echo was missing
    assert [m["content"] for m in emulator.messages(world.general["publicId"])] == ["into the void"]
    emulator.configure(echo="normal")
    assert bot.send_message(world.general["publicId"], "back").content == "back"
    assert bot._connection.pending_sends() == 0
