"""Roles and messages in one call: ``Member.add_roles`` / ``remove_roles`` (a read-modify-write
the service cannot make atomic, made safe by reading back), ``Channel.delete_messages`` past
100 and ``Channel.purge``, and ``reason=`` on every moderation call. Real clients against the
emulator; requests read from its journal."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from service_client import Client, Role, ServiceAPIError

from .conftest import gid, sid


def _role(human: Client, world: Any, name: str) -> Role:
    return human.guilds.fetch(sid(world)).roles.create(name)


def _member(client: Client, world: Any, user_id: str) -> Any:
    return client.members.fetch(sid(world), user_id)


def _names(member: Any) -> list[str]:
    return sorted(role.name for role in member.roles.values())


def test_add_and_remove_roles_change_only_those_roles(human: Client, emulator: Any, world: Any) -> None:
    red, blue, green = (_role(human, world, n) for n in ("red", "blue", "green"))
    bot_id = world.bot["publicId"]
    member = _member(human, world, bot_id)
    emulator.clear_requests()
    after = member.add_roles(red, blue.id, reason="colours")
    assert _names(after) == ["@everyone", "blue", "red"]
    assert human.members.get(sid(world), bot_id) is after                    # the cache has it too
    patches = [r for r in emulator.requests() if r["method"] == "PATCH"]
    assert [p["body"]["roles"][-2:] for p in patches] == [[red.id, blue.id]]
    assert patches[0]["headers"].get("x-audit-log-reason") == "colours"
    [entry] = [e for e in emulator.audit_log(sid(world)) if e["actionType"] == "MEMBER_UPDATE"]
    assert entry["details"]["reason"] == "colours"
    stale = member                                                             # no role of those
    after = stale.add_roles(green)                                             # reads fresh: keeps red, blue
    assert _names(after) == ["@everyone", "blue", "green", "red"]
    after = stale.remove_roles(red, "not-a-role-it-has")
    assert _names(after) == ["@everyone", "blue", "green"]
    everyone = next(r for r in after.roles.values() if r.name == "@everyone")
    assert _names(after.remove_roles(everyone, green)) == ["@everyone", "blue"]  # @everyone stays


def test_concurrent_role_changes_of_one_client_lose_none(human: Client, emulator: Any, world: Any) -> None:
    """Four threads add four roles to the same member at once, each from its own stale Member:
    every role is there afterwards (a plain edit(roles=...) from each would keep only one)."""
    roles = [_role(human, world, f"r{i}") for i in range(4)]
    bot_id = world.bot["publicId"]
    stale = _member(human, world, bot_id)
    start = threading.Barrier(4)
    done: list[Any] = []

    def give(role: Role) -> None:
        start.wait(5)
        done.append(stale.add_roles(role))

    threads = [threading.Thread(target=give, args=(r,)) for r in roles]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(done) == 4
    final = _member(human, world, bot_id)
    assert {r.id for r in roles} <= set(final.role_ids), _names(final)


def test_add_roles_refuses_bad_arguments_before_any_request(human: Client, emulator: Any, world: Any) -> None:
    member = _member(human, world, world.bot["publicId"])
    emulator.clear_requests()
    for call, error, text in (
        (lambda: member.add_roles(), ValueError, "at least one role"),
        (lambda: member.remove_roles(5), TypeError, r"roles\[0\]"),
        (lambda: member.add_roles(""), ValueError, r"roles\[0\]"),
        (lambda: member.add_roles("r", reason=""), ValueError, "reason"),
        (lambda: member.add_roles("r", reason=3), TypeError, "reason"),
    ):
        with pytest.raises(error, match=text):
            call()
    assert emulator.requests() == []
    with pytest.raises(ServiceAPIError) as info:
        member.add_roles("0000")
    assert info.value.status == 400                                            # an unknown role


def test_delete_messages_sends_100_ids_per_request(human: Client, emulator: Any, world: Any) -> None:
    emulator.post_messages(gid(world), world.human["publicId"], [f"m{i}" for i in range(230)])
    channel = human.channels.fetch(gid(world))
    everything = list(channel.history())
    emulator.clear_requests()
    channel.delete_messages(everything)
    posts = [r for r in emulator.requests() if r["method"] == "POST"]
    assert [len(p["body"]["messageIds"]) for p in posts] == [100, 100, 30]
    assert [m for p in posts for m in p["body"]["messageIds"]] == [m.id for m in everything]
    assert emulator.messages(gid(world)) == []


def test_purge_deletes_what_check_accepts_among_the_newest(human: Client, emulator: Any, world: Any) -> None:
    emulator.post_messages(gid(world), world.human["publicId"], [f"{'spam' if i % 3 == 0 else 'ham'} {i}"
                                                                    for i in range(150)])
    channel = human.channels.fetch(gid(world))
    deleted = channel.purge(120, check=lambda m: m.content.startswith("spam"))
    assert [m.content for m in deleted] == [f"spam {i}" for i in range(147, 29, -3)]
    left = [m["content"] for m in emulator.messages(gid(world), decoded=True)]
    assert len(left) == 150 - len(deleted) and all(m.startswith("ham") or int(m.split()[1]) < 30 for m in left)
    newest = channel.purge(5)                                                  # no check: all of them
    assert len(newest) == 5 and len(emulator.messages(gid(world))) == 150 - len(deleted) - 5
    emulator.clear_requests()
    assert channel.purge(10, check=lambda m: False) == []                     # nothing to delete, no POST
    assert [r["method"] for r in emulator.requests()] == ["GET"]


def test_every_moderation_call_takes_a_reason(human: Client, make_client: Any, emulator: Any, world: Any) -> None:
    guild = human.guilds.fetch(sid(world))
    carol = emulator.create_user("carol")
    emulator.add_member(sid(world), carol["user"]["publicId"])
    dave = emulator.create_user("dave")
    emulator.add_member(sid(world), dave["user"]["publicId"])
    guild.kick(carol["user"]["publicId"], reason="off topic")
    _member(human, world, dave["user"]["publicId"]).ban(reason="spam")
    guild.unban(dave["user"]["publicId"], reason="appealed")
    sent = [(e["event"], e["payload"].get("reason")) for e in emulator.emits()
            if e["event"] in ("server:kick", "server:ban", "server:unban")]
    assert sent == [("server:kick", "off topic"), ("server:ban", "spam"), ("server:unban", "appealed")]
    kept = {e["actionType"]: e["details"].get("reason") for e in emulator.audit_log(sid(world))
            if e["actionType"] in ("MEMBER_KICK", "MEMBER_BAN", "MEMBER_UNBAN")}
    assert kept == {"MEMBER_KICK": "off topic", "MEMBER_BAN": "spam", "MEMBER_UNBAN": "appealed"}
    with pytest.raises(ValueError, match="reason"):
        guild.kick(carol["user"]["publicId"], reason="  ")
