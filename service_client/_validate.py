"""Argument checks shared by the whole client: each names the argument it refuses.

Pure: no I/O. Every check returns the value it accepted, so a call site reads
``server_id = check_id(server_id, "server_id")``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["check_cache_flag", "check_id", "check_name"]


def check_id(value: Any, name: str) -> str:
    """``value`` when it is a non-empty str.

    Raises:
        TypeError: ``value`` is not a str (the message names ``name``).
        ValueError: ``value`` is empty.
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    if not value:
        raise ValueError(f"{name} must not be empty")
    return value


def check_name(value: Any, name: str) -> str:
    """``value`` when it is a str with at least one character that is not whitespace (a channel,
    category or role name). The name is sent as given (not stripped).

    Raises:
        TypeError: ``value`` is not a str (the message names ``name``).
        ValueError: ``value`` is empty or only whitespace.
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{name} must not be empty or only whitespace, got {value!r}")
    return value


def check_cache_flag(cache: Any) -> bool:
    """``cache`` when it is a bool, else TypeError naming ``cache``."""
    if not isinstance(cache, bool):
        raise TypeError(f"cache must be a bool, got {type(cache).__name__}")
    return cache
