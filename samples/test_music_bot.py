"""Tests of the music bot (``samples/music_bot.py``), written as a bot author writes them.

The fixtures ``bot_world`` and ``bot_client`` come with service_client's pytest plugin; the
test world's voice part needs the voice extra and a network interface other than loopback
(here: ``bash tests/voice/run_in_netns.sh -m voice samples``), else these tests skip.
"""

from __future__ import annotations

import array
import math
import pathlib
import wave
from collections.abc import Callable
from typing import Any

import pytest
from music_bot import build_client

from service_client import Client
from service_client.testing.voice import voice_media_unavailable

pytestmark = [pytest.mark.voice,
              pytest.mark.skipif(voice_media_unavailable() is not None, reason=str(voice_media_unavailable()))]


def write_tone(path: pathlib.Path, hz: float, seconds: float, rate: int = 44100) -> None:
    """A sine tone as a 16-bit mono WAV file."""
    samples = array.array("h", (int(12000 * math.sin(2 * math.pi * hz * i / rate)) for i in range(int(rate * seconds))))
    with wave.open(str(path), "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(rate)
        writer.writeframes(samples.tobytes())


@pytest.fixture
def music_dir(tmp_path: pathlib.Path) -> pathlib.Path:
    write_tone(tmp_path / "a440.wav", 440, 1.5)
    write_tone(tmp_path / "e660.wav", 660, 20)
    return tmp_path


@pytest.fixture
def bot_factory(music_dir: pathlib.Path) -> Callable[..., Client]:
    return lambda **options: build_client(music_dir=music_dir, **options)


def test_play_then_the_queue_then_pause_volume_and_stop(bot_world: Any, bot_client: Client) -> None:
    alice = bot_world.join_voice(bot_world.owner, bot_world.voice)
    said = bot_world.say(bot_world.general, "!play a440.wav")
    assert bot_world.expect_reply(said).content == "Playing a440.wav."
    bot_world.expect_audio(alice, frequency=440, within=5)
    said = bot_world.say(bot_world.general, "!play e660.wav")
    assert bot_world.expect_reply(said).content == "Queued e660.wav (1 waiting)."
    bot_world.expect_audio(alice, frequency=660, within=5)  # the queue went on by itself
    said = bot_world.say(bot_world.general, "!pause")
    assert bot_world.expect_reply(said).content.startswith("Paused at ")
    assert bot_client.voice.connection is not None and bot_client.voice.connection.playback.paused
    said = bot_world.say(bot_world.general, "!resume")
    assert bot_world.expect_reply(said).content == "Resumed."
    said = bot_world.say(bot_world.general, "!volume 50")
    assert bot_world.expect_reply(said).content == "Volume 50%."
    assert bot_client.voice.connection.playback.volume == 0.5
    said = bot_world.say(bot_world.general, "!stop")
    assert bot_world.expect_reply(said).content == "Stopped."
    assert bot_client.voice.connection.playback is None


def test_files_outside_the_music_directory_are_refused(bot_world: Any, bot_client: Client) -> None:
    bot_world.join_voice(bot_world.owner, bot_world.voice)
    said = bot_world.say(bot_world.general, "!play ../../etc/passwd")
    assert bot_world.expect_reply(said).content == "No file '../../etc/passwd' in the music directory."


def test_play_needs_the_author_in_a_voice_channel(bot_world: Any, bot_client: Client) -> None:
    said = bot_world.say(bot_world.general, "!play a440.wav")
    assert bot_world.expect_reply(said).content == "Join a voice channel first."
