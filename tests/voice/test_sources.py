"""Voice media without a media server: what ``play`` accepts, the missing extra, import cost.

These run in the default suite (no network namespace); the ones that decode need PyAV and
skip, saying so, without the voice extra.
"""

from __future__ import annotations

import array
import io
import math
import pathlib
import pickle
import subprocess
import sys
import wave

import pytest

from service_client import AudioFrame, ServiceError, VoiceConnectionError
from service_client.client.voice import VoiceConnection
from service_client.voice import _deps
from service_client.voice.playback import check_volume
from service_client.voice.recorder import AudioRecorder
from service_client.voice.sources import FRAME_BYTES, prepare_source


def _wav(path: pathlib.Path, *, rate: int = 22050, channels: int = 2, seconds: float = 0.5, hz: float = 440) -> pathlib.Path:
    samples = array.array("h")
    for i in range(int(rate * seconds)):
        value = int(10000 * math.sin(2 * math.pi * hz * i / rate))
        samples.extend([value] * channels)
    with wave.open(str(path), "wb") as writer:
        writer.setnchannels(channels)
        writer.setsampwidth(2)
        writer.setframerate(rate)
        writer.writeframes(samples.tobytes())
    return path


def test_import_service_client_loads_no_media_library() -> None:
    code = ("import sys, service_client; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('livekit', 'av', 'numpy', 'aiortc')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_without_the_extra_play_and_record_name_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_deps, "available", lambda: False)
    connection = VoiceConnection.__new__(VoiceConnection)
    connection.channel_id = "c1"
    connection._media = None
    with pytest.raises(ImportError, match=r"service_client\[voice\]"):
        connection.play(b"\0\0", sample_rate=48000, channels=1)
    with pytest.raises(ImportError, match=r"service_client\[voice\]"):
        connection.record("somewhere")


def test_a_missing_library_is_reported_with_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "av", None)  # import av now raises ImportError
    with pytest.raises(ImportError, match=r"pip install 'service_client\[voice\]'"):
        _deps.load_av()


def test_voice_connection_error_is_a_service_error_and_pickles() -> None:
    error = VoiceConnectionError("voice media of channel c1 did not connect (timed out)", channel_id="c1",
                                 cause="timed out")
    assert isinstance(error, ServiceError)
    again = pickle.loads(pickle.dumps(error))
    assert (str(again), again.channel_id, again.cause) == (str(error), "c1", "timed out")


@pytest.mark.parametrize("source", [42, 4.2, None, object(), {"a": 1}])
def test_a_source_of_the_wrong_type_is_a_type_error(source: object) -> None:
    with pytest.raises(TypeError, match="source must be"):
        prepare_source(source)


def test_a_text_file_object_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="binary mode"):
        prepare_source(io.StringIO("not audio"))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({}, "needs sample_rate= and channels="),
    ({"sample_rate": 48000}, "needs sample_rate= and channels="),
    ({"sample_rate": 100, "channels": 1}, "sample_rate must be"),
    ({"sample_rate": 48000, "channels": 3}, "channels must be 1 or 2"),
    ({"sample_rate": True, "channels": 1}, "sample_rate must be"),
])
def test_pcm_without_a_good_format_is_a_value_error(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        prepare_source(b"\0\0\0\0", **kwargs)


def test_a_partial_sample_is_a_value_error() -> None:
    pytest.importorskip("av", reason="needs the voice extra (PyAV)")
    with pytest.raises(ValueError, match="whole number"):
        prepare_source(b"\0\0\0", sample_rate=48000, channels=1)


@pytest.mark.parametrize("volume", [-0.1, 2.5, float("nan")])
def test_a_bad_volume_is_a_value_error(volume: float) -> None:
    with pytest.raises(ValueError, match="volume"):
        check_volume(volume)
    with pytest.raises(TypeError):
        check_volume("loud")


def test_a_missing_file_and_a_file_without_audio_are_value_errors(tmp_path: pathlib.Path) -> None:
    pytest.importorskip("av", reason="needs the voice extra (PyAV)")
    with pytest.raises(ValueError, match="no such audio file"):
        prepare_source(tmp_path / "missing.mp3")
    junk = tmp_path / "junk.mp3"
    junk.write_bytes(b"this is not audio at all" * 10)
    with pytest.raises(ValueError, match="could not be opened as audio|holds no audio"):
        prepare_source(junk)


def test_a_wav_at_22_khz_stereo_decodes_to_48_khz_mono_frames(tmp_path: pathlib.Path) -> None:
    pytest.importorskip("av", reason="needs the voice extra (PyAV)")
    from service_client.emulator.media.tracks import dominant_frequency

    path = _wav(tmp_path / "tone.wav")
    with path.open("rb") as file:
        for source in (path, str(path), file):
            frames = list(prepare_source(source).frames())
            assert {len(f) for f in frames} == {FRAME_BYTES}
            assert len(frames) == pytest.approx(25, abs=1)  # 0.5 s in 20 ms frames
            assert dominant_frequency(b"".join(frames)) == pytest.approx(440, abs=5)


def test_pcm_bytes_and_an_iterable_of_pcm_frames_are_resampled(tmp_path: pathlib.Path) -> None:
    pytest.importorskip("av", reason="needs the voice extra (PyAV)")
    from service_client.emulator.media.tracks import dominant_frequency

    rate = 16000
    pcm = array.array("h", (int(9000 * math.sin(2 * math.pi * 440 * i / rate)) for i in range(rate))).tobytes()
    whole = b"".join(prepare_source(pcm, sample_rate=rate, channels=1).frames())
    pieces = b"".join(prepare_source((pcm[i:i + 640] for i in range(0, len(pcm), 640)),
                                     sample_rate=rate, channels=1).frames())
    for out in (whole, pieces):
        assert len(out) == pytest.approx(96000, abs=FRAME_BYTES)  # 1 s at 48 kHz
        assert dominant_frequency(out) == pytest.approx(440, abs=5)
    bad = prepare_source(iter([b"\0\0", "text"]), sample_rate=rate, channels=1)
    with pytest.raises(ValueError, match="PCM frame must be bytes"):
        list(bad.frames())


def test_the_recorder_names_files_by_speaker(tmp_path: pathlib.Path) -> None:
    recorder = AudioRecorder(tmp_path / "calls" / "meeting.wav")
    recorder.write(AudioFrame("u1", b"\1\0" * 960, 48000, 1))
    recorder.write(AudioFrame("u/2", b"\2\0" * 960, 48000, 1))
    files = recorder.stop()
    assert files == {"u1": tmp_path / "calls" / "meeting-u1.wav", "u/2": tmp_path / "calls" / "meeting-u_2.wav"}
    recorder.write(AudioFrame("u1", b"\1\0" * 960, 48000, 1))  # after stop: ignored
    with wave.open(str(files["u1"]), "rb") as reader:
        assert reader.getnframes() == 960
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        AudioRecorder(tmp_path / "file")
    with pytest.raises(TypeError):
        AudioRecorder(42)
