"""Fixtures of the emulator's tests: ``conns`` opens ordered socket readers and closes them after the test."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from .fuzzkit import Conn


@pytest.fixture
def conns(world) -> Iterator[Callable[..., Conn]]:
    """A factory of :class:`Conn` readers (token, optional user id), every one closed at teardown."""
    opened = []

    def make(token, user_id=None):
        conn = Conn(world.emulator, token, user_id)
        opened.append(conn)
        return conn

    yield make
    for conn in opened:
        conn.close()
