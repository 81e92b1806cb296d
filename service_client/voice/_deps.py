"""The voice extra's libraries (LiveKit's SDK, PyAV, numpy), imported on first use.

``import service_client`` never loads them: they come with ``pip install
'service_client[voice]'`` and load when a bot first connects voice media or plays audio.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

__all__ = ["EXTRA_HINT", "available", "load_av", "load_numpy", "load_rtc"]

#: What the error says when the extra is missing.
EXTRA_HINT = "voice media needs the voice extra: pip install 'service_client[voice]'"


def available() -> bool:
    """Whether the voice extra's libraries are installed (nothing is imported)."""
    return all(importlib.util.find_spec(name) is not None for name in ("livekit", "av", "numpy"))


def _load(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ImportError(f"{EXTRA_HINT} ({exc})") from exc


def load_rtc() -> ModuleType:
    """``livekit.rtc``.

    Raises:
        ImportError: The voice extra is not installed (the message names it).
    """
    return _load("livekit.rtc")


def load_av() -> ModuleType:
    """PyAV (``av``).

    Raises:
        ImportError: The voice extra is not installed (the message names it).
    """
    return _load("av")


def load_numpy() -> ModuleType:
    """numpy.

    Raises:
        ImportError: The voice extra is not installed (the message names it).
    """
    return _load("numpy")
