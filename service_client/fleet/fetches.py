"""Requests that shared-state events need (a member refetch), made once per fleet, not per worker.

Every worker applies every shared-state event to its caches, and some events
carry ids only: ``server:member_update`` makes the parsers fetch the member
before the event is emitted. Made in every worker, that is one request per
worker for each such event. :class:`SharedFetches` lets the first worker make
it: a claim in Redis (``fetch:<hash>``, ``SET NX`` with a TTL) keyed by the
event id and the request; the worker that claims it sends the request and
writes its result there for a minute; the others wait for that result (one
thread polls every waiting key at once) and make the request themselves only
when the first one failed or took more than 5 s (a slow service, or that
worker died meanwhile).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from ._redis import dumps, loads, redis_errors

if TYPE_CHECKING:
    from ..rest.route import Route
    from .routing import FleetKeys

__all__ = ["SharedFetches"]

log = logging.getLogger("service_client.fleet")

#: How long the others wait for the claiming worker's result before they make the request
#: themselves (it may have died meanwhile), and how long the result is kept (ms).
_CLAIM_MS = 5_000
_RESULT_MS = 60_000
#: How often the waiting keys are looked at, seconds.
_POLL_S = 0.02
_ids = iter(range(1 << 62))


class SharedFetches:
    """The shared fetches of one worker. Thread-safe.

    The polling thread ``service_client-fleet-fetches-<n>`` (a daemon) starts with the first
    wait and ends once ``stop`` is set.

    Args:
        redis: The worker's Redis client.
        keys: The namespace's keys.
        stop: Set when the worker stops.
    """

    def __init__(self, redis: Any, keys: FleetKeys, stop: threading.Event) -> None:
        self._redis = redis
        self._prefix = f"{keys.prefix}fetch:"
        self._stop = stop
        self._errors = redis_errors()
        self._publish_errors: tuple[type[BaseException], ...] = (*self._errors, TypeError, ValueError)
        self._lock = threading.Lock()  # guards _waiting and _thread
        self._waiting: dict[str, tuple[Future[Any], float, Callable[[], Future[Any]]]] = {}
        self._thread: threading.Thread | None = None
        self._work = threading.Event()  # a wait was added
        #: Requests this worker made itself (claimed, or the claim's result never came).
        self.made = 0
        #: Requests whose result another worker's request gave.
        self.shared = 0

    def submit(self, event_id: str, route: Route, params: Mapping[str, Any] | None,
               request: Callable[[], Future[Any]]) -> Future[Any]:
        """The result of ``route`` for event ``event_id``: its request is made once per fleet.

        Args:
            event_id: The event whose parsing needs the request.
            route: The request (a GET).
            params: Its query.
            request: Makes the request on this worker's REST session (the usual ``submit``).

        Returns:
            A Future of the request's result (or its error), as ``request()`` would give.
        """
        text = f"{event_id}\n{route.method} {route.path}\n{sorted((params or {}).items())!r}"
        key = self._prefix + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        try:
            claimed = self._redis.set(key, b"", nx=True, px=_CLAIM_MS)
        except self._errors:
            return self._made(request)
        if claimed:
            fut = self._made(request)
            fut.add_done_callback(lambda done: self._publish(key, done))
            return fut
        out: Future[Any] = Future()
        with self._lock:
            self._waiting[key] = (out, time.monotonic() + _CLAIM_MS / 1000, request)
            self._work.set()
            if self._thread is None:
                self._thread = threading.Thread(target=self._poll, name=f"service_client-fleet-fetches-{next(_ids)}",
                                                daemon=True)
                self._thread.start()
        return out

    def _made(self, request: Callable[[], Future[Any]]) -> Future[Any]:
        self.made += 1
        return request()

    def _publish(self, key: str, done: Future[Any]) -> None:
        """The claimed request ended (on the REST thread): its result for the others, else the claim
        is released (they make it themselves)."""
        try:
            if done.exception() is None:
                self._redis.set(key, b"=" + dumps(done.result()), px=_RESULT_MS)
            else:
                self._redis.delete(key)
        except self._publish_errors as exc:
            log.debug("a shared fetch's result was not written (%s): the other workers make it", type(exc).__name__)

    def _poll(self) -> None:
        while not self._stop.wait(_POLL_S):
            with self._lock:
                waiting = list(self._waiting.items())
                if not waiting:
                    self._work.clear()
            if not waiting:
                self._work.wait(0.5)  # idle: no polling until a wait is added
                continue
            try:
                values = self._redis.mget([key for key, _ in waiting])
            except self._errors:
                values = [b""] * len(waiting)
            now = time.monotonic()
            for (key, (out, deadline, request)), value in zip(waiting, values, strict=True):
                if value and value.startswith(b"="):
                    self._settle(key)
                    try:
                        out.set_result(loads(value[1:]))
                    except Exception as exc:  # noqa: BLE001 - an unreadable result: the caller's error
                        out.set_exception(exc)
                    self.shared += 1
                elif value is None or now >= deadline:
                    self._settle(key)
                    try:
                        _chain(self._made(request), out)
                    except Exception as exc:  # noqa: BLE001 - not queued (the worker stops)
                        out.set_exception(exc)
        with self._lock:
            left = list(self._waiting.values())
            self._waiting.clear()
        for out, _deadline, _request in left:
            if not out.done():
                out.set_exception(RuntimeError("the worker stopped before a shared fetch ended"))

    def _settle(self, key: str) -> None:
        with self._lock:
            self._waiting.pop(key, None)


def _chain(source: Future[Any], target: Future[Any]) -> None:
    """Complete ``target`` as ``source`` completes."""
    def copy(done: Future[Any]) -> None:
        """Give ``target`` the result or exception of ``done``."""
        exc = done.exception()
        if exc is not None:
            target.set_exception(exc)
        else:
            target.set_result(done.result())

    source.add_done_callback(copy)
