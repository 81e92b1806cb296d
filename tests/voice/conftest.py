"""Fixtures of the voice media tests: an emulator with its media server, inside a network namespace.

WebRTC (libwebrtc in LiveKit's SDK) skips the loopback interface, so the tests need another
one: ``tests/voice/run_in_netns.sh`` runs pytest in a namespace of its own with a veth pair at
``198.18.0.1`` (nothing leaves it). Elsewhere every test here skips with that reason.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from service_client import Client
from service_client.emulator import Emulator
from service_client.emulator.media import media_available
from service_client.voice import _deps

#: The address the namespace gives its veth end (tests/voice/run_in_netns.sh).
NETNS_ADDRESS = "198.18.0.1"
#: Bound on every voice join, seconds (a failed SDK connect otherwise retries for a minute).
JOIN_TIMEOUT_S = 8.0


def _netns_reason() -> str | None:
    """Why voice media cannot run here, or None."""
    if not media_available() or not _deps.available():
        return "the voice extra is not installed (pip install -e '.[emulator,voice]')"
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.bind((NETNS_ADDRESS, 0))
    except OSError:
        return (f"no interface with {NETNS_ADDRESS}: WebRTC skips loopback; run the voice tests with "
                "bash tests/voice/run_in_netns.sh -m voice tests/voice (root, a network namespace)")
    finally:
        probe.close()
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the voice tests, saying why, where the namespace or the extra is missing (with
    ``SERVICE_CLIENT_VOICE_REQUIRED=1``, as CI sets it, stop the run instead)."""
    if not any(item.get_closest_marker("voice") is not None for item in items):
        return
    reason = _netns_reason()
    if reason is None:
        return
    if os.environ.get("SERVICE_CLIENT_VOICE_REQUIRED") == "1":
        raise pytest.UsageError(f"voice tests required but cannot run: {reason}")
    for item in items:
        if item.get_closest_marker("voice") is not None:
            item.add_marker(pytest.mark.skip(reason=reason))


@dataclass
class VoiceWorld:
    """A bot and a human, members of one server with a VOICE channel; the human is in it."""

    emulator: Emulator
    bot: dict[str, Any]
    bot_token: str
    human: dict[str, Any]
    human_token: str
    server_id: str
    channel_id: str

    def __repr__(self) -> str:  # never show the tokens
        return f"<VoiceWorld channel={self.channel_id}>"


@pytest.fixture(scope="session")
def media_emulator() -> Iterator[Emulator]:
    """An emulator with its media server, for the session."""
    emu = Emulator(media=True)
    emu.start()
    try:
        yield emu
    finally:
        emu.stop(timeout=10.0)


@pytest.fixture
def voice_world(media_emulator: Emulator) -> VoiceWorld:
    """A fresh world: ``alice`` (owner, in the voice channel) and the bot ``dj``."""
    media_emulator.reset()
    human = media_emulator.create_user("alice")
    bot = media_emulator.create_user("dj", bot=True)
    created = media_emulator.create_server("Voice Server", human["user"]["publicId"],
                                           channels=[{"name": "lounge", "type": "VOICE"}])
    server_id = created["server"]["publicId"]
    media_emulator.add_member(server_id, bot["user"]["publicId"])
    channel_id = next(c["publicId"] for c in created["channels"] if c["type"] == "VOICE")
    assert media_emulator.voice_join(human["user"]["publicId"], channel_id)
    return VoiceWorld(media_emulator, bot["user"], bot["token"], human["user"], human["token"], server_id, channel_id)


@pytest.fixture
def make_voice_client(media_emulator: Emulator) -> Iterator[Callable[..., Client]]:
    """Factory of clients on the media emulator; each is destroyed at teardown."""
    made: list[Client] = []

    def make(**options: Any) -> Client:
        options.setdefault("base_url", media_emulator.base_url)
        options.setdefault("socket_url", media_emulator.socket_url)
        options.setdefault("reconnect_base", 0.05)
        options.setdefault("reconnect_cap", 0.3)
        client = Client(**options)
        made.append(client)
        return client

    yield make
    for client in made:
        client.destroy()


@pytest.fixture
def voice_bot(voice_world: VoiceWorld, make_voice_client: Callable[..., Client]) -> Client:
    """The bot, logged in (not yet in voice)."""
    client = make_voice_client()
    client.login(voice_world.bot_token, timeout=15)
    return client
