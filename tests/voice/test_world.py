"""The test world's voice part: join_voice, speak (a tone, a WAV file) and expect_audio."""

from __future__ import annotations

import array
import math
import pathlib
import wave
from typing import Any

import pytest

from service_client import Client

pytestmark = pytest.mark.voice


def test_three_lines_and_a_wav(bot_world: Any, bot_client: Client, tmp_path: pathlib.Path) -> None:
    connection = bot_client.voice.join(bot_world.voice.id, timeout=8)
    alice = bot_world.join_voice(bot_world.owner, bot_world.voice)
    with pytest.raises(AssertionError, match=r"did not hear the bot play 440 Hz within 0.3 s \(last heard: 0 Hz"):
        bot_world.expect_audio(alice, frequency=440, within=0.3)
    connection.play(array.array("h", (int(9000 * math.sin(2 * math.pi * 440 * i / 48000))
                                      for i in range(96000))).tobytes(), sample_rate=48000, channels=1)
    assert bot_world.expect_audio(alice, frequency=440, within=5) == pytest.approx(440, abs=10)
    path = tmp_path / "a.wav"
    with wave.open(str(path), "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(16000)
        writer.writeframes(array.array("h", (int(9000 * math.sin(2 * math.pi * 550 * i / 16000))
                                             for i in range(16000))).tobytes())
    assert alice.speak(path) == pytest.approx(1.0, abs=0.05)
    with pytest.raises(ValueError, match="not a readable audio file"):
        alice.speak(b"not a wav")
    with pytest.raises(TypeError):
        alice.speak(True)


def test_join_voice_refuses_a_text_channel(bot_world: Any) -> None:
    with pytest.raises(ValueError, match="not a voice channel"):
        bot_world.join_voice(bot_world.owner, bot_world.general)


def test_expect_audio_names_a_user_in_no_voice_channel(bot_world: Any) -> None:
    with pytest.raises(AssertionError, match="is in no voice channel"):
        bot_world.expect_audio(bot_world.member, frequency=440, within=0.2)
