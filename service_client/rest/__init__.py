"""The REST session: routes, retry policy, buckets, the FIFO and the session.

Spec: ``apiCall``, Errors and Limits; protocol.md 1.1 and 4.1-4.3.

- :mod:`.route`: :class:`Route`, :func:`encode_segment`, :func:`bucket_key` (pure).
- :mod:`.retry`: :func:`backoff_delay`, :func:`parse_retry_after` (pure).
- :mod:`.buckets`: :class:`BucketStore` and :class:`MemoryBucketStore`.
- :mod:`.limiter`: the strict FIFO and the timer heap.
- :mod:`.session`: :class:`RestSession`, :func:`validate_api_call_args`.
"""

from __future__ import annotations

from .buckets import BucketStore, MemoryBucketStore
from .retry import RETRY_STATUSES, backoff_delay, parse_retry_after
from .route import Route, bucket_key, encode_query, encode_segment, redact_path
from .session import RestSession, validate_api_call_args

__all__ = [
    "RETRY_STATUSES",
    "BucketStore",
    "MemoryBucketStore",
    "RestSession",
    "Route",
    "backoff_delay",
    "bucket_key",
    "encode_query",
    "encode_segment",
    "parse_retry_after",
    "redact_path",
    "validate_api_call_args",
]
