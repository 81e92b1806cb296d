"""The bot's voice connection: signalling only.

:meth:`VoiceManager.join` emits ``voice:join`` and waits for
the ``voice:livekit-token`` credentials of that channel; the returned
:class:`VoiceConnection` carries the media ``url``, ``token`` and ``e2ee_key``
that a media stack (a LiveKit-style SFU client) needs to send and receive
audio. Media transport itself is out of scope for this library.

One connection per bot: joining another channel leaves the current one first;
joining the same channel returns the existing connection. The presence and
voice guide (``docs/guides/presence-voice.rst``) shows a join from a bot.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as _FutureTimeout
from typing import TYPE_CHECKING, Any

from .. import _defaults, endpoints
from ..errors import ServiceError, ServiceTimeoutError

if TYPE_CHECKING:
    from ..state.connection import ConnectionState

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

    __slots__ = ("_manager", "channel_id", "url", "token", "e2ee_key", "_open")

    def __init__(self, manager: VoiceManager, channel_id: str, data: dict[str, Any]) -> None:
        self._manager = manager
        self.channel_id = channel_id
        self.url: str | None = data.get("url") if isinstance(data.get("url"), str) else None
        self.token: str | None = data.get("token") if isinstance(data.get("token"), str) else None
        key = data.get("e2eeKey")
        self.e2ee_key: str | None = key if isinstance(key, str) else None
        self._open = True

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
        """Leave the channel (``voice:leave``); idempotent."""
        self._manager._leave(self)

    def __repr__(self) -> str:
        state = "open" if self._open else "closed"
        return f"<VoiceConnection channel_id={self.channel_id!r} {state}>"


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

    def join(self, channel_id: str, *, timeout: float = _defaults.VOICE_JOIN_TIMEOUT_S) -> VoiceConnection:
        """Join a voice channel and return its connection once the service sends its credentials.

        Emits ``voice:join`` and waits for the credentials. Joining the channel
        already joined returns the existing connection; joining another one
        leaves the current one first.

        Args:
            channel_id: A channel whose ``type`` is ``"VOICE"`` (taken from
                ``client.channels.cache``, else fetched).
            timeout: Seconds to wait for the credentials.

        Returns:
            The :class:`VoiceConnection`.

        Raises:
            TypeError: ``channel_id`` is not a str.
            ValueError: Empty id, or the channel is not a voice channel (nothing sent).
            ServiceAuthError: The socket is not connected.
            ServiceTimeoutError: No credentials within ``timeout`` (e.g. no
                ``CONNECT`` permission: the service refuses silently), or the
                socket stayed busy with another write for 10 s.
            ServiceError: The client was destroyed, or the socket lost, while joining.
        """
        if not isinstance(channel_id, str):
            raise TypeError(f"channel_id must be a str, got {type(channel_id).__name__}")
        if not channel_id:
            raise ValueError("channel_id must be a non-empty str")
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
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
                data = fut.result(timeout)
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
        return connection

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

    def _on_disconnect(self, reason: str) -> None:
        """The socket was lost (reader thread): the service dropped us from voice.

        The open connection is marked closed (the service removes a
        disconnected socket from its voice room, so after ``reconnect`` the bot
        joins again if it wants to). A pending join is not rejected because of
        the cut (once the client is ready, a network cut fails no pending call by
        itself, since the socket reconnects): it ends by its own timeout.
        """
        with self._lock:
            connection, self._connection = self._connection, None
            if connection is not None:
                connection._open = False
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
