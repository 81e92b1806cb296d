"""Events: the catalog of event names, the listener registry and the ordered worker pool.

- :mod:`.catalog`: every event the client emits, with its listener arguments (the one
  source of the typed ``on``/``once``/``wait_for`` overloads and the events page).
- :mod:`.emitter`: :class:`EventEmitter`, listeners and ``wait_for`` waiters.
- :mod:`.workers`: :class:`OrderedWorkerPool`, which runs the tasks of one key (a channel,
  else a server) in order, and the reader's batched handoff; :mod:`._drops` reports the
  events it drops at its bound.
- :mod:`.scheduler`: work run later or repeatedly on that pool (``call_later``, ``every``),
  timed by a clock that tests may replace (:class:`~.clock.ManualClock`, in :mod:`.clock`).
"""

from __future__ import annotations

from .emitter import EventEmitter, EventSlot
from .workers import OrderedWorkerPool, flush_handoff, handoff_batch

__all__ = ["EventEmitter", "EventSlot", "OrderedWorkerPool", "flush_handoff", "handoff_batch"]
