"""Shared fixtures: one emulator per test session, reset before each test, and a seeded world.

``emulator_server`` starts once (readiness: ``Emulator.start`` returns when listening) and is
stopped with a bounded join at the end of the session. ``emulator`` resets it for each test.
``world`` seeds a bot and a human that both belong to one server with a TEXT channel.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

import pytest

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
    """The session's emulator (127.0.0.1, free port, in-memory), started once."""
    emu = Emulator()
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
