"""Tests of the recorder bot (``samples/recorder_bot.py``), written as a bot author writes them.

Like ``test_music_bot.py``: the voice extra and a network interface other than loopback, else
these tests skip with the reason.
"""

from __future__ import annotations

import pathlib
import time
import wave
from collections.abc import Callable
from typing import Any

import pytest
from recorder_bot import build_client

from service_client import Client
from service_client.testing.voice import voice_media_unavailable

pytestmark = [pytest.mark.voice,
              pytest.mark.skipif(voice_media_unavailable() is not None, reason=str(voice_media_unavailable()))]


@pytest.fixture
def bot_factory(tmp_path: pathlib.Path) -> Callable[..., Client]:
    return lambda **options: build_client(recordings_dir=tmp_path, **options)


def test_one_wav_per_speaker(bot_world: Any, bot_client: Client, tmp_path: pathlib.Path) -> None:
    alice = bot_world.join_voice(bot_world.owner, bot_world.voice)
    said = bot_world.say(bot_world.general, "!record")
    assert bot_world.expect_reply(said).content.startswith("Recording to ")
    alice.speak(440, seconds=1.0)
    deadline = time.monotonic() + 5
    files: list[pathlib.Path] = []
    while time.monotonic() < deadline:  # the file grows while alice speaks
        files = list(tmp_path.rglob("*.wav"))
        if files and files[0].stat().st_size > 44 + 48000 * 2:
            break
        time.sleep(0.1)
    said = bot_world.say(bot_world.general, "!stop")
    assert bot_world.expect_reply(said).content == f"Recorded: {alice.id}.wav"
    [path] = files
    with wave.open(str(path), "rb") as reader:
        assert (reader.getframerate(), reader.getnchannels()) == (48000, 1)
        assert reader.getnframes() >= 48000
