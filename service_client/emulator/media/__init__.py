"""The emulator's LiveKit-compatible media server, a test fixture (needs the ``voice`` extra).

With ``aiortc`` and ``livekit-protocol`` installed (``pip install 'service_client[voice]'``),
the emulator answers LiveKit's signalling at ``ws://<emulator>/rtc`` and the
``voice:livekit-token`` credentials it sends point there: bots and users in a voice channel hear
each other. :mod:`.server` says what it forwards, what it re-encodes and what it does not do.
Without the extra the emulator sends placeholder credentials, as before.
"""

from __future__ import annotations

from typing import Any

__all__ = ["media_server"]


def media_server() -> Any:
    """A new :class:`~.server.MediaServer`, or None when the voice extra is not installed."""
    try:
        from .server import MediaServer
    except ImportError:
        return None
    return MediaServer()
