"""Playing one source into the voice media: :class:`AudioPlayback`."""

from __future__ import annotations

import itertools
import logging
import math
import threading
from collections.abc import Callable
from typing import Any, Protocol

from . import _deps
from .sources import FRAME_SAMPLES, SAMPLE_RATE, PreparedSource

__all__ = ["AudioPlayback", "MAX_VOLUME", "check_volume"]

log = logging.getLogger("service_client.voice")

#: Largest volume factor (twice as loud; samples are clipped).
MAX_VOLUME = 2.0
#: 20 ms frames handed to the media at once (100 ms: five times fewer hops to its thread).
CHUNK_FRAMES = 5
#: Seconds one frame may wait for room in the media's queue before playback fails.
CAPTURE_TIMEOUT_S = 5.0
#: Seconds :meth:`AudioPlayback.stop` waits for the playback to end.
STOP_WAIT_S = 2.0
#: Seconds a paused playback checks again whether it was stopped.
PAUSE_POLL_S = 0.5
_ids = itertools.count(1)


def check_volume(volume: Any) -> float:
    """``volume`` as a float in 0..:data:`MAX_VOLUME`.

    Raises:
        TypeError: Not a number. ValueError: NaN, negative or above :data:`MAX_VOLUME`.
    """
    if isinstance(volume, bool) or not isinstance(volume, (int, float)):
        raise TypeError(f"volume must be a number, got {type(volume).__name__}")
    if math.isnan(volume) or not 0.0 <= volume <= MAX_VOLUME:
        raise ValueError(f"volume must be in 0..{MAX_VOLUME:g}, got {volume!r}")
    return float(volume)


class PlaybackSink(Protocol):
    """What a playback writes to (the media session)."""

    def capture(self, pcm: bytes, timeout: float) -> None:
        """Queue 48 kHz mono 16-bit PCM (whole 20 ms frames), waiting for room."""

    def queued_seconds(self) -> float:
        """Seconds of audio queued and not yet sent."""

    def clear(self) -> None:
        """Drop the queued audio."""

    def wait_playout(self, timeout: float) -> None:
        """Wait until the queued audio is sent."""


class AudioPlayback:
    """One source playing into a voice channel, on its own thread ``service_client-voice-player-<n>``.

    Made by :meth:`VoiceConnection.play`. Thread-safe. The bot's speaking flag is on while it
    plays (off while paused). When it ends (the source is over, :meth:`stop`, another ``play``,
    leaving the channel, or an error) :attr:`done` turns True and the ``playback_finish`` event
    is emitted with it.

    Attributes:
        source: What is played (its description).
        error: What ended the playback early (a source that failed to decode, the media
            lost), else None.
    """

    def __init__(self, sink: PlaybackSink, source: PreparedSource, volume: float,
                 on_state: Callable[[AudioPlayback, str], None]) -> None:
        self.source = source.description
        self.error: BaseException | None = None
        self._sink = sink
        self._prepared = source
        self._volume = volume
        self._on_state = on_state
        self._samples = 0
        self._skipped = 0.0  # seconds handed on but dropped by pauses
        self._frozen: float | None = None  # the position while paused
        self._stopped = threading.Event()
        self._resumed = threading.Event()
        self._resumed.set()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"service_client-voice-player-{next(_ids)}",
                                        daemon=True)

    def start(self) -> None:
        """Start playing (once)."""
        self._thread.start()

    # ------------------------------------------------------------------ controls
    def pause(self) -> None:
        """Pause (what is queued is dropped, at most 0.2 s); the speaking flag turns off. Idempotent."""
        if self._resumed.is_set() and not self._done.is_set():
            self._resumed.clear()
            self._frozen = self.position  # what was heard; the queued rest is dropped
            self._sink.clear()
            self._on_state(self, "pause")

    def resume(self) -> None:
        """Resume a paused playback where it stopped. Idempotent."""
        if not self._resumed.is_set() and not self._done.is_set():
            frozen, self._frozen = self._frozen, None
            if frozen is not None:  # audio handed on before the pause but dropped: not played
                self._skipped = max(self._samples / SAMPLE_RATE - frozen, 0.0)
            self._resumed.set()
            self._on_state(self, "resume")

    def stop(self) -> None:
        """End the playback now (queued audio dropped) and return once it has ended (:attr:`done`
        True, ``player_finish`` emitted), at most :data:`STOP_WAIT_S` seconds later. Idempotent."""
        self._halt()
        if threading.current_thread() is not self._thread and self._thread.is_alive():
            self._done.wait(STOP_WAIT_S)

    def _halt(self) -> None:
        """Ask the playback to end, without waiting (the socket's reader thread closes media so)."""
        if not self._stopped.is_set():
            self._stopped.set()
            self._resumed.set()
            self._sink.clear()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the playback ends (``timeout`` seconds at most; None: no bound).

        Returns:
            True when it has ended, False when ``timeout`` passed first.
        """
        return self._done.wait(timeout)

    @property
    def done(self) -> bool:
        """Whether the playback has ended."""
        return self._done.is_set()

    @property
    def paused(self) -> bool:
        """Whether it is paused."""
        return not self._resumed.is_set() and not self._done.is_set()

    @property
    def volume(self) -> float:
        """The volume factor, 0.0 (silent) to 2.0; 1.0 plays the source as it is. Takes effect
        within 0.3 s.

        Raises (on set):
            TypeError: Not a number. ValueError: NaN, negative or above 2.0.
        """
        return self._volume

    @volume.setter
    def volume(self, value: float) -> None:
        """Set the gain (1.0 as recorded); a bad value raises as :func:`check_volume` says."""
        self._volume = check_volume(value)

    @property
    def position(self) -> float:
        """Seconds of the source played so far (sent to the media, not counting what is queued)."""
        frozen = self._frozen
        if frozen is not None:
            return frozen
        return max(self._samples / SAMPLE_RATE - self._skipped - self._sink.queued_seconds(), 0.0)

    # ------------------------------------------------------------------ the thread
    def _scaled(self, pcm: bytes) -> bytes:
        volume = self._volume
        if volume == 1.0:
            return pcm
        np = _deps.load_numpy()
        samples = np.frombuffer(pcm, dtype="<i2").astype(np.float32) * volume
        return bytes(np.clip(samples, -32768, 32767).astype("<i2").tobytes())

    def _send(self, chunk: list[bytes]) -> bool:
        """Send frames (after a pause, if paused); False when stopped."""
        while not self._resumed.wait(PAUSE_POLL_S):
            pass
        if self._stopped.is_set():
            return False
        self._sink.capture(self._scaled(b"".join(chunk)), CAPTURE_TIMEOUT_S)
        self._samples += FRAME_SAMPLES * len(chunk)
        return True

    def _run(self) -> None:
        self._on_state(self, "start")
        try:
            chunk: list[bytes] = []
            for pcm in self._prepared.frames():
                chunk.append(pcm)
                if len(chunk) < CHUNK_FRAMES:
                    continue
                if not self._send(chunk):
                    break
                chunk = []
            else:
                if chunk:
                    self._send(chunk)
            if not self._stopped.is_set():
                self._sink.wait_playout(CAPTURE_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - a playback ends, it never takes its thread down silently
            if self._stopped.is_set():  # stopped while handing audio on (leave, destroy): not a failure
                log.debug("playback of %s stopped: %s: %s", self.source, type(exc).__name__, exc)
            else:
                self.error = exc
                log.warning("playback of %s ended: %s: %s", self.source, type(exc).__name__, exc)
        finally:
            try:
                self._prepared.close()
            except Exception as exc:  # noqa: BLE001 - closing anyway
                log.debug("closing %s: %s", self.source, exc)
            try:
                self._on_state(self, "finish")  # before done: whoever waits sees player_finish emitted
            finally:
                self._done.set()

    def __repr__(self) -> str:
        state = "done" if self.done else "paused" if self.paused else "playing"
        return f"<AudioPlayback {self.source} {state} position={self.position:.2f}s volume={self._volume:g}>"
