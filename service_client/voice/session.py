"""A voice channel's media: one LiveKit room connection, what it plays and what it hears.

:class:`MediaSession` runs LiveKit's SDK (``livekit.rtc``) on a :class:`~.loop.MediaLoop`. It
publishes one microphone track (48 kHz mono) that :class:`~.playback.AudioPlayback` writes
to, subscribes to every other participant's audio, and hands each 20 ms frame it decodes to
``on_frame`` (the client's ``audio_frame`` event) and to the running recorders.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from ..errors import VoiceConnectionError
from . import _deps
from .frames import AudioFrame
from .loop import MediaLoop
from .playback import AudioPlayback
from .recorder import AudioRecorder
from .sources import SAMPLE_RATE, PreparedSource

__all__ = ["CLOSE_TIMEOUT_S", "MediaSession"]

log = logging.getLogger("service_client.voice")

#: Bound on closing the media (leave, destroy), seconds.
CLOSE_TIMEOUT_S = 2.0
#: Milliseconds of played audio queued ahead of the network (pause and stop drop at most this).
QUEUE_MS = 200
#: Bound on one signalling attempt of the SDK, seconds (it retries within the join timeout).
ATTEMPT_TIMEOUT_S = 5.0
#: Frame length of received audio, milliseconds.
RECEIVE_FRAME_MS = 20
#: Name of the published track.
TRACK_NAME = "service_client-audio"


class MediaSession:
    """The media of one voice connection. Thread-safe; every method blocks a bounded time.

    Args:
        channel_id: The voice channel (for error messages).
        on_frame: Called on the media thread with each received :class:`AudioFrame`; it must
            not block (the client hands the frame to its worker pool).
        on_playback: Called with ``(playback, "start" | "pause" | "resume" | "finish")`` on the
            playback's thread.
        on_lost: Called once on the media thread when the media ends without :meth:`close`
            (the server closed it, the network failed), with the reason.
    """

    def __init__(self, channel_id: str, *, on_frame: Callable[[AudioFrame], None],
                 on_playback: Callable[[AudioPlayback, str], None],
                 on_lost: Callable[[str], None]) -> None:
        self.channel_id = channel_id
        self._rtc = _deps.load_rtc()
        _deps.load_av()
        self._on_frame = on_frame
        self._on_playback = on_playback
        self._on_lost = on_lost
        self._loop: MediaLoop | None = None
        self._room: Any = None
        self._source: Any = None
        self._readers: dict[str, asyncio.Task[None]] = {}
        self._lock = threading.Lock()  # guards _playback, _recorders, _closed
        self._playback: AudioPlayback | None = None
        self._recorders: list[AudioRecorder] = []
        self._closed = False
        self._connected = threading.Event()
        #: Monotonic seconds the connect took (set once connected).
        self.connect_seconds: float | None = None

    # ------------------------------------------------------------------ lifecycle
    @property
    def connected(self) -> bool:
        """Whether the media is connected and not closed."""
        return self._connected.is_set() and not self._closed

    def connect(self, url: str, token: str, e2ee_key: str | None, timeout: float) -> None:
        """Connect to the media server and publish the playback track, within ``timeout`` seconds.

        With ``e2ee_key`` the media is encrypted with it (LiveKit's shared-key encryption), and
        the track's encryption is checked to be active before this returns (before anything
        can be played).

        Raises:
            VoiceConnectionError: The connection failed or timed out, or ``e2ee_key`` was given
                and the SDK does not encrypt the published track; nothing is left running.
        """
        started = time.monotonic()
        self._loop = MediaLoop()
        try:
            self._loop.call(self._connect(url, token, e2ee_key, timeout), timeout)
        except BaseException as exc:
            self._abandon()
            cause = "timed out" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
            raise VoiceConnectionError(
                f"voice media of channel {self.channel_id} did not connect ({cause}) at {url}",
                channel_id=self.channel_id, cause=cause) from exc
        self.connect_seconds = time.monotonic() - started
        self._connected.set()

    async def _connect(self, url: str, token: str, e2ee_key: str | None, timeout: float) -> None:
        rtc = self._rtc
        loop = asyncio.get_running_loop()
        room = rtc.Room(loop=loop)
        room.on("track_subscribed", self._on_track_subscribed)
        room.on("track_unsubscribed", self._on_track_unsubscribed)
        room.on("disconnected", self._on_disconnected)
        # single_peer_connection=False: LiveKit's /rtc signalling, which every LiveKit server
        # speaks, without first trying /rtc/v1 (a round trip and two warnings where it is missing).
        options = rtc.RoomOptions(auto_subscribe=True, connect_timeout=max(0.5, min(timeout, ATTEMPT_TIMEOUT_S)),
                                  single_peer_connection=False)
        if e2ee_key:
            options.encryption = rtc.E2EEOptions(
                key_provider_options=rtc.KeyProviderOptions(shared_key=e2ee_key.encode("utf-8")))
        self._room = room
        await room.connect(url, token, options)
        self._source = rtc.AudioSource(SAMPLE_RATE, 1, queue_size_ms=QUEUE_MS, loop=loop)
        track = rtc.LocalAudioTrack.create_audio_track(TRACK_NAME, self._source)
        publication = await room.local_participant.publish_track(
            track, rtc.TrackPublishOptions(source=rtc.TrackSource.SOURCE_MICROPHONE))
        if e2ee_key:
            self._require_encryption(room, publication.sid)

    @staticmethod
    def _require_encryption(room: Any, track_sid: str) -> None:
        """Check that the SDK encrypts the published track, before anything is played on it.

        The SDK attaches an enabled frame cryptor to the track before ``publish_track``
        returns (no audio is captured before then); an SDK that did not would send audio in
        the clear, so the connect fails instead.

        Raises:
            RuntimeError: No enabled frame cryptor for ``track_sid``.
        """
        cryptors = room.e2ee_manager.frame_cryptors()
        if not any(c.track_sid == track_sid and c.enabled for c in cryptors):
            raise RuntimeError("end-to-end encryption was asked for but is not active on the published track")

    def _abandon(self) -> None:
        """After a failed connect: drop the room and stop the loop (its thread joined)."""
        self._closed = True
        loop = self._loop
        if loop is None:
            return
        if loop.running:
            try:
                loop.call(self._disconnect(), CLOSE_TIMEOUT_S / 2)
            except Exception as exc:  # noqa: BLE001 - closing anyway
                log.debug("voice media: disconnect after a failed connect: %s", exc)
        loop.stop(CLOSE_TIMEOUT_S / 2)

    async def _disconnect(self) -> None:
        for task in list(self._readers.values()):
            task.cancel()
        self._readers.clear()
        room, self._room = self._room, None
        if room is not None:
            try:
                await asyncio.wait_for(room.disconnect(), CLOSE_TIMEOUT_S / 2)
            except Exception as exc:  # noqa: BLE001 - the room is dropped anyway
                log.debug("voice media: disconnect: %s", exc)
        source, self._source = self._source, None
        if source is not None:
            await source.aclose()

    def close(self, *, wait: bool = True) -> None:
        """Stop playback and recorders, leave the room and stop the media thread. Idempotent.

        Args:
            wait: Block until done (at most :data:`CLOSE_TIMEOUT_S`); False only starts it
                (the reader thread must not wait).
        """
        with self._lock:
            if self._closed:
                already = True
            else:
                already = False
                self._closed = True
            playback, self._playback = self._playback, None
            recorders, self._recorders = self._recorders, []
        if playback is not None:
            playback._halt()  # never waits here: close(wait=False) runs on the socket's reader thread
        for recorder in recorders:
            recorder.stop()
        loop = self._loop
        if already or loop is None or not loop.running:
            return
        deadline = time.monotonic() + CLOSE_TIMEOUT_S
        try:
            future = loop.submit(self._disconnect())
        except RuntimeError:
            return
        future.add_done_callback(lambda _f: loop.stop())
        if wait:
            try:
                future.result(max(deadline - time.monotonic() - 0.2, 0.1))
            except Exception as exc:  # noqa: BLE001 - closing anyway
                log.debug("voice media: close: %s", exc)
            loop.stop(max(deadline - time.monotonic(), 0.1))
        if playback is not None and wait:
            playback.wait(max(deadline - time.monotonic(), 0.0))

    # ------------------------------------------------------------------ receiving
    def _on_track_subscribed(self, track: Any, publication: Any, participant: Any) -> None:
        if track.kind != self._rtc.TrackKind.KIND_AUDIO or self._closed:
            return
        task = asyncio.ensure_future(self._read(track, participant.identity))
        self._readers[publication.sid] = task

    def _on_track_unsubscribed(self, track: Any, publication: Any, participant: Any) -> None:
        task = self._readers.pop(publication.sid, None)
        if task is not None:
            task.cancel()

    async def _read(self, track: Any, user_id: str) -> None:
        stream = self._rtc.AudioStream(track, sample_rate=SAMPLE_RATE, num_channels=1,
                                       frame_size_ms=RECEIVE_FRAME_MS)
        try:
            async for event in stream:
                got = event.frame
                frame = AudioFrame(user_id, bytes(got.data), got.sample_rate, got.num_channels)
                try:
                    self._on_frame(frame)
                except Exception:  # noqa: BLE001 - the sink is ours; keep reading
                    log.exception("voice media: handing on an audio frame failed")
                for recorder in list(self._recorders):
                    try:
                        recorder.write(frame)
                    except Exception:  # a full disk, say: that recorder stops, the others go on
                        log.exception("voice media: recording %s failed; that recorder stops", user_id)
                        recorder.stop()
        finally:
            await stream.aclose()

    def _on_disconnected(self, reason: Any = None) -> None:
        if self._closed:
            return
        name = str(reason)
        try:
            name = self._rtc.DisconnectReason.Name(reason)
        except Exception:  # noqa: BLE001 - an unknown reason is shown as it is
            pass
        log.warning("voice media of channel %s lost: %s", self.channel_id, name)
        self._connected.clear()
        try:
            self._on_lost(name)
        except Exception:  # noqa: BLE001 - the callback is ours
            log.exception("voice media: handling the loss failed")

    # ------------------------------------------------------------------ playing
    def _require_open(self) -> MediaLoop:
        loop = self._loop
        if self._closed or loop is None or not self._connected.is_set():
            raise VoiceConnectionError(f"the voice media of channel {self.channel_id} is closed",
                                       channel_id=self.channel_id, cause="closed")
        return loop

    def play(self, source: PreparedSource, volume: float) -> AudioPlayback:
        """Play a prepared source; a playback already running is stopped first.

        Raises:
            VoiceConnectionError: The media is closed (the source is closed too).
        """
        try:
            self._require_open()
        except VoiceConnectionError:
            source.close()
            raise
        playback = AudioPlayback(self, source, volume, self._on_playback)
        with self._lock:
            previous, self._playback = self._playback, playback
        if previous is not None:
            previous.stop()
            previous.wait(CLOSE_TIMEOUT_S)
        playback.start()
        return playback

    @property
    def playback(self) -> AudioPlayback | None:
        """The playback started last, while it plays; else None."""
        current = self._playback
        return current if current is not None and not current.done else None

    def record(self, target: Any) -> AudioRecorder:
        """Start writing each speaker's audio to a WAV file (see :class:`AudioRecorder`).

        Raises:
            TypeError, ValueError: A bad target (see :class:`AudioRecorder`).
            VoiceConnectionError: The media is closed.
        """
        self._require_open()
        recorder = AudioRecorder(target)
        with self._lock:
            self._recorders.append(recorder)
        return recorder

    # PlaybackSink, called from a playback's thread
    def capture(self, pcm: bytes, timeout: float) -> None:
        """Queue 48 kHz mono 16-bit PCM, waiting while the queue is full."""
        loop = self._require_open()
        source = self._source
        frame = self._rtc.AudioFrame(pcm, SAMPLE_RATE, 1, len(pcm) // 2)
        loop.call(source.capture_frame(frame), timeout)

    def queued_seconds(self) -> float:
        """Seconds of played audio queued and not yet sent."""
        source = self._source
        return float(source.queued_duration) if source is not None else 0.0

    def clear(self) -> None:
        """Drop the queued audio (pause, stop)."""
        source, loop = self._source, self._loop
        if source is not None and loop is not None and loop.running:
            try:
                loop.loop.call_soon_threadsafe(source.clear_queue)
            except RuntimeError:  # the loop closed meanwhile
                pass

    def wait_playout(self, timeout: float) -> None:
        """Wait until the queued audio has been sent."""
        loop = self._require_open()
        source = self._source

        async def playout() -> None:
            await source.wait_for_playout()

        loop.call(playout(), timeout)

    def __repr__(self) -> str:
        return f"<MediaSession channel_id={self.channel_id!r} {'connected' if self.connected else 'closed'}>"
