"""Helpers shared by the manager tests: the event ``Recorder`` and the ids of the seeded world.

The ``emulator``, ``world``, ``bot``, ``human`` and ``make_client`` fixtures come from
``tests/conftest.py``; this module only holds what every manager test module used to copy.
"""

from __future__ import annotations

import queue
from collections.abc import Callable
from typing import Any

from service_client import Client

TIMEOUT = 10.0
"""Seconds a test waits for one event before ``queue.Empty`` fails it."""


class Recorder:
    """Collects the arguments of one event (listeners run on the worker pool).

    Args:
        client: the Client whose listener is registered (``client.on(event, ...)``).
        event: the event name.
        probe: called with the listener's arguments on the worker thread; when given, each item is
            ``(value, probe(*args))`` so a test can see what a cache held when the event ran.

    Each item is the listener's single argument, or the tuple of its arguments when it has several.
    """

    def __init__(self, client: Client, event: str, probe: Callable[..., Any] | None = None) -> None:
        self.items: queue.Queue[Any] = queue.Queue()

        def listener(*args: Any) -> None:
            value = args[0] if len(args) == 1 else args
            self.items.put((value, probe(*args)) if probe is not None else value)

        client.on(event, listener)

    def get(self, timeout: float = TIMEOUT) -> Any:
        """The next item, waiting up to ``timeout`` seconds; raises ``queue.Empty`` when none comes."""
        return self.items.get(timeout=timeout)

    def empty(self) -> bool:
        """True when no item is waiting right now."""
        return self.items.empty()


def sid(world: Any) -> str:
    """The seeded server's public id."""
    return str(world.server["publicId"])


def gid(world: Any) -> str:
    """The public id of the seeded server's ``general`` channel."""
    return str(world.general["publicId"])


def paths(emulator: Any) -> list[str]:
    """The emulator's request journal as ``"METHOD /path"`` strings, oldest first."""
    return [f"{r['method']} {r['path']}" for r in emulator.requests()]
