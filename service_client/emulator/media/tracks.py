"""The media server's audio tracks: what a simulated user says, what is forwarded, what is kept.

:class:`SpeechTrack` plays queued PCM (a tone, a WAV file) in real time and silence between;
:class:`ForwardTrack` hands a subscriber the frames a publisher sent; :class:`Recording` keeps
the last seconds a participant published, as 48 kHz mono 16-bit PCM.
"""

from __future__ import annotations

import array
import asyncio
import fractions
import io
import math
import time
import wave
from collections import deque
from typing import Any

import av
import numpy as np
from aiortc import rtcrtpreceiver
from aiortc.mediastreams import MediaStreamError, MediaStreamTrack

__all__ = ["SAMPLE_RATE", "ForwardTrack", "Recording", "SpeechTrack", "TappedFrame", "dominant_frequency",
           "install_tap", "tone_pcm", "wav_pcm"]

#: The media server's sample rate, Hz (Opus's).
SAMPLE_RATE = 48000
#: Samples per 20 ms frame at :data:`SAMPLE_RATE`.
FRAME_SAMPLES = 960
#: Frames a subscriber's queue holds before the oldest is dropped (1 s).
FORWARD_QUEUE_FRAMES = 50
#: Longest speech queued for one simulated user, seconds.
MAX_SPEECH_S = 120.0
_TIME_BASE = fractions.Fraction(1, SAMPLE_RATE)


def tone_pcm(frequency: float, seconds: float, *, amplitude: float = 0.5) -> bytes:
    """A sine tone as 48 kHz mono 16-bit little-endian PCM."""
    count = int(seconds * SAMPLE_RATE)
    step = 2 * math.pi * frequency / SAMPLE_RATE
    peak = int(32767 * amplitude)
    return array.array("h", (int(peak * math.sin(step * i)) for i in range(count))).tobytes()


def wav_pcm(data: bytes) -> bytes:
    """A WAV file's audio as 48 kHz mono 16-bit PCM (decoded and resampled by PyAV).

    Raises:
        ValueError: Not audio PyAV can read.
    """
    try:
        container = av.open(io.BytesIO(data), mode="r")
    except (av.FFmpegError, OSError) as exc:
        raise ValueError(f"not a readable audio file: {exc}") from exc
    out = bytearray()
    try:
        if not container.streams.audio:
            raise ValueError("the file holds no audio stream")
        resampler = av.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
        for frame in container.decode(audio=0):
            for piece in resampler.resample(frame):
                out += bytes(piece.planes[0])[:piece.samples * 2]
            if len(out) > MAX_SPEECH_S * SAMPLE_RATE * 2:
                raise ValueError(f"the file is longer than {MAX_SPEECH_S:.0f} s")
        for piece in resampler.resample(None):
            out += bytes(piece.planes[0])[:piece.samples * 2]
    except av.FFmpegError as exc:
        raise ValueError(f"not a readable audio file: {exc}") from exc
    finally:
        container.close()
    return bytes(out)


def mono_samples(frame: Any) -> array.array[int]:
    """A decoded s16 frame's first channel as an ``array('h')``."""
    channels = len(frame.layout.channels)
    raw = array.array("h")
    raw.frombytes(bytes(frame.planes[0])[:frame.samples * channels * 2])
    return raw[::channels] if channels > 1 else raw


def dominant_frequency(pcm: bytes, sample_rate: int = SAMPLE_RATE) -> float:
    """The frequency (Hz) of the highest peak of the spectrum of 16-bit mono PCM; 0.0 for silence.

    Uses numpy's FFT (numpy comes with the voice extra) over a Hann window.
    """
    samples = np.frombuffer(pcm[:len(pcm) - len(pcm) % 2], dtype="<i2").astype(np.float64)
    if samples.size < 64 or not np.any(samples):
        return 0.0
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(samples.size)))
    spectrum[0] = 0.0
    return float(np.argmax(spectrum) * sample_rate / samples.size)


class TappedFrame:
    """One received Opus frame as it came (``payload``, RTP ``timestamp``) and decoded (``frames``,
    empty when it does not decode: a frame encrypted end to end, say)."""

    __slots__ = ("payload", "timestamp", "frames")

    def __init__(self, payload: bytes, timestamp: int, frames: list[Any]) -> None:
        self.payload = payload
        self.timestamp = timestamp
        self.frames = frames


class _TappingDecoder:
    """An Opus decoder of aiortc's receiver that hands on the encoded frame with the decoded ones."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def decode(self, encoded_frame: Any) -> list[TappedFrame]:
        """Decode one encoded frame with the wrapped decoder, keeping the encoded bytes beside each frame."""
        try:
            frames = self.inner.decode(encoded_frame)
        except av.FFmpegError:
            frames = []
        return [TappedFrame(bytes(encoded_frame.data), int(encoded_frame.timestamp), frames)]


def install_tap() -> None:
    """Make aiortc's receivers hand out :class:`TappedFrame` objects for Opus (once per process).

    aiortc decodes what it receives on a thread of its own and offers no hook for the encoded
    frames; the media server needs both: the encoded frames to forward untouched (so frames
    encrypted end to end cross it), the decoded ones to record. Its receivers look their
    decoder up by name in their module, so the lookup is wrapped there. Only this fixture's
    process is affected; the client library never uses aiortc.
    """
    original = getattr(rtcrtpreceiver, "get_decoder")  # noqa: B009 - not in the module's __all__
    if getattr(original, "_service_client_tap", False):
        return

    def get_decoder(codec: Any) -> Any:
        """aiortc's decoder for ``codec``, wrapped to tap Opus audio."""
        decoder = original(codec)
        return _TappingDecoder(decoder) if codec.mimeType.lower() == "audio/opus" else decoder

    get_decoder._service_client_tap = True  # type: ignore[attr-defined]
    setattr(rtcrtpreceiver, "get_decoder", get_decoder)  # noqa: B010 - not in the module's __all__


class SpeechTrack(MediaStreamTrack):
    """A simulated user's microphone: queued PCM in real time, silence when there is none.

    Args:
        track_id: The track's id (its ``TR_`` sid).
    """

    kind = "audio"

    def __init__(self, track_id: str) -> None:
        super().__init__()
        self._id = track_id
        self._pending = bytearray()
        self._start: float | None = None
        self._sent = 0

    def say(self, pcm: bytes) -> float:
        """Queue 48 kHz mono 16-bit PCM after what is queued; returns the seconds queued in all."""
        room = int(MAX_SPEECH_S * SAMPLE_RATE * 2) - len(self._pending)
        self._pending += pcm[:max(room, 0) - max(room, 0) % 2]
        return len(self._pending) / (SAMPLE_RATE * 2)

    def silence(self) -> None:
        """Drop what is queued."""
        self._pending.clear()

    async def recv(self) -> av.AudioFrame:
        """The next 20 ms frame, when its time comes."""
        if self.readyState != "live":
            raise MediaStreamError
        if self._start is None:
            self._start = time.monotonic()
        wait = self._start + self._sent / SAMPLE_RATE - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        chunk = bytes(self._pending[:FRAME_SAMPLES * 2])
        del self._pending[:FRAME_SAMPLES * 2]
        chunk += bytes(FRAME_SAMPLES * 2 - len(chunk))
        frame = av.AudioFrame(format="s16", layout="mono", samples=FRAME_SAMPLES)
        frame.planes[0].update(chunk)
        frame.sample_rate = SAMPLE_RATE
        frame.pts = self._sent
        frame.time_base = _TIME_BASE
        self._sent += FRAME_SAMPLES
        return frame


class ForwardTrack(MediaStreamTrack):
    """One subscriber's copy of a published track: Opus packets forwarded as they came, or
    decoded frames (a simulated user's speech) that aiortc encodes.

    Args:
        track_id: The published track's ``TR_`` sid (the id the subscriber sees).
    """

    kind = "audio"

    def __init__(self, track_id: str) -> None:
        super().__init__()
        self._id = track_id
        self._queue: deque[av.AudioFrame | av.Packet[Any]] = deque(maxlen=FORWARD_QUEUE_FRAMES)
        self._ready = asyncio.Event()
        self._pts = 0

    def push(self, frame: av.AudioFrame | av.Packet[Any]) -> None:
        """Queue a frame or packet to send (the oldest is dropped past one second); ignored once ended."""
        if self.readyState != "live":
            return
        self._queue.append(frame)
        self._ready.set()

    async def recv(self) -> av.AudioFrame | av.Packet[Any]:
        """The next packet as it came, or the next frame with this track's own timestamps."""
        # An ended copy never raises: aiortc would then clear its sender's track and reuse that
        # transceiver for the next track added, changing the stream of an m-line the subscriber
        # already receives on, which LiveKit's SDK does not take for a new track. It waits
        # instead, until the peer connection closes (its sender's task is cancelled).
        while not self._queue or self.readyState != "live":
            if self.readyState != "live":
                self._queue.clear()
            self._ready.clear()
            await self._ready.wait()
        frame = self._queue.popleft()
        if isinstance(frame, av.Packet):
            return frame
        frame.pts = self._pts
        frame.time_base = _TIME_BASE
        self._pts += frame.samples
        return frame

    def stop(self) -> None:
        """End the track: nothing more is sent (its transceiver stays, idle)."""
        super().stop()
        self._queue.clear()


class Recording:
    """The last ``seconds`` of what one participant published, as 48 kHz mono 16-bit PCM.

    Attributes:
        total_samples: Samples received since the recording began.
    """

    def __init__(self, seconds: float = 30.0) -> None:
        self._limit = int(seconds * SAMPLE_RATE) * 2
        self._pcm = bytearray()
        self.total_samples = 0

    def add(self, samples: array.array[int]) -> None:
        """Append samples (the oldest are dropped past the limit)."""
        self._pcm += samples.tobytes()
        self.total_samples += len(samples)
        extra = len(self._pcm) - self._limit
        if extra > 0:
            del self._pcm[:extra]

    def last(self, seconds: float | None = None) -> bytes:
        """The last ``seconds`` kept (all when None)."""
        if seconds is None:
            return bytes(self._pcm)
        count = int(seconds * SAMPLE_RATE) * 2
        return bytes(self._pcm[-count:]) if count > 0 else b""

    def wav(self) -> bytes:
        """What is kept, as a WAV file."""
        out = io.BytesIO()
        with wave.open(out, "wb") as writer:
            writer.setnchannels(1)
            writer.setsampwidth(2)
            writer.setframerate(SAMPLE_RATE)
            writer.writeframes(bytes(self._pcm))
        return out.getvalue()
