"""The REST session: routes, retry policy, buckets, the FIFO and the session.

- :mod:`.route`: :class:`Route`, :func:`encode_segment`, :func:`bucket_key` (pure).
- :mod:`.retry`: :class:`RetryPolicy`, :data:`RETRY_STATUSES`, :func:`backoff_delay`,
  :func:`parse_retry_after` (pure).
- :mod:`.seam`: the transport seam, :class:`Transport`, and :class:`MockTransport` with its
  :class:`Request` and :class:`Response`, which answer requests in memory (for unit tests).
- :mod:`.buckets`: :class:`BucketStore`, :class:`MemoryBucketStore`, :class:`PaceWait`,
  :func:`bucket_scope`.
- :mod:`.redis_buckets`: :class:`RedisBucketStore`, the table shared by a
  bot's processes (needs the ``redis`` extra only when built; the module
  loads on first access).
- :mod:`.queue`: the strict FIFO of the REST requests and the timer heap.
- :mod:`.session`: :class:`RestSession`, the scheduling: queue, slots,
  buckets, retries and Futures.
- :mod:`.transport`: one HTTP attempt over requests and urllib3, and what kind
  of failure ended it; :mod:`.connections`: its sockets and the watchdog that
  ends an attempt at its deadline.
- :mod:`.answer`: what an HTTP answer means for its call (pure).
- :mod:`.validation`: the argument checks, :func:`validate_api_call_args`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .buckets import BucketStore, MemoryBucketStore, PaceWait, bucket_scope
from .retry import RETRY_STATUSES, RetryPolicy, backoff_delay, parse_retry_after
from .route import Route, bucket_key, encode_query, encode_segment, redact_path
from .seam import AttemptError, MockTransport, Request, Response, Transport

if TYPE_CHECKING:  # pragma: no cover - the session and the Redis store load on first use
    from .redis_buckets import RedisBucketStore
    from .session import RestSession, validate_api_call_args

#: Names of :mod:`.session`, which imports requests and urllib3: it loads on
#: first access, so importing this package (routes, retry maths) stays light.
_SESSION_EXPORTS = frozenset({"RestSession", "validate_api_call_args"})


def __getattr__(name: str) -> Any:
    """Load :class:`RestSession`, :func:`validate_api_call_args` and :class:`RedisBucketStore`
    on first access (PEP 562) and keep them.

    Raises:
        AttributeError: ``name`` is not exported by this package.
    """
    if name in _SESSION_EXPORTS:
        from . import session

        value = getattr(session, name)
    elif name == "RedisBucketStore":
        from .redis_buckets import RedisBucketStore as value
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value

__all__ = [
    "RETRY_STATUSES",
    "AttemptError",
    "BucketStore",
    "MemoryBucketStore",
    "MockTransport",
    "PaceWait",
    "RedisBucketStore",
    "Request",
    "Response",
    "RestSession",
    "RetryPolicy",
    "Route",
    "Transport",
    "backoff_delay",
    "bucket_key",
    "bucket_scope",
    "encode_query",
    "encode_segment",
    "parse_retry_after",
    "redact_path",
    "validate_api_call_args",
]
