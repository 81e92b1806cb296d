"""What :meth:`VoiceConnection.play` accepts, checked at the call site, and its decoding.

A source becomes :class:`PreparedSource`: an iterator of 20 ms frames of 48 kHz mono 16-bit PCM,
decoded and resampled by PyAV (FFmpeg inside its wheel: no ``ffmpeg`` on ``PATH`` needed).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

from . import _deps

__all__ = ["FRAME_BYTES", "FRAME_SAMPLES", "SAMPLE_RATE", "PreparedSource", "prepare_source"]

#: The media's sample rate, Hz.
SAMPLE_RATE = 48000
#: Samples in one 20 ms frame at :data:`SAMPLE_RATE`.
FRAME_SAMPLES = 960
#: Bytes in one 20 ms mono 16-bit frame.
FRAME_BYTES = FRAME_SAMPLES * 2
#: Seconds PyAV waits to open or read a URL.
URL_TIMEOUT_S = 10.0
_URL_SCHEMES = ("http://", "https://", "rtmp://", "rtsp://", "file:", "ftp://", "tcp://", "udp://")


class PreparedSource:
    """A checked source: :meth:`frames` decodes it (once), :meth:`close` releases it.

    Attributes:
        description: What it is, for logs (a path, ``"<bytes>"``...).
    """

    def __init__(self, description: str, opener: Any, *, container: Any = None) -> None:
        self.description = description
        self._opener = opener
        self._container = container

    def frames(self) -> Iterator[bytes]:
        """20 ms frames of 48 kHz mono 16-bit PCM (the last padded with silence); the source is
        closed when they end (a file object given by the caller stays open).

        Raises:
            ValueError: The audio cannot be decoded (a corrupt file, a bad PCM frame).
        """
        pending = bytearray()
        try:
            for chunk in self._opener():
                pending += chunk
                while len(pending) >= FRAME_BYTES:
                    yield bytes(pending[:FRAME_BYTES])
                    del pending[:FRAME_BYTES]
            if pending:
                yield bytes(pending) + bytes(FRAME_BYTES - len(pending))
        finally:
            self.close()

    def close(self) -> None:
        """Close the file or stream behind the source (idempotent)."""
        container, self._container = self._container, None
        if container is not None:
            container.close()

    def __repr__(self) -> str:
        return f"<PreparedSource {self.description}>"


def _resampled(av: Any, frames: Iterable[Any]) -> Iterator[bytes]:
    resampler = av.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
    try:
        for frame in frames:
            frame.pts = None
            for out in resampler.resample(frame):
                yield bytes(out.planes[0])[:out.samples * 2]
        for out in resampler.resample(None):
            yield bytes(out.planes[0])[:out.samples * 2]
    except av.FFmpegError as exc:
        raise ValueError(f"the audio could not be decoded: {exc}") from exc


def _open_container(av: Any, target: Any, description: str) -> Any:
    try:
        if isinstance(target, str) and target.startswith(_URL_SCHEMES):
            container = av.open(target, mode="r", timeout=URL_TIMEOUT_S)
        else:
            container = av.open(target, mode="r")
    except (av.FFmpegError, OSError) as exc:
        raise ValueError(f"source {description} could not be opened as audio: {exc}") from exc
    if not container.streams.audio:
        container.close()
        raise ValueError(f"source {description} holds no audio stream")
    return container


def _check_format(sample_rate: Any, channels: Any, kind: str) -> tuple[int, int]:
    if sample_rate is None or channels is None:
        raise ValueError(f"{kind} needs sample_rate= and channels= (16-bit signed little-endian PCM)")
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, int) or not 8000 <= sample_rate <= 192000:
        raise ValueError(f"sample_rate must be an int in 8000..192000 Hz, got {sample_rate!r}")
    if isinstance(channels, bool) or channels not in (1, 2):
        raise ValueError(f"channels must be 1 or 2, got {channels!r}")
    return sample_rate, channels


def _pcm_frames(av: Any, chunks: Iterable[Any], sample_rate: int, channels: int) -> Iterator[Any]:
    layout = "mono" if channels == 1 else "stereo"
    width = 2 * channels
    for chunk in chunks:
        if not isinstance(chunk, (bytes, bytearray, memoryview)):
            raise ValueError(f"a PCM frame must be bytes, got {type(chunk).__name__}")
        data = bytes(chunk)
        if len(data) % width:
            raise ValueError(f"a PCM frame of {len(data)} bytes is not a whole number of {channels}-channel 16-bit samples")
        if not data:
            continue
        frame = av.AudioFrame(format="s16", layout=layout, samples=len(data) // width)
        frame.planes[0].update(data)
        frame.sample_rate = sample_rate
        yield frame


def prepare_source(source: Any, *, sample_rate: int | None = None, channels: int | None = None) -> PreparedSource:
    """Check a source and open it, so a bad one fails here, before anything plays.

    Args:
        source: A path (str or ``os.PathLike``) or URL of anything FFmpeg reads; a binary file
            object; raw 16-bit signed little-endian PCM (``bytes``, ``bytearray``,
            ``memoryview``); or an iterable of such PCM frames (a generator, say).
        sample_rate: For PCM sources: their rate, Hz.
        channels: For PCM sources: 1 or 2 (interleaved).

    Returns:
        The prepared source.

    Raises:
        TypeError: Not one of the kinds above (a text file object, an int...).
        ValueError: A file that does not exist or holds no audio, PCM without its format or
            with a partial sample, a bad rate or channel count.
        ImportError: The voice extra is not installed.
    """
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not isinstance(path, str) or not path:
            raise TypeError("a source path must be a non-empty str path")
        av = _deps.load_av()
        if not path.startswith(_URL_SCHEMES) and not os.path.isfile(path):
            raise ValueError(f"no such audio file: {path!r}")
        container = _open_container(av, path, repr(path))
        return PreparedSource(repr(path), lambda: _resampled(av, container.decode(audio=0)), container=container)
    if isinstance(source, (bytes, bytearray, memoryview)):
        rate, count = _check_format(sample_rate, channels, "raw PCM")
        data = bytes(source)
        if len(data) % (2 * count):
            raise ValueError(f"{len(data)} bytes of PCM is not a whole number of {count}-channel 16-bit samples")
        av = _deps.load_av()
        return PreparedSource(f"<{len(data)} bytes of PCM>", lambda: _resampled(av, _pcm_frames(av, [data], rate, count)))
    if hasattr(source, "read"):
        try:
            probe = source.read(0)
        except Exception as exc:  # noqa: BLE001 - an unreadable object is a bad argument
            raise TypeError(f"the file object cannot be read: {exc}") from exc
        if not isinstance(probe, bytes):
            raise TypeError("a file object source must be opened in binary mode ('rb')")
        av = _deps.load_av()
        container = _open_container(av, source, "<file object>")
        return PreparedSource("<file object>", lambda: _resampled(av, container.decode(audio=0)), container=container)
    if isinstance(source, Iterable) and not isinstance(source, (str, dict)):
        rate, count = _check_format(sample_rate, channels, "an iterable of PCM frames")
        av = _deps.load_av()
        return PreparedSource("<PCM frames>", lambda: _resampled(av, _pcm_frames(av, source, rate, count)))
    raise TypeError("source must be a path or URL, a binary file object, PCM bytes or an iterable of PCM "
                    f"frames, got {type(source).__name__}")
