"""The bot's voice connection: signalling here, media in :mod:`service_client.voice`.

:meth:`VoiceManager.join` emits ``voice:join`` and waits for the ``voice:livekit-token``
credentials of that channel (the media ``url``, ``token`` and ``e2ee_key``); with the voice
extra installed (``pip install 'service_client[voice]'``) it then connects the media through
LiveKit's SDK, so that :meth:`VoiceConnection.play` and :meth:`VoiceConnection.record` work and
the ``audio_frame`` event brings what the others say. Without the extra the connection is
signalling only, as before, and ``play``/``record`` raise :class:`ImportError` naming the extra.

One connection per bot: joining another channel leaves the current one first;
joining the same channel returns the existing connection. The presence and
voice guide (``docs/guides/presence-voice.rst``) shows a join from a bot.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as _FutureTimeout
from typing import TYPE_CHECKING, Any

from .. import _defaults, endpoints
from ..errors import ServiceError, ServiceTimeoutError, VoiceConnectionError
from ..voice import _deps
from ..voice.playback import AudioPlayback, check_volume
from ..voice.recorder import AudioRecorder
from ..voice.sources import prepare_source

if TYPE_CHECKING:
    from ..state.connection import ConnectionState
    from ..voice.frames import AudioFrame
    from ..voice.session import MediaSession

__all__ = ["VoiceConnection", "VoiceManager"]

log = logging.getLogger("service_client.voice")


class VoiceConnection:
    """The bot's membership of one voice channel, with its media credentials.

    Thread-safe. State changes are fire-and-forget ``voice:state`` emits.

    Attributes:
        channel_id: The voice channel's id.
        url: The media server URL to connect a media stack to.
        token: The media access token (a LiveKit-style JWT); not the bot token,
            but still kept out of ``repr``.
        e2ee_key: Base64 shared end-to-end encryption key, or None.
    """

    __slots__ = ("_manager", "channel_id", "url", "token", "e2ee_key", "_open", "_media")

    def __init__(self, manager: VoiceManager, channel_id: str, data: dict[str, Any]) -> None:
        self._manager = manager
        self.channel_id = channel_id
        self.url: str | None = data.get("url") if isinstance(data.get("url"), str) else None
        self.token: str | None = data.get("token") if isinstance(data.get("token"), str) else None
        key = data.get("e2eeKey")
        self.e2ee_key: str | None = key if isinstance(key, str) else None
        self._open = True
        self._media: MediaSession | None = None

    @property
    def connected(self) -> bool:
        """False once left (by :meth:`leave`, another join, a server leave event or destroy)."""
        return self._open

    def _state(self, **fields: Any) -> None:
        if not self._open:
            raise ServiceError(f"the voice connection to {self.channel_id} is closed")
        self._manager._state.emit(endpoints.EMIT_VOICE_STATE, fields)

    def set_muted(self, muted: bool) -> None:
        """Mute or unmute (``voice:state {muted}``; fire-and-forget).

        Raises:
            TypeError: ``muted`` is not a bool.
            ServiceError: The connection is closed.
            ServiceAuthError: The socket is not connected.
            ServiceTimeoutError: The socket stayed busy with another write for 10 s.
        """
        self._state(muted=_bool("muted", muted))

    def set_deafened(self, deafened: bool) -> None:
        """Deafen or undeafen (``voice:state {deafened}``; fire-and-forget).

        Raises:
            TypeError: ``deafened`` is not a bool.
            ServiceError: The connection is closed.
            ServiceAuthError: The socket is not connected.
            ServiceTimeoutError: The socket stayed busy with another write for 10 s.
        """
        self._state(deafened=_bool("deafened", deafened))

    def set_speaking(self, speaking: bool) -> None:
        """Flag speaking on or off (``voice:state {speaking}``; fire-and-forget).

        Raises:
            TypeError: ``speaking`` is not a bool.
            ServiceError: The connection is closed.
            ServiceAuthError: The socket is not connected.
            ServiceTimeoutError: The socket stayed busy with another write for 10 s.
        """
        self._state(speaking=_bool("speaking", speaking))

    def leave(self) -> None:
        """Leave the channel: the media closes (within 2 s), then ``voice:leave``; idempotent."""
        self._manager._leave(self)

    # ------------------------------------------------------------------ media
    @property
    def media_connected(self) -> bool:
        """Whether the voice media is connected (False without the voice extra, after leaving,
        or once the media was lost)."""
        media = self._media
        return media is not None and media.connected

    def _session(self) -> MediaSession:
        media = self._media
        if media is None:
            if not _deps.available():
                raise ImportError(_deps.EXTRA_HINT)
            raise VoiceConnectionError(f"the voice connection to {self.channel_id} has no media "
                                       "(joined with media=False, or left)", channel_id=self.channel_id,
                                       cause="no media")
        return media

    def play(self, source: Any, *, volume: float = 1.0, sample_rate: int | None = None,
             channels: int | None = None) -> AudioPlayback:
        """Play audio into the channel; returns at once with the running :class:`AudioPlayback`.

        The source is decoded by PyAV (FFmpeg in its wheel; nothing on ``PATH`` needed),
        resampled to 48 kHz mono, and sent in real time. A playback already running is stopped
        first (its ``player_finish`` event comes before this one's ``player_start``): keep a queue
        of your own to play one source after another (``samples/music_bot.py`` does). The bot's
        speaking flag (``voice:state {speaking}``) is on while it plays.

        Args:
            source: A path or URL of anything FFmpeg reads; a binary file object; raw 16-bit
                signed little-endian PCM (``bytes``) with ``sample_rate`` and ``channels``; or an
                iterable of such PCM frames (a generator, say), with ``sample_rate`` and
                ``channels``.
            volume: Factor 0.0 (silent) to 2.0; 1.0 plays the source as it is.
            sample_rate: PCM sources only: their rate, Hz (8000..192000).
            channels: PCM sources only: 1 or 2.

        Returns:
            The playback: ``wait(timeout)``, ``pause()``, ``resume()``, ``stop()``, ``volume``,
            ``position`` (seconds), ``done``.

        Raises:
            TypeError: ``source`` is not one of the kinds above, or ``volume`` not a number.
            ValueError: A missing or unreadable file, a file without audio, PCM without its
                format, a bad rate, channel count or volume (nothing plays).
            ImportError: The voice extra is not installed.
            VoiceConnectionError: The media is closed (left, lost, or joined with ``media=False``).
        """
        level = check_volume(volume)
        media = self._session()
        prepared = prepare_source(source, sample_rate=sample_rate, channels=channels)
        return media.play(prepared, level)

    @property
    def playback(self) -> AudioPlayback | None:
        """The running playback, or None."""
        media = self._media
        return media.playback if media is not None else None

    def pause(self) -> None:
        """Pause the running playback, if any."""
        playback = self.playback
        if playback is not None:
            playback.pause()

    def resume(self) -> None:
        """Resume the paused playback, if any."""
        playback = self.playback
        if playback is not None:
            playback.resume()

    def stop_playing(self) -> None:
        """Stop the running playback, if any."""
        playback = self.playback
        if playback is not None:
            playback.stop()

    def set_volume(self, volume: float) -> None:
        """Set the running playback's volume (0.0..2.0), if any.

        Raises:
            TypeError: Not a number. ValueError: NaN, negative or above 2.0.
        """
        level = check_volume(volume)
        playback = self.playback
        if playback is not None:
            playback.volume = level

    def record(self, path_or_dir: Any) -> AudioRecorder:
        """Write what each speaker says to its own WAV file (48 kHz, 16-bit) until the returned
        recorder's ``stop()`` or leaving the channel.

        Args:
            path_or_dir: A directory (created if missing), giving ``<dir>/<user id>.wav``; or a
                path ending in ``.wav``, giving ``<stem>-<user id>.wav`` beside it.

        Returns:
            The :class:`AudioRecorder` (``stop()``, ``files``).

        Raises:
            TypeError, ValueError: A bad path (an existing file that is not a ``.wav`` path).
            ImportError: The voice extra is not installed.
            VoiceConnectionError: The media is closed.
        """
        return self._session().record(path_or_dir)

    def __repr__(self) -> str:
        state = "open" if self._open else "closed"
        media = " media" if self.media_connected else ""
        return f"<VoiceConnection channel_id={self.channel_id!r} {state}{media}>"


def _bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return value


class VoiceManager:
    """``client.voice``: the bot's single voice connection: ``join``, ``leave``, ``connection``.

    Thread-safe.
    """

    def __init__(self, state: ConnectionState) -> None:
        self._state = state
        self._lock = threading.Lock()  # guards _connection and _pending
        self._connection: VoiceConnection | None = None
        self._pending: dict[str, Future[dict[str, Any]]] = {}

    @property
    def connection(self) -> VoiceConnection | None:
        """The open connection, or None."""
        return self._connection

    def join(self, channel_id: str, *, timeout: float = _defaults.VOICE_JOIN_TIMEOUT_S,
             media: bool | None = None) -> VoiceConnection:
        """Join a voice channel and return its connection once its media is connected.

        Emits ``voice:join`` and waits for the credentials, then (with the voice extra) connects
        the media with them: the call returns when the bot can play and hear. Joining the
        channel already joined returns the existing connection; joining another one leaves
        the current one first.

        Args:
            channel_id: A channel whose ``type`` is ``"VOICE"`` (taken from
                ``client.channels.cache``, else fetched).
            timeout: Seconds for the whole join, credentials and media.
            media: True: connect the media (the voice extra is required); False: signalling
                only; None (default): connect the media when the voice extra is installed and
                the service sent a media URL.

        Returns:
            The :class:`VoiceConnection`.

        Raises:
            TypeError: ``channel_id`` is not a str, or ``media`` not a bool or None.
            ValueError: Empty id, or the channel is not a voice channel (nothing sent).
            ImportError: ``media=True`` without the voice extra (nothing sent).
            ServiceAuthError: The socket is not connected.
            ServiceTimeoutError: No credentials within ``timeout`` (e.g. no
                ``CONNECT`` permission: the service refuses silently), or the
                socket stayed busy with another write for 10 s.
            VoiceConnectionError: The media did not connect within ``timeout`` (the message
                names the cause), or ``media=True`` and the service sent no media URL; the
                channel is left again and nothing is left running.
            ServiceError: The client was destroyed, or the socket lost, while joining.
        """
        if not isinstance(channel_id, str):
            raise TypeError(f"channel_id must be a str, got {type(channel_id).__name__}")
        if not channel_id:
            raise ValueError("channel_id must be a non-empty str")
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        if media is not None and not isinstance(media, bool):
            raise TypeError(f"media must be a bool or None, got {type(media).__name__}")
        if media and not _deps.available():
            raise ImportError(_deps.EXTRA_HINT)
        deadline = time.monotonic() + timeout
        current = self._connection
        if current is not None and current.channel_id == channel_id and current.connected:
            return current
        channel = self._state.channels.cache.get(channel_id)
        if channel is None:
            channel = self._state.channels.fetch(channel_id)
        if getattr(channel, "type", None) != "VOICE":
            raise ValueError(f"channel {channel_id} is not a voice channel (type {getattr(channel, 'type', None)!r})")
        self._state.require_gateway()
        if current is not None:
            self._leave(current)
        fut: Future[dict[str, Any]] = Future()
        with self._lock:
            old = self._pending.pop(channel_id, None)
            self._pending[channel_id] = fut
        if old is not None and not old.done():
            fut = old  # two concurrent joins of one channel share the answer
            with self._lock:
                self._pending[channel_id] = fut
        try:
            self._state.emit(endpoints.EMIT_VOICE_JOIN, {"channelPublicId": channel_id})
            try:
                data = fut.result(max(deadline - time.monotonic(), 0.001))
            except _FutureTimeout:
                raise ServiceTimeoutError(
                    f"Timed out joining voice channel {channel_id} after {int(timeout * 1000)}ms."
                ) from None
        finally:
            with self._lock:
                if self._pending.get(channel_id) is fut:
                    del self._pending[channel_id]
        with self._lock:
            existing = self._connection
            if existing is not None and existing.channel_id == channel_id and existing.connected:
                return existing
            connection = VoiceConnection(self, channel_id, data)
            self._connection = connection
        if media is False:
            return connection
        if connection.url is None or connection.token is None:
            if media:
                self._leave(connection)
                raise VoiceConnectionError(f"voice channel {channel_id}: the service sent no media URL or token",
                                           channel_id=channel_id, cause="no media credentials")
            return connection
        if not _deps.available():
            log.info("voice channel %s joined without media: %s", channel_id, _deps.EXTRA_HINT)
            return connection
        try:
            self._connect_media(connection, deadline)
        except BaseException:
            self._leave(connection)
            raise
        return connection

    def _connect_media(self, connection: VoiceConnection, deadline: float) -> None:
        remaining = deadline - time.monotonic()
        channel_id = connection.channel_id
        if remaining <= 0:
            raise VoiceConnectionError(f"voice media of channel {channel_id} did not connect (no time left "
                                       "after the signalling)", channel_id=channel_id, cause="timed out")
        state = self._state
        audio_key = f"voice-audio:{channel_id}:"
        player_key = f"voice-player:{channel_id}"

        def on_frame(frame: AudioFrame) -> None:
            """Dispatch ``audio_frame`` in order per speaker."""
            state.dispatch("audio_frame", frame, key=audio_key + frame.user_id)

        def on_playback(playback: AudioPlayback, what: str) -> None:
            """Follow a playback's start, pause, resume and finish (speaking flag, player events)."""
            if what in ("start", "resume", "pause", "finish") and connection._open:
                try:
                    connection.set_speaking(what in ("start", "resume"))
                except ServiceError as exc:  # the socket is down: the flag is lost with it
                    log.debug("speaking flag not sent: %s", exc)
            if what == "start":
                state.dispatch("player_start", playback, key=player_key)
            elif what == "finish":
                state.dispatch("player_finish", playback, key=player_key)

        def on_lost(reason: str) -> None:
            """Dispatch ``voice_media_lost`` with the reason."""
            state.dispatch("voice_media_lost", connection, reason, key=player_key)

        from ..voice.session import MediaSession  # import time: asyncio loads when a bot first joins voice

        session = MediaSession(channel_id, on_frame=on_frame, on_playback=on_playback, on_lost=on_lost)
        connection._media = session
        session.connect(connection.url or "", connection.token or "", connection.e2ee_key, remaining)
        if not connection._open:  # left meanwhile (a leave event, destroy)
            session.close()
            raise VoiceConnectionError(f"voice channel {channel_id} was left while its media connected",
                                       channel_id=channel_id, cause="left")

    def leave(self) -> None:
        """Leave the current voice channel, if any (``voice:leave``, no argument)."""
        connection = self._connection
        if connection is not None:
            self._leave(connection)

    def _leave(self, connection: VoiceConnection, emit: Callable[..., None] | None = None) -> None:
        with self._lock:
            if not connection._open:
                return
            connection._open = False
            if self._connection is connection:
                self._connection = None
        media = connection._media
        if media is not None:
            media.close()
        try:
            (emit or self._state.emit)(endpoints.EMIT_VOICE_LEAVE)
        except ServiceError as exc:  # not connected: the service drops us anyway
            log.debug("voice:leave not sent: %s", exc)

    # -- called by the wire handlers on the reader thread ----------------------

    def _on_event(self, event: str, data: Any) -> None:
        if not isinstance(data, dict):
            return
        channel_id = data.get("channelPublicId")
        if event == endpoints.ON_VOICE_LIVEKIT_TOKEN:
            with self._lock:
                fut = self._pending.get(channel_id) if isinstance(channel_id, str) else None
            if fut is not None and not fut.done():
                try:
                    fut.set_result(data)
                except Exception:  # noqa: BLE001 - completed concurrently
                    pass
        elif event == endpoints.ON_VOICE_USER_LEFT:
            user = self._state.user
            if user is not None and data.get("userPublicId") == user.id:
                with self._lock:
                    connection = self._connection
                    if connection is not None and connection.channel_id == channel_id:
                        connection._open = False
                        self._connection = None
                    else:
                        connection = None
                if connection is not None and connection._media is not None:
                    connection._media.close(wait=False)  # the reader thread never waits

    def _on_disconnect(self, reason: str) -> None:
        """The socket was lost (reader thread): the service dropped us from voice.

        The open connection is marked closed and its media closed (the service removes a
        disconnected socket from its voice room and the media server drops it, so after
        ``reconnect`` the bot joins again if it wants to). A pending join is not rejected
        because of the cut (once the client is ready, a network cut fails no pending call by
        itself, since the socket reconnects): it ends by its own timeout.
        """
        with self._lock:
            connection, self._connection = self._connection, None
            if connection is not None:
                connection._open = False
        if connection is not None and connection._media is not None:
            connection._media.close(wait=False)  # the reader thread never waits
        log.debug("voice connection closed by socket loss (%s)", reason)

    def _shutdown(self, emit: Callable[..., None] | None = None) -> None:
        """destroy(): leave voice first (through ``emit``, the socket being detached), fail pending joins."""
        connection = self._connection
        if connection is not None:
            self._leave(connection, emit)
        with self._lock:
            pending, self._pending = self._pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(ServiceError("the client was destroyed while joining voice"))

    def __repr__(self) -> str:
        return f"<VoiceManager connection={self._connection!r}>"
