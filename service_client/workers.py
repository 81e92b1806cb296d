"""The old home of the ordered worker pool, now :mod:`service_client.events.workers`.

Kept for one release so that ``from service_client.workers import OrderedWorkerPool`` keeps working.
"""

from __future__ import annotations

from .events.workers import OrderedWorkerPool, flush_handoff, handoff_batch

__all__ = ["OrderedWorkerPool", "flush_handoff", "handoff_batch"]
