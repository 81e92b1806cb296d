"""The emulator's LiveKit-compatible media server, a test fixture (needs the ``voice`` extra).

With ``aiortc`` and ``livekit-protocol`` installed (``pip install 'service_client[voice]'``),
the emulator answers LiveKit's signalling at ``ws://<emulator>/rtc`` and the
``voice:livekit-token`` credentials it sends point there: bots and users in a voice channel hear
each other. :mod:`.server` says what it forwards, what it re-encodes and what it does not do.
Without the extra the emulator sends placeholder credentials, as before.
"""

from __future__ import annotations

import importlib.util
from typing import Any

__all__ = ["media_available", "media_server"]


def media_available() -> bool:
    """Whether the voice extra's server side (aiortc, livekit-protocol, PyAV) is installed."""
    return all(importlib.util.find_spec(name) is not None for name in ("aiortc", "av", "numpy")) and \
        importlib.util.find_spec("livekit") is not None and _has_protocol()


def _has_protocol() -> bool:
    try:
        return importlib.util.find_spec("livekit.protocol") is not None
    except ImportError:
        return False


def media_server() -> Any:
    """A new :class:`~.server.MediaServer`, or None when the voice extra is not installed."""
    try:
        from .server import MediaServer
    except ImportError:
        return None
    return MediaServer()
