"""A fleet of callers on one bucket of a RedisBucketStore, in virtual time: the pace as policy.

:func:`simulate` drives one store (the scripts run in a real Redis) with a clock of its own: the
store's clock and the scripts' instant (``TIME``, replaced) both read the simulation's time, so
windows of a second pass in a few milliseconds and every run is the same. The service is a
fixed-window limiter like the emulator's (its window opens at the first request after the last
one ended; a 429 carries the time left, rounded up to whole seconds unless ``fractional``).

Each caller behaves as the REST session does: it asks its process's store; a wait (a block, or a
pace wait with its turn) is waited out, plus a little scheduling delay, and it asks again with its
turn (unless ``keep_turns`` is False: a store wrapper that drops it);
a permit sends the request, which reaches the service after ``latency``; a 429 blocks the bucket
(matched with the permit of the request) and the call is retried after its ``Retry-After``. Once
a call succeeds, the caller starts its next call, unless the phase is over.
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from service_client import RedisBucketStore
from service_client.rest import PaceWait

#: The simulation's epoch in Redis milliseconds (any realistic instant).
EPOCH_MS = 1_800_000_000_000


class FixedWindow:
    """The service's limiter: ``limit`` requests per ``window`` seconds, the window opening at the
    first request after the last one ended."""

    def __init__(self, limit: int, window: float, *, fractional: bool = False) -> None:
        self.limit, self.window, self.fractional = limit, window, fractional
        self._start = -math.inf
        self._count = 0
        self.accepted: list[float] = []
        self.refused: list[float] = []

    def hit(self, now: float) -> float | None:
        """None when accepted at ``now``, else the Retry-After, seconds."""
        if now - self._start >= self.window:
            self._start, self._count = now, 0
        if self._count < self.limit:
            self._count += 1
            self.accepted.append(now)
            return None
        self.refused.append(now)
        left = self._start + self.window - now
        return left if self.fractional else float(max(1, math.ceil(left - 1e-9)))


@dataclass
class Caller:
    """One caller: its process's store, its current call's start, its turn, and the waits of its
    finished calls."""

    name: int
    store: RedisBucketStore
    started: float = 0.0
    turn: int | None = None
    active: bool = False
    waits: list[tuple[float, float]] = field(default_factory=list)  # (started, took)


class Simulation:
    """Callers on one bucket of ``store``, served by ``service``, in virtual time (seconds)."""

    def __init__(self, store: RedisBucketStore, service: FixedWindow, *, latency: float = 0.005,
                 jitter: float = 0.02, seed: int = 7, key: str = "GET:x", keep_turns: bool = True) -> None:
        self.now = 0.0
        self.service, self.key = service, key
        self.latency, self.jitter, self.keep_turns = latency, jitter, keep_turns
        self._random = random.Random(seed)
        self._events: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = itertools.count()
        self.stores: list[RedisBucketStore] = []
        self.callers: list[Caller] = []
        self.add_process(store)

    def add_process(self, store: RedisBucketStore) -> None:
        """One more process, on ``store``: the callers started from now on are spread over them."""
        store._clock = lambda: self.now  # the store's own clock ...
        store._local._clock = store._lines._clock = store._clock  # ... its table's and its lines'
        store._server_clock = lambda: EPOCH_MS + round(self.now * 1000.0)  # ... and the scripts'
        self.stores.append(store)

    def at(self, when: float, action: Callable[[], None]) -> None:
        heapq.heappush(self._events, (when, next(self._seq), action))

    def run_until(self, until: float) -> None:
        """Run the events due before ``until`` (the clock ends there)."""
        while self._events and self._events[0][0] <= until:
            when, _, action = heapq.heappop(self._events)
            self.now = max(self.now, when)
            action()
        self.now = max(self.now, until)

    def run_out(self, within: float = 600.0) -> None:
        """Run every event; the clock ends at the last one. The callers stop starting calls at
        their ``until``: every call ends within ``within`` seconds."""
        limit = self.now + within
        while self._events and self._events[0][0] <= limit:
            when, _, action = heapq.heappop(self._events)
            self.now = max(self.now, when)
            action()
        assert not self._events, f"calls still waiting {within:g} s later"

    # -- callers

    def start_callers(self, count: int, *, until: float, loop: bool = True) -> list[Caller]:
        """``count`` callers that start a call now and, with ``loop``, another after each one until ``until``."""
        made = []
        for _ in range(count):
            name = len(self.callers) + len(made)
            made.append(Caller(name, self.stores[name % len(self.stores)]))
        self.callers.extend(made)
        for caller in made:
            self._begin(caller, until, loop)
        return made

    def _begin(self, caller: Caller, until: float, loop: bool) -> None:
        caller.started, caller.turn, caller.active = self.now, None, True
        self._ask(caller, until, loop)

    def _ask(self, caller: Caller, until: float, loop: bool) -> None:
        wait = caller.store.acquire(self.key, scope="s", turn=caller.turn)
        if wait > 0:
            if isinstance(wait, PaceWait) and wait.turn is not None and self.keep_turns:
                caller.turn = wait.turn
            delay = float(wait) + self._random.uniform(0.0, self.jitter)
            self.at(self.now + delay, lambda: self._ask(caller, until, loop))
            return
        permit = getattr(caller.store._permits, "last", None)  # the session's worker thread keeps it
        self.at(self.now + self.latency, lambda: self._arrive(caller, permit, until, loop))

    def _arrive(self, caller: Caller, permit: Any, until: float, loop: bool) -> None:
        retry_after = self.service.hit(self.now)
        if retry_after is None:
            self.at(self.now + self.latency, lambda: self._done(caller, until, loop))
            return

        def refused() -> None:
            caller.store._permits.last = permit  # the 429 is matched with its own permit
            caller.store.block(self.key, retry_after, scope="s")
            self.at(self.now + retry_after + self._random.uniform(0.0, self.jitter),
                    lambda: self._ask(caller, until, loop))

        self.at(self.now + self.latency, refused)

    def _done(self, caller: Caller, until: float, loop: bool) -> None:
        caller.waits.append((caller.started, self.now - caller.started))
        caller.active = False
        if loop and self.now < until:
            self._begin(caller, until, loop)

    # -- figures

    def rate(self, start: float, end: float) -> float:
        """Requests the service accepted per second between ``start`` and ``end``."""
        return sum(1 for t in self.service.accepted if start <= t < end) / (end - start)

    def waits(self, since: float = 0.0) -> list[float]:
        """The duration of every call that started at ``since`` or later, sorted."""
        return sorted(took for c in self.callers for started, took in c.waits if started >= since)
