"""The circuit breaker of :class:`~service_client.rest.redis_buckets.RedisBucketStore`.

After a failed Redis call the store answers from its own table for a
cool-down, then one call probes Redis while the others stay local. The
cool-down starts at 0.1 s and doubles (redis-py's ``ExponentialBackoff``)
with each failed probe, or failure soon after closing, up to
``retry_interval``. One blip logs nothing above DEBUG; a run of failures logs
one WARNING, and one INFO when Redis answers again; a Redis never reached
since the store was built logs one ERROR. Logger:
``service_client.rest.redis``.
"""

from __future__ import annotations

import enum
import logging
import math
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["Circuit", "Health"]

_log = logging.getLogger("service_client.rest.redis")

#: The first cool-down after a failed call, seconds; it doubles with each trip in a row.
FIRST_COOL_DOWN_S = 0.1
#: How long Redis must answer after a cool-down before a failure counts as a new outage
#: (the cool-downs start again from the first), seconds.
STABLE_S = 10.0
#: Trips in a row counted at most: the cool-down has reached ``retry_interval`` long before,
#: and ``2 ** trips`` must stay a float.
MAX_TRIPS = 30


class Health(enum.Enum):
    """Where a store's calls go."""

    UP = "up"  # the circuit is closed: every call goes to Redis
    DOWN = "down"  # open: this process's table answers until the cool-down ends
    PROBING = "probing"  # one call tries Redis; the others answer locally meanwhile


class Circuit:
    """The state of one store's circuit breaker. Thread-safe.

    Args:
        backoff: redis-py's ``redis.backoff`` module (the optional extra, loaded by the store).
        url: The store's URL, password hidden (for the log lines).
        retry_interval: The longest cool-down, seconds.
        clock: Monotonic time, seconds.
    """

    def __init__(self, backoff: Any, *, url: str, retry_interval: float, clock: Callable[[], float]) -> None:
        self._cool_down = backoff.ExponentialBackoff(cap=retry_interval, base=FIRST_COOL_DOWN_S)
        self._url = url
        self._retry_interval = retry_interval
        self._clock = clock
        self._health_lock = threading.Lock()  # guards the fields below
        self.health = Health.UP
        #: Moves at every change of ``health``: a call's outcome counts in its own only.
        self.generation = 0
        self._probe_at = 0.0  # while DOWN: when one call may probe Redis
        self._trips = 0  # trips in a row (a trip soon after closing continues the run)
        self._closed_at = -math.inf
        self._announced = False  # the outage was logged (its end will be too) ...
        self._said_back = False  # ... and its end was
        #: Redis answered at least once since the store was built.
        self.ever_answered = False

    def may_probe(self) -> int | None:
        """While the circuit is open: the generation of the one caller that probes Redis now, else None."""
        now = self._clock()
        with self._health_lock:
            if self.health is Health.UP:
                return self.generation
            if self.health is Health.DOWN and now >= self._probe_at:
                self.health = Health.PROBING  # this caller tries; the others answer locally meanwhile
                self.generation += 1
                return self.generation
            return None

    def failed(self, kind: str, described: str, generation: int) -> None:
        """Open the circuit for a cool-down, unless the failure belongs to an older state.

        Args:
            kind: The failure's type name (for the DEBUG line).
            described: ``Type: message`` of the failure, the password hidden.
            generation: The generation the failed call started in.
        """
        now = self._clock()
        with self._health_lock:
            if generation != self.generation or self.health is Health.DOWN:
                return  # a call started before the circuit opened: its failure is already counted
            if self.health is Health.UP and now - self._closed_at >= STABLE_S:
                self._trips = 0  # Redis had answered for long: a new outage
                self._announced = self._said_back = False
            else:
                # A failed probe, or a failure soon after closing: the run goes on.
                self._trips = min(self._trips + 1, MAX_TRIPS)
            cool_down = float(self._cool_down.compute(self._trips))
            self.health = Health.DOWN
            self.generation += 1
            self._probe_at = now + cool_down
            # One blip (the probe after it answers) is not worth a warning; a run of failures
            # is, once; a Redis never reached since the store was built is an error, once.
            level = logging.DEBUG
            if not self._announced and (not self.ever_answered or self._trips >= 1):
                level = logging.WARNING if self.ever_answered else logging.ERROR
                self._announced = True
        if level == logging.ERROR:
            _log.error(
                "Redis bucket store cannot use %s (%s); this process keeps its own bucket table (blocks "
                "not shared, no pace) and tries Redis again every %g s at most",
                self._url, described, self._retry_interval,
            )
        elif level == logging.WARNING:
            _log.warning(
                "Redis bucket store at %s keeps failing (%s); this process keeps its own bucket table and "
                "keeps serving, trying Redis again every %g s at most",
                self._url, described, self._retry_interval,
            )
        else:
            _log.debug("Redis bucket store failed (%s); local for %g s", kind, cool_down)

    def answered(self, generation: int) -> None:
        """Redis answered a call of ``generation``: close the circuit after a successful probe."""
        with self._health_lock:
            self.ever_answered = True
            if self.health is not Health.PROBING or generation != self.generation:
                return
            self.health = Health.UP
            self.generation += 1
            self._closed_at = self._clock()
            say = self._announced and not self._said_back
            self._said_back = self._said_back or say
        if say:
            _log.info("Redis bucket store answers again at %s; buckets are shared again", self._url)
