"""Serving an :class:`~.control.EmulatorCore`: uvicorn on its own event loop in a daemon thread.

:class:`ServerThread` owns the loop, the uvicorn server and the thread (named
``service_client-emulator-<n>``); :meth:`ServerThread.call` runs a coroutine on that loop from
any other thread and waits a bounded time. ``Emulator`` (``emulator.py``) is built on it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import logging
import socket
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

import uvicorn

from .control import EmulatorCore
from .store import BadRequest, Forbidden, NotFound

logger = logging.getLogger("service_client.emulator")

T = TypeVar("T")

#: Bound on one control call, seconds.
CONTROL_TIMEOUT_S = 60.0
#: Bound on start-up (listening), seconds.
START_TIMEOUT_S = 15.0
#: Bound on stop (thread joined), seconds.
STOP_TIMEOUT_S = 10.0
#: Seconds uvicorn lets connections finish when asked to stop (then their tasks are cancelled).
GRACEFUL_S = 1

_thread_ids = itertools.count(1)


def listening_socket(host: str, port: int) -> socket.socket:
    """A non-blocking TCP socket bound to ``host:port`` (0 = a free port) and listening.

    ``SO_REUSEADDR`` lets a restart bind the same port at once; ``IPPROTO_TCP`` makes asyncio set
    ``TCP_NODELAY`` on accepted sockets (else about 40 ms per request).

    Raises:
        OSError: The port could not be bound.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(2048)
    sock.setblocking(False)
    return sock


class _Server(uvicorn.Server):
    """uvicorn server that signals readiness through a threading.Event."""

    def __init__(self, config: uvicorn.Config, ready: threading.Event) -> None:
        super().__init__(config)
        self._ready = ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """Start serving, then signal readiness."""
        await super().startup(sockets)
        self._ready.set()

    def install_signal_handlers(self) -> None:  # pragma: no cover - never in a thread
        """Install none: the server runs on a thread and the host program owns signals."""
        return None


class ServerThread:
    """uvicorn serving ``core`` on ``sock`` from a new event loop in a daemon thread.

    Args:
        core: What to serve (its ``store`` is closed when the thread ends, unless
            :attr:`keep_state`).
        sock: A listening socket (:func:`listening_socket`); closed when the thread ends.

    Attributes:
        core: As given.
        thread: The daemon thread, ``service_client-emulator-<n>``.
        error: What ended the server abnormally, else None.
        keep_state: Leave the core's store open when the thread ends (a restart reuses it).
    """

    def __init__(self, core: EmulatorCore, sock: socket.socket) -> None:
        self.core = core
        self.error: BaseException | None = None
        self.keep_state = False
        self._sock = sock
        self._ready = threading.Event()
        config = uvicorn.Config(core, log_level="warning", lifespan="off", access_log=False,
                                timeout_graceful_shutdown=GRACEFUL_S, ws_ping_interval=None, ws_ping_timeout=None)
        self._server = _Server(config, self._ready)
        self._loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, daemon=True,
                                       name=f"service_client-emulator-{next(_thread_ids)}")

    @property
    def running(self) -> bool:
        """Whether the thread is alive and the server listening."""
        return self.thread.is_alive() and self._ready.is_set()

    def start(self, timeout: float) -> bool:
        """Start the thread; return whether the server listens within ``timeout`` seconds."""
        self.thread.start()
        return self._ready.wait(timeout) and self.thread.is_alive()

    def stop(self, timeout: float) -> None:
        """Ask the server to exit and join the thread (``timeout`` seconds, then once more after
        forcing the exit). REST and control requests still in flight are ended first, their
        connections closed unanswered (:meth:`EmulatorCore.close_requests`)."""
        if self.running:
            try:
                asyncio.run_coroutine_threadsafe(self.core.close_requests(), self._loop).result(timeout)
            except (concurrent.futures.TimeoutError, RuntimeError):  # the loop is stopping anyway
                logger.debug("in-flight requests not closed before stopping", exc_info=True)
        self._server.should_exit = True
        if self.thread.is_alive() and self.thread is not threading.current_thread():
            self.thread.join(timeout)
            if self.thread.is_alive():
                self._server.force_exit = True
                self.thread.join(timeout)
        self._ready.clear()

    def call(self, fn: Callable[[EmulatorCore], Awaitable[T]], timeout: float = CONTROL_TIMEOUT_S) -> T:
        """Run ``fn(core)`` on the server's loop and return its result (at most ``timeout`` seconds).

        Raises:
            RuntimeError: The server is not running.
            TimeoutError: No result in time (the call is cancelled).
            ValueError: The store refused bad input. PermissionError: Not allowed.
            LookupError: Unknown entity. Whatever else ``fn`` raises.
        """
        if not self.running:
            raise RuntimeError("Emulator is not running")
        core = self.core

        async def runner() -> T:
            """Await ``fn(core)`` on the loop."""
            return await fn(core)

        future = asyncio.run_coroutine_threadsafe(runner(), self._loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise
        except BadRequest as exc:
            raise ValueError(str(exc)) from exc
        except Forbidden as exc:
            raise PermissionError(str(exc)) from exc
        except NotFound as exc:
            raise LookupError(str(exc)) from exc

    def _run(self) -> None:
        loop = self._loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._server.serve(sockets=[self._sock]))
        except BaseException as exc:  # reported by Emulator.start()
            self.error = exc
            logger.exception("emulator server stopped with an error")
        finally:
            try:
                loop.run_until_complete(asyncio.wait_for(self.core.rt.sio.shutdown(), 2))
            except BaseException:  # noqa: BLE001 - best-effort shutdown of a server that may be half-started
                logger.debug("socket.io shutdown did not complete", exc_info=True)
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
            self._sock.close()
            if not self.keep_state:
                self.core.store.close()
