"""The world's roles: ``give_role``/``take_role`` from two threads at once lose no change, and the
emulator's ``server()`` lists the server's roles."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from service_client.pytest_plugin import BotWorld


def _held(bot_world: BotWorld, user: Any) -> set[str]:
    member = bot_world.emulator.member(bot_world.server.id, user.id)
    return {r["name"] for r in member["roles"] if r["name"] != "@everyone"}


def _at_once(*calls: Any) -> None:
    """Run each call on its own thread, started together; re-raise the first failure."""
    barrier = threading.Barrier(len(calls))
    failures: list[BaseException] = []

    def run(call: Any) -> None:
        barrier.wait(5)
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 - re-raised on the test's thread
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(call,), name=f"test-roles-{i}") for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    if failures:
        raise failures[0]


def test_roles_given_and_taken_from_two_threads_at_once_are_all_kept(bot_world: BotWorld) -> None:
    names = [f"Team {i}" for i in range(4)]
    for name in names:
        bot_world.create_role(name)
    carol = bot_world.member
    for _ in range(5):
        _at_once(*(lambda name=name: bot_world.give_role(carol, name) for name in names))
        assert _held(bot_world, carol) == set(names)
        _at_once(*(lambda name=name: bot_world.take_role(carol, name) for name in names))
        assert _held(bot_world, carol) == set()


def test_giving_a_role_held_or_taking_one_not_held_is_refused(bot_world: BotWorld) -> None:
    with pytest.raises(ValueError, match="bob has the role Moderator"):
        bot_world.give_role("bob", "Moderator")
    with pytest.raises(ValueError, match="carol does not have the role Moderator"):
        bot_world.take_role("carol", "Moderator")
    with pytest.raises(LookupError):
        bot_world.give_role(bot_world.add_user("dave").name, "Nope")


def test_the_emulator_s_server_lists_its_roles(bot_world: BotWorld) -> None:
    staff = bot_world.create_role("Staff", permissions=1 << 1)
    server = bot_world.emulator.server(bot_world.server.id)
    assert server["name"] == "Test Server" and server["ownerId"] == bot_world.owner.id
    assert [r["name"] for r in server["roles"]] == ["@everyone", "Moderator", "Bot", "Staff"]
    assert server["roles"][-1]["publicId"] == staff.id and server["roles"][-1]["permissions"] == "2"
    with pytest.raises(LookupError):
        bot_world.emulator.server("1")
