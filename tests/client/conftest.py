"""Client fixtures: clients logged in to the in-process emulator over real sockets."""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterator

import pytest

from service_client import Client


def _client_threads() -> list[str]:
    return sorted(
        t.name
        for t in threading.enumerate()
        if t.name.startswith("service_client-") and not t.name.startswith("service_client-emulator")
    )


@pytest.fixture
def client_threads() -> Callable[[], list[str]]:
    """A function listing the names of live threads started by the library."""
    return _client_threads


@pytest.fixture
def make_client(emulator: Any) -> Iterator[Callable[..., Client]]:
    """Factory of clients pointed at the emulator; every one is destroyed at teardown."""
    made: list[Client] = []

    def make(**options: Any) -> Client:
        options.setdefault("base_url", emulator.base_url)
        options.setdefault("socket_url", emulator.socket_url)
        options.setdefault("reconnect_base", 0.05)
        options.setdefault("reconnect_cap", 0.5)
        client = Client(**options)
        made.append(client)
        return client

    yield make
    for client in made:
        client.destroy()


@pytest.fixture
def bot(world: Any, make_client: Callable[..., Client]) -> Client:
    """A bot client logged in (ready) as ``world.bot``."""
    client = make_client()
    client.login(world.bot_token, timeout=15)
    return client


@pytest.fixture
def human(world: Any, make_client: Callable[..., Client]) -> Client:
    """A client logged in as the human member ``world.human``."""
    client = make_client(workers=2)
    client.login(world.human_token, timeout=15)
    return client
