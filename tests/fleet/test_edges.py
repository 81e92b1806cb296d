"""The fleet at its edges, as a hostile operator or an unlucky deployment meets them: two groups on
one bot, a poison event that kills its worker, a hung listener, malformed entries from another
Redis writer, Redis refusing writes, a restarted socket process, a bad token.

Same fixtures as ``test_worker.py`` (a private redis-server, the emulator, the ``gateway`` socket
process with 8 partitions). Marked ``redis``.
"""

from __future__ import annotations

import time
from concurrent.futures import Future
from typing import Any

import pytest

from service_client import Message

pytestmark = pytest.mark.redis

pytest.importorskip("redis")


def _wait(predicate: Any, what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def _say(world: Any, channel: dict[str, Any], text: str) -> None:
    world.emulator.post_message(channel["publicId"], world.human["publicId"], text)


def _contents(world: Any, channel: dict[str, Any]) -> list[str]:
    return [m["content"] for m in world.emulator.messages(channel["publicId"])]


def test_two_groups_on_one_bot_each_post_their_own_reply(world: Any, gateway: Any, make_worker: Any) -> None:
    replies: dict[str, Future[Message]] = {"g1": Future(), "g2": Future()}
    for group in replies:
        worker = make_worker(group=group, name=f"w-{group}")

        @worker.event
        def message_create(message: Message, group: str = group) -> None:
            if message.content == "hello both":
                replies[group].set_result(message.reply(f"from {group}"))

        worker.start(timeout=15)
    _say(world, world.general, "hello both")
    first, second = replies["g1"].result(15), replies["g2"].result(15)
    assert (first.content, second.content) == ("from g1", "from g2")
    assert first.id != second.id
    contents = _contents(world, world.general)
    assert contents.count("from g1") == 1 and contents.count("from g2") == 1


def test_a_bad_token_makes_start_raise_service_auth_error(world: Any, gateway: Any, emulator: Any,
                                                         redis_url: str, namespace: str) -> None:
    from service_client import ServiceAuthError
    from service_client.fleet import FleetWorker

    worker = FleetWorker(redis_url, "not-a-real-token", group="g", namespace=namespace,
                         base_url=emulator.base_url)
    with pytest.raises(ServiceAuthError, match="refused the bot token") as caught:
        worker.start(timeout=15)
    assert "not-a-real-token" not in str(caught.value)
    assert worker.state.value == "destroyed"
