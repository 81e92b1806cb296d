"""The event tap of the connection state: what a publisher sees of the socket's events.

No Redis: the parsers run on a fake state, as the socket's reader calls them.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from state.fakes import FakeState, message_rec  # tests/state, a package beside this one

from service_client.state.parsers import Parsers


def test_the_tap_sees_every_known_event_in_order_before_its_cache_effect() -> None:
    state = FakeState()
    parsers = Parsers(state)  # type: ignore[arg-type]
    seen: list[tuple[str, Any, int]] = []
    state.event_tap = lambda event, args: seen.append((event, args, len(state.dispatched)))
    first = [message_rec("M1", "one")]
    parsers.handle("message:new", first)
    parsers.handle("no:such:event", [{}])  # unknown to the parsers: not tapped
    parsers.handle("typing:start", ["C1"])
    assert [(e, n) for e, _, n in seen] == [("message:new", 0), ("typing:start", 1)]
    assert seen[0][1] is first  # the arguments as received
    assert [d[0] for d in state.dispatched] == ["message_create", "typing_start"]


def test_a_failing_tap_is_logged_and_the_event_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    state = FakeState()
    parsers = Parsers(state)  # type: ignore[arg-type]

    def tap(event: str, args: list[Any]) -> None:
        raise RuntimeError("tap broke")

    state.event_tap = tap
    with caplog.at_level(logging.ERROR, logger="service_client.state"):
        parsers.handle("message:new", [message_rec("M1", "one")])
    assert [d[0] for d in state.dispatched] == ["message_create"]
    assert any("event tap failed on message:new" in r.getMessage() for r in caplog.records)
