"""``login_bot``'s wait for the ready listeners: checked before logging in, any finite length."""

from __future__ import annotations

from typing import Any

import pytest

from service_client import Client, ClientState
from service_client.testing.clock import login_bot


@pytest.mark.parametrize(("value", "error"), [(0, ValueError), (-1, ValueError), (float("nan"), ValueError),
                                              (float("inf"), ValueError), ("10", TypeError), (True, TypeError)])
def test_a_bad_listeners_timeout_is_refused_before_logging_in(value: Any, error: type[Exception]) -> None:
    client = Client()
    try:
        with pytest.raises(error, match="listeners_timeout"):
            login_bot(client, "not-a-token", timeout=5, listeners_timeout=value)
        assert client.state is ClientState.NEW  # not logged in, nothing started
    finally:
        client.destroy()


def test_a_huge_listeners_timeout_waits_as_long_as_the_platform_can(make_client: Any, world: Any) -> None:
    client = make_client()
    ready: list[str] = []
    client.on("ready", lambda: ready.append("bot's own"))
    login_bot(client, world.bot_token, timeout=15, listeners_timeout=1e300)  # OverflowError before
    assert ready == ["bot's own"] and client.state is ClientState.READY
