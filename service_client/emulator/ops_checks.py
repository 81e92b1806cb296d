"""Field limits and validators of the emulator's state changes (a bad field is a 400, never stored)."""

from __future__ import annotations

import re
from typing import Any

from .store import (
    BadRequest,
)

#: Longest accepted name or id string, characters (longer is a 400, never stored).
MAX_NAME_CHARS = 10_000
#: Longest URL (icon, image, avatar), characters.
MAX_URL_CHARS = 2048
#: Longest channel description, nickname, ban reason, characters.
MAX_DESCRIPTION_CHARS = 1024
MAX_NICKNAME_CHARS = 64
MAX_REASON_CHARS = 512
#: Largest integer accepted for counts and durations (``maxAge``, ``maxUses``, ``position``).
MAX_INT = 2**31 - 1
COLOR_RE = re.compile(r"#[0-9a-fA-F]{6}")
#: A custom emoji name: 2 to 32 letters, digits or underscores.
EMOJI_NAME_RE = re.compile(r"[A-Za-z0-9_]{2,32}")
#: Most custom emojis per server, webhooks per channel; longest webhook (or override user) name.
MAX_EMOJIS = 200
MAX_WEBHOOKS = 15
MAX_WEBHOOK_NAME_CHARS = 80


class Conflict(Exception):
    """The change clashes with existing state (mapped to HTTP 409)."""


def need_str(value: Any, name: str, *, allow_empty: bool = False, limit: int = MAX_NAME_CHARS) -> str:
    """``value`` when it is a string of at most ``limit`` characters, not blank unless ``allow_empty``.

    Raises:
        BadRequest: Not a string, blank, or too long (``name`` names the field).
    """
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        raise BadRequest(f"{name} must be a non-empty string")
    if len(value) > limit:
        raise BadRequest(f"{name} is too long")
    return value


def opt_str(value: Any, name: str, limit: int) -> str | None:
    """``value`` when it is a string of at most ``limit`` characters, or None (null clears).

    Raises:
        BadRequest: Neither, or too long (``name`` names the field).
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadRequest(f"{name} must be a string or null")
    if len(value) > limit:
        raise BadRequest(f"{name} is too long")
    return value


def opt_int(value: Any, name: str) -> int | None:
    """``value`` when it is an integer in 0..:data:`MAX_INT` (not a bool), or None.

    Raises:
        BadRequest: Anything else (``name`` names the field).
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_INT:
        raise BadRequest(f"{name} must be a non-negative integer")
    return value


def check_color(value: Any) -> str | None:
    """``value`` when it is a role colour ``"#rrggbb"`` (hex digits), or None.

    Raises:
        BadRequest: Anything else.
    """
    if value is None:
        return None
    if not isinstance(value, str) or not COLOR_RE.fullmatch(value):
        raise BadRequest("color must be \"#rrggbb\" or null")
    return value
