"""The voice media's event loop: LiveKit's asyncio on one named daemon thread.

Every public voice call is a blocking wrapper: it hands a coroutine to this loop and waits for
it a bounded time, so it may be called from any thread (a listener included) but never from
the loop's own thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import logging
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["MediaLoop"]

log = logging.getLogger("service_client.voice")

T = TypeVar("T")

#: Seconds the loop gives its remaining tasks to end once asked to stop.
STOP_GRACE_S = 0.5
_ids = itertools.count(1)


class MediaLoop:
    """An asyncio loop running on its own daemon thread, ``service_client-voice-<n>``.

    Thread-safe.
    """

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, name=f"service_client-voice-{next(_ids)}", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
            tasks = [t for t in asyncio.all_tasks(self.loop) if not t.done()]
            for task in tasks:
                task.cancel()
            if tasks:
                self.loop.run_until_complete(asyncio.wait(tasks, timeout=STOP_GRACE_S))
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        except Exception:  # the thread must end, whatever a task left behind
            log.exception("the voice media loop ended with an error")
        finally:
            self.loop.close()

    @property
    def running(self) -> bool:
        """Whether the thread is alive and the loop not stopped."""
        return self.thread.is_alive() and not self.loop.is_closed()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop and return its future.

        Raises:
            RuntimeError: The loop is stopped (the coroutine is closed unrun).
        """
        if self.loop.is_closed() or not self.thread.is_alive():
            coro.close()
            raise RuntimeError("the voice media loop is stopped")
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def call(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run ``coro`` on the loop and wait at most ``timeout`` seconds for its result.

        Raises:
            RuntimeError: Called from the loop's own thread (it would wait for itself), or the
                loop is stopped.
            TimeoutError: ``timeout`` passed; the coroutine is cancelled.
            Exception: Whatever the coroutine raised.
        """
        if threading.current_thread() is self.thread:
            coro.close()
            raise RuntimeError("a blocking voice call cannot run on the voice media thread")
        future = self.submit(coro)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"the voice media did not answer within {timeout:g} s") from None

    def stop(self, timeout: float | None = None) -> None:
        """Stop the loop (its tasks are cancelled) and, with ``timeout``, join the thread that long."""
        if not self.loop.is_closed():
            try:
                self.loop.call_soon_threadsafe(self.loop.stop)
            except RuntimeError:  # closed meanwhile
                pass
        if timeout is not None and threading.current_thread() is not self.thread:
            self.thread.join(timeout)
