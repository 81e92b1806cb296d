"""The old name of :mod:`service_client.rest.queue` (the strict FIFO of the REST requests).

Kept for one release: import from :mod:`service_client.rest.queue`.
"""

from __future__ import annotations

from .queue import (
    DelayQueue,
    FifoQueue,
)

__all__ = [
    "DelayQueue",
    "FifoQueue",
]
