"""Retry policy: which answers are retried, how often, the backoff, and ``Retry-After``.

Pure policy: no I/O, no sleeping (the session schedules the waits). A
:class:`RetryPolicy` is an immutable value, like urllib3's ``Retry``: a client takes one
(``Client(retry=...)``) and every REST call of the client follows it; a call may ask for
a different number of retries (``api_call(max_retries=...)``), which is the same policy
with that count. The answers retried are the policy's :attr:`~RetryPolicy.statuses`
(:data:`RETRY_STATUSES` by default, the one place they are written), with network
failures and timeouts; malformed requests never are. A ``Retry-After`` is honoured as
sent, in seconds or as an HTTP-date, never capped at the backoff's cap.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import time
from collections.abc import Iterable
from datetime import timezone
from typing import Any

from .._defaults import BACKOFF_BASE_S, BACKOFF_CAP_S, DEFAULT_MAX_RETRIES

__all__ = [
    "DEFAULT_RETRY",
    "RETRY_STATUSES",
    "RetryPolicy",
    "backoff_delay",
    "parse_retry_after",
    "resolve_retry",
]

#: The HTTP statuses retried by default while attempts remain: 429, 502, 503 and 504.
#: Only a 429 blocks its bucket; the others are retried without blocking it.
RETRY_STATUSES = frozenset({429, 502, 503, 504})


def _seconds(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number of seconds, not {type(value).__name__}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0 seconds, got {value!r}")
    return float(value)


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    """How the REST calls of a client are retried: an immutable value (like urllib3's ``Retry``).

    A call makes at most ``1 + max_retries`` attempts. It is retried after a network
    failure, a timeout, or an answer whose status is in :attr:`statuses`, after the
    answer's ``Retry-After`` when it has one, else after :meth:`backoff`. A 429 always
    blocks its rate-limit bucket for that wait and, once no retry is left (or 429 is not
    in :attr:`statuses`), ends its call with :class:`~service_client.RateLimitError`;
    any other status not retried ends it with :class:`~service_client.ServiceAPIError`.

    Example::

        from service_client import Client, RetryPolicy

        client = Client(retry=RetryPolicy(max_retries=5, jitter=0.25))
        fewer = client.retry.replace(max_retries=1)

    Attributes:
        max_retries: Retries after the first attempt, >= 0 (3: at most 4 attempts).
        statuses: The HTTP statuses retried (:data:`RETRY_STATUSES` by default); any
            iterable of ints from 100 to 599, kept as a frozenset.
        backoff_base: Seconds before the first retry without ``Retry-After`` (0.5).
        backoff_cap: Longest computed backoff, seconds (30).
        jitter: Up to this many seconds, drawn uniformly at random, added to each computed
            backoff (0: none), so that clients refused together do not retry together.
        respect_retry_after: Wait the ``Retry-After`` an answer gives (True, the default);
            False waits the backoff instead, never ends a call for a ``Retry-After`` over
            ``max_retry_after``, and leaves :attr:`RateLimitError.retry_after
            <service_client.RateLimitError.retry_after>` None.

    Raises:
        TypeError: A field has the wrong type (a bool is no count or number).
        ValueError: ``max_retries`` < 0, a delay negative or not finite, or a status
            outside 100-599.
    """

    max_retries: int = DEFAULT_MAX_RETRIES
    statuses: frozenset[int] = RETRY_STATUSES
    backoff_base: float = BACKOFF_BASE_S
    backoff_cap: float = BACKOFF_CAP_S
    jitter: float = 0.0
    respect_retry_after: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.max_retries, bool) or not isinstance(self.max_retries, int):
            raise TypeError(f"max_retries must be an int, not {type(self.max_retries).__name__}")
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries}")
        statuses: Any = self.statuses
        if isinstance(statuses, (str, bytes)) or not isinstance(statuses, Iterable):
            raise TypeError(f"statuses must be an iterable of ints, not {type(statuses).__name__}")
        codes = frozenset(statuses)
        for code in codes:
            if isinstance(code, bool) or not isinstance(code, int):
                raise TypeError(f"statuses must hold ints, not {type(code).__name__}")
            if not 100 <= code <= 599:
                raise ValueError(f"statuses must be HTTP statuses (100-599), got {code}")
        object.__setattr__(self, "statuses", codes)
        if not isinstance(self.respect_retry_after, bool):
            raise TypeError(f"respect_retry_after must be a bool, not {type(self.respect_retry_after).__name__}")
        for name in ("backoff_base", "backoff_cap", "jitter"):
            object.__setattr__(self, name, _seconds(name, getattr(self, name)))

    @property
    def attempts(self) -> int:
        """Most attempts of one call: ``1 + max_retries``."""
        return 1 + self.max_retries

    def replace(self, **changes: Any) -> RetryPolicy:
        """A copy with ``changes`` (field names as keywords), checked as the constructor checks.

        Raises:
            TypeError: An unknown field, or a value of the wrong type.
            ValueError: As the constructor.
        """
        return dataclasses.replace(self, **changes)

    def with_retries(self, max_retries: int) -> RetryPolicy:
        """This policy with ``max_retries`` retries (itself when it already has that many).

        Raises:
            TypeError, ValueError: As the constructor, for ``max_retries``.
        """
        if max_retries == self.max_retries and type(max_retries) is int:
            return self
        return dataclasses.replace(self, max_retries=max_retries)

    def backoff(self, retry_index: int) -> float:
        """Seconds to wait before a retry when the service gave no ``Retry-After``.

        ``min(backoff_cap, backoff_base * 2 ** retry_index)`` (0.5, 1, 2, 4 ... s by
        default), plus a random share of :attr:`jitter` when it is set.

        Args:
            retry_index: 0 before the first retry, 1 before the second, and so on.

        Raises:
            TypeError: ``retry_index`` is not an int.
            ValueError: ``retry_index`` is negative.
        """
        delay = backoff_delay(retry_index, base=self.backoff_base, cap=self.backoff_cap)
        if not self.jitter:
            return delay
        # A uniform share of the jitter; os.urandom spares import service_client the random module.
        return delay + self.jitter * int.from_bytes(os.urandom(4), "big") / 0xFFFFFFFF

    def __repr__(self) -> str:
        return (f"RetryPolicy(max_retries={self.max_retries}, statuses={sorted(self.statuses)}, "
                f"backoff_base={self.backoff_base:g}, backoff_cap={self.backoff_cap:g}, jitter={self.jitter:g}, "
                f"respect_retry_after={self.respect_retry_after})")


#: The policy of a client built without ``retry=``.
DEFAULT_RETRY = RetryPolicy()


def resolve_retry(retry: RetryPolicy | int | None, default: RetryPolicy) -> RetryPolicy:
    """The policy of one call: ``default`` for None, ``default`` with ``retry`` retries for an
    int (urllib3's ``Retry.from_int``), else ``retry`` itself.

    Raises:
        TypeError: ``retry`` is none of those (a bool included).
        ValueError: A negative int.
    """
    if retry is None:
        return default
    if isinstance(retry, RetryPolicy):
        return retry
    if isinstance(retry, bool) or not isinstance(retry, int):
        raise TypeError(f"max_retries must be an int or a RetryPolicy, not {type(retry).__name__}")
    if retry < 0:
        raise ValueError(f"max_retries must be >= 0, got {retry}")
    return default.with_retries(retry)

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
