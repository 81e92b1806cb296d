"""Fixtures for the reliability tests (issue 6): clients on the emulator, event recorders, thread checks."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from service_client import Client


def client_threads() -> list[str]:
    """Names of the live threads started by the library (the emulator's excepted)."""
    return sorted(
        t.name
        for t in threading.enumerate()
        if t.name.startswith("service_client-") and not t.name.startswith("service_client-emulator")
    )


def wait_until(predicate: Callable[[], Any], timeout: float = 10.0, interval: float = 0.02) -> Any:
    """Poll ``predicate`` (for state only observable by polling, such as the emulator's) until truthy."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(interval)


def threads_gone(timeout: float = 5.0) -> list[str]:
    """Wait up to ``timeout`` for the library's threads to end; return those still alive."""
    deadline = time.monotonic() + timeout
    while client_threads() and time.monotonic() < deadline:
        time.sleep(0.01)
    return client_threads()


class Recorder:
    """Records lifecycle events of a client in order, with an Event per name."""

    NAMES = ("ready", "disconnect", "reconnect", "error", "guild_create", "guild_delete")

    def __init__(self, client: Client) -> None:
        self.events: list[tuple[str, tuple[Any, ...]]] = []
        self._lock = threading.Lock()
        self._flags: dict[str, threading.Event] = {name: threading.Event() for name in self.NAMES}
        for name in self.NAMES:
            client.on(name, self._make(name))

    def _make(self, name: str) -> Callable[..., None]:
        def listener(*args: Any) -> None:
            with self._lock:
                self.events.append((name, args))
            self._flags[name].set()

        return listener

    def wait(self, name: str, timeout: float = 10.0) -> None:
        assert self._flags[name].wait(timeout), f"no {name!r} event within {timeout} s: {self.names()}"

    def clear(self, name: str) -> None:
        self._flags[name].clear()

    def names(self) -> list[str]:
        with self._lock:
            return [name for name, _ in self.events]

    def args(self, name: str) -> list[tuple[Any, ...]]:
        with self._lock:
            return [args for n, args in self.events if n == name]


def answered(emulator: Any, channel_id: str, bot_id: str) -> dict[str, int]:
    """{replied message id: number of bot replies} in a channel, from the emulator's store."""
    counts: dict[str, int] = {}
    for message in emulator.messages(channel_id):
        author = message.get("author") or {}
        if author.get("publicId") == bot_id and message.get("replyToId"):
            counts[message["replyToId"]] = counts.get(message["replyToId"], 0) + 1
    return counts


def replying_bot(client: Client, prefix: str = "re: ") -> list[str]:
    """Make ``client`` reply to every human message; returns the list of handled message ids."""
    handled: list[str] = []

    @client.on("message_create")
    def reply(message: Any) -> None:
        if message.author is None or message.author.bot:
            return
        handled.append(message.id)
        try:
            message.reply(prefix + message.content)
        except Exception:  # noqa: BLE001 - a send may fail while the socket drops; the test counts replies
            pass

    return handled


def server_the_bot_joined(emulator: Any, bot: Client, world: Any, name: str, channel: str) -> str:
    """Create a server owned by the seeded human with one text channel ``channel``, add the bot
    and wait up to 10 s for the bot's ``guild_create`` of it (asserted), so a recorder made after
    this sees only what follows. Returns the server's public id."""
    server_id = str(emulator.create_server(name, world.human["publicId"],
                                           channels=[{"name": channel, "type": "TEXT"}])["server"]["publicId"])
    announced = threading.Event()
    bot.on("guild_create", lambda guild: announced.set() if guild.id == server_id else None)
    emulator.add_member(server_id, world.bot["publicId"])
    assert announced.wait(10), f"no guild_create for {name!r} within 10 s"
    return server_id
