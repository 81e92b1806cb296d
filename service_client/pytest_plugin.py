"""pytest fixtures for bot authors: test a bot against the local emulator.

Registered as a ``pytest11`` entry point, so installing ``service_client``
makes the fixtures available in any test suite. Import-light: the emulator is
imported only when a fixture is used, and a missing ``emulator`` extra skips
the test with its reason printed.

Example::

    def test_ping(service_emulator):
        human = service_emulator.create_user("alice")
        bot = service_emulator.create_user("mybot", bot=True)
        ...  # create_server, add_member, then Client(base_url=service_emulator.base_url, ...)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

__all__ = ["service_emulator", "service_emulator_server"]


@pytest.fixture(scope="session")
def service_emulator_server() -> Iterator[Any]:
    """A running in-process emulator (127.0.0.1, free port, in-memory), shared by the session.

    Yields:
        A started :class:`service_client.emulator.Emulator`; stopped at the end.
    """
    module = pytest.importorskip(
        "service_client.emulator",
        reason="the emulator extra is not installed: pip install 'service_client[emulator]'",
    )
    with module.Emulator() as emu:
        yield emu


@pytest.fixture
def service_emulator(service_emulator_server: Any) -> Any:
    """The session's emulator, reset (state, faults, limiter, journal, sockets) before the test."""
    service_emulator_server.reset()
    return service_emulator_server
