"""Retry policy: which answers are retried, the backoff, and ``Retry-After``.

Pure policy: no I/O, no sleeping (the session schedules the waits). Only
429, 502, 503 and 504 answers are retried (with network failures and
timeouts, which the session classifies); malformed requests never are. A
``Retry-After`` is honoured as sent, in seconds or as an HTTP-date, never
capped at the backoff's 30 s.
"""

from __future__ import annotations

import math
import re
import time
from datetime import timezone

from .._defaults import BACKOFF_BASE_S, BACKOFF_CAP_S

__all__ = [
    "RETRY_STATUSES",
    "backoff_delay",
    "parse_retry_after",
]

#: HTTP statuses that are retried while attempts remain. Only a 429 blocks its
#: bucket; 502, 503 and 504 are retried without blocking it.
RETRY_STATUSES = frozenset({429, 502, 503, 504})

#: A delay in seconds: digits with an optional fraction and sign.
_SECONDS_RE = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$")


def backoff_delay(retry_index: int, *, base: float = BACKOFF_BASE_S, cap: float = BACKOFF_CAP_S) -> float:
    """The computed delay before a retry when the service gave no ``Retry-After``.

    500 ms times 2 to the power of the retry index, capped at 30 s (0.5, 1, 2,
    4 ... s by default).

    Args:
        retry_index: 0 for the first retry, 1 for the second, and so on.
        base: Seconds of the first delay.
        cap: Longest delay, seconds.

    Returns:
        ``min(cap, base * 2 ** retry_index)`` in seconds.

    Raises:
        TypeError: ``retry_index`` is not an int.
        ValueError: ``retry_index`` is negative, or ``base``/``cap`` is negative
            or not finite.
    """
    if isinstance(retry_index, bool) or not isinstance(retry_index, int):
        raise TypeError(f"retry_index must be an int, not {type(retry_index).__name__}")
    if retry_index < 0:
        raise ValueError(f"retry_index must be >= 0, got {retry_index}")
    for name, value in (("base", base), ("cap", cap)):
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be a finite number >= 0 seconds, got {value!r}")
    # 2.0 ** 64 already exceeds any sensible cap; bounding the exponent avoids OverflowError.
    return float(min(cap, base * 2.0 ** min(retry_index, 64)))


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Parse a ``Retry-After`` header into seconds to wait.

    A ``Retry-After`` of delay-seconds, integer or fraction (such as ``1.5``),
    or an HTTP-date; never capped here.

    Args:
        value: The header value, or None when the header is absent.
        now: The current wall-clock time, seconds since the epoch (UTC); for
            an HTTP-date only. Defaults to :func:`time.time`.

    Returns:
        Seconds to wait (``0.0`` for a negative delay or a date in the past),
        or None when the header is absent, empty or unparseable.
    """
    if value is None or not isinstance(value, str):
        return None
    text = value.strip()
    if not text:
        return None
    if _SECONDS_RE.match(text):
        return max(0.0, float(text))
    import email.utils  # HTTP dates are rare: keep the email package out of the import

    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)  # noqa: UP017 - Python 3.10 has no datetime.UTC
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)
