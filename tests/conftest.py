"""Shared fixtures: one emulator per test session, reset before each test, and a seeded world.

``emulator_server`` starts once (readiness: ``Emulator.start`` returns when listening) and is
stopped with a bounded join at the end of the session. ``emulator`` resets it for each test.
``world`` seeds a bot and a human that both belong to one server with a TEXT channel.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from service_client import Client
from service_client.emulator import Emulator


@dataclass
class World:
    """A seeded world: ``bot`` and ``human`` (User records) both members of ``server``."""

    bot: dict[str, Any]
    bot_token: str
    human: dict[str, Any]
    human_token: str
    server: dict[str, Any]
    channels: list[dict[str, Any]]
    general: dict[str, Any]
    emulator: Emulator

    def __repr__(self) -> str:  # never show the tokens
        return f"<World server={self.server['publicId']} bot={self.bot['publicId']} human={self.human['publicId']}>"


@pytest.fixture(scope="session")
def emulator_server() -> Iterator[Emulator]:
    """The session's emulator (127.0.0.1, free port, in-memory, no media server: the voice media
    tests run their own inside a network namespace, tests/voice), started once."""
    emu = Emulator(media=False)
    emu.start()
    try:
        yield emu
    finally:
        emu.stop(timeout=10.0)


@pytest.fixture
def emulator(emulator_server: Emulator) -> Emulator:
    """The session's emulator, reset (state, faults, limiter, journal, sockets) before the test."""
    emulator_server.reset()
    return emulator_server


@pytest.fixture
def world(emulator: Emulator) -> World:
    """A bot (``pingbot``) and a human (``alice``, owner) in ``Test Server`` with TEXT ``general``,
    ``random`` (category ``Text Channels``) and VOICE ``voice`` (uncategorised)."""
    human = emulator.create_user("alice")
    bot = emulator.create_user("pingbot", bot=True)
    created = emulator.create_server(
        "Test Server", human["user"]["publicId"],
        categories=[{"name": "Text Channels", "channels": [{"name": "general", "type": "TEXT"},
                                                           {"name": "random", "type": "TEXT"}]}],
        channels=[{"name": "voice", "type": "VOICE"}],
    )
    emulator.add_member(created["server"]["publicId"], bot["user"]["publicId"])
    channels = created["channels"]
    general = next(c for c in channels if c["name"] == "general")
    return World(bot=bot["user"], bot_token=bot["token"], human=human["user"], human_token=human["token"],
                 server=emulator.server(created["server"]["publicId"]), channels=channels, general=general,
                 emulator=emulator)


# -- clients ------------------------------------------------------------------------------------


def _client_threads() -> list[str]:
    return sorted(
        t.name
        for t in threading.enumerate()
        if t.name.startswith("service_client-") and not t.name.startswith("service_client-emulator")
    )


@pytest.fixture
def client_threads() -> Callable[[], list[str]]:
    """A function listing the names of live threads started by the library (the emulator's excepted)."""
    return _client_threads


@pytest.fixture
def make_client(emulator: Emulator) -> Iterator[Callable[..., Client]]:
    """Factory of clients pointed at the emulator (fast reconnects); every one is destroyed at teardown."""
    made: list[Client] = []

    def make(**options: Any) -> Client:
        options.setdefault("base_url", emulator.base_url)
        options.setdefault("socket_url", emulator.socket_url)
        options.setdefault("reconnect_base", 0.05)
        options.setdefault("reconnect_cap", 0.3)
        client = Client(**options)
        made.append(client)
        return client

    yield make
    for client in made:
        client.destroy()


@pytest.fixture
def bot(world: World, make_client: Callable[..., Client]) -> Client:
    """A bot client logged in (ready) as ``world.bot``."""
    client = make_client()
    client.login(world.bot_token, timeout=15)
    return client


@pytest.fixture
def human(world: World, make_client: Callable[..., Client]) -> Client:
    """A client logged in as the human member ``world.human``."""
    client = make_client(workers=2)
    client.login(world.human_token, timeout=15)
    return client

