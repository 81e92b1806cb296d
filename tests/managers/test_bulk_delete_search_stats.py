"""``Channel.delete_messages`` (bulk delete), ``search_messages(before=, after=)`` and
``Guild.fetch_stats`` / ``fetch_member_count``: real Clients against the emulator over real HTTP
and socket.io; requests read from the emulator's journal, events seen by real listeners."""

from __future__ import annotations

from typing import Any

import pytest

from service_client import Client, Guild, Message, ServiceAPIError

from .conftest import Recorder, gid, sid


def writes(emulator: Any) -> list[dict[str, Any]]:
    return [r for r in emulator.requests() if r["method"] != "GET"]


# -- bulk delete ------------------------------------------------------------------------------------

def test_delete_messages_sends_each_id_once_and_listeners_get_one_delete_per_message(
        bot: Client, human: Client, emulator: Any, world: Any) -> None:
    emulator.post_messages(gid(world), world.human["publicId"], [f"m{i}" for i in range(5)])
    channel = human.channels.fetch(gid(world))
    newest_first = list(channel.history())
    assert [m.content for m in newest_first] == ["m4", "m3", "m2", "m1", "m0"]
    m4, m3, m2, m1, m0 = newest_first
    deletes = Recorder(bot, "message_delete")
    emulator.clear_requests()
    channel.delete_messages([m0, m2.id, m0.id, m0, m4])           # Messages and ids, repeats
    [entry] = writes(emulator)
    assert (entry["method"], entry["path"], entry["status"]) == (
        "POST", f"/channels/{gid(world)}/messages/bulk-delete", 204)
    assert entry["body"] == {"messageIds": [m0.id, m2.id, m4.id]}
    seen = [deletes.get() for _ in range(3)]
    assert [(d["publicId"], d["channelPublicId"]) for d in seen] == [(m.id, gid(world)) for m in (m0, m2, m4)]
    assert [m["content"] for m in emulator.messages(gid(world))] == ["m1", "m3"]

    # a generator of exactly 100 distinct ids (with repeats) is one request of 100
    emulator.clear_requests()
    channel.delete_messages(str(10**17 + i % 100) for i in range(150))
    [entry] = writes(emulator)
    assert len(entry["body"]["messageIds"]) == 100 and entry["status"] == 204
    assert [m["content"] for m in emulator.messages(gid(world))] == ["m1", "m3"]   # unknown ids skipped

    with pytest.raises(ServiceAPIError) as info:                   # the bot has no MANAGE_MESSAGES
        bot.channels.fetch(gid(world)).delete_messages([m1])
    assert info.value.status == 403
    assert [m["content"] for m in emulator.messages(gid(world))] == ["m1", "m3"]


def test_delete_messages_refuses_bad_arguments_before_any_request(human: Client, emulator: Any,
                                                                  world: Any) -> None:
    channel = human.channels.fetch(gid(world))
    other_id = next(c["publicId"] for c in world.channels if c["name"] == "random")
    stranger = Message(human, {"publicId": "5", "channelPublicId": other_id, "content": "x"})
    emulator.clear_requests()
    for bad, error, text in (
        ([], ValueError, "at least one"),
        ("123", TypeError, "iterable"),
        (None, TypeError, "iterable"),
        ([5], TypeError, r"messages\[0\]"),
        (["1", ""], ValueError, r"messages\[1\]"),
        ([stranger], ValueError, "belongs to channel"),
    ):
        with pytest.raises(error, match=text):
            channel.delete_messages(bad)
    assert emulator.requests() == []


# -- search bounds ------------------------------------------------------------------------------------

def test_search_messages_before_and_after(bot: Client, emulator: Any, world: Any) -> None:
    emulator.post_messages(gid(world), world.human["publicId"], [f"needle {i} <b>" for i in range(6)])
    stored = emulator.messages(gid(world))
    ids = [m["publicId"] for m in stored]
    third = Message(bot, stored[3])
    emulator.clear_requests()
    below = bot.search_messages(gid(world), "needle", before=ids[3])
    assert [m.content for m in below] == ["needle 2 <b>", "needle 1 <b>", "needle 0 <b>"]
    above = bot.search_messages(gid(world), "needle", after=third)
    assert [m.content for m in above] == ["needle 5 <b>", "needle 4 <b>"]
    between = bot.search_messages(gid(world), "needle", limit=2, before=ids[5], after=ids[0])
    assert [m.content for m in between] == ["needle 4 <b>", "needle 3 <b>"]
    assert bot.search_messages(gid(world), "needle", before=None, after=None)[0].content == "needle 5 <b>"
    queries = [r["query"] for r in emulator.requests() if r["path"] == f"/chat/{gid(world)}/search"]
    assert queries == [f"q=needle&before={ids[3]}", f"q=needle&after={ids[3]}",
                       f"q=needle&limit=2&before={ids[5]}&after={ids[0]}", "q=needle"]

    # a bound from another channel matches nothing (as history does)
    rid = next(c["publicId"] for c in world.channels if c["name"] == "random")
    elsewhere = emulator.post_message(rid, world.human["publicId"], "needle elsewhere")["message"]["publicId"]
    assert bot.search_messages(gid(world), "needle", after=elsewhere) == []

    emulator.clear_requests()
    for kwargs, error in (({"before": 5}, TypeError), ({"after": ""}, ValueError), ({"before": b"1"}, TypeError)):
        with pytest.raises(error, match="before" if "before" in kwargs else "after"):
            bot.search_messages(gid(world), "needle", **kwargs)
    assert emulator.requests() == []


# -- server stats --------------------------------------------------------------------------------------

def test_fetch_stats_and_member_count_change_nothing_cached(bot: Client, emulator: Any, world: Any) -> None:
    guild = bot.guilds.cache[sid(world)]
    assert guild.member_count == 2
    emulator.clear_requests()
    stats = guild.fetch_stats()
    assert stats["memberCount"] == 2 and isinstance(stats["channelCount"], int)
    assert [r["path"] for r in emulator.requests()] == [f"/servers/{sid(world)}/stats"]
    joined = Recorder(bot, "guild_member_add")
    carol = emulator.create_user("carol")["user"]
    emulator.add_member(sid(world), carol["publicId"])
    assert joined.get().id == carol["publicId"]
    assert guild.fetch_member_count() == 3
    assert bot.guilds.cache[sid(world)].member_count == 2          # the count read at fetch time
    assert guild.fetch_stats() is not guild.fetch_stats()           # always a request, a new dict

    other = emulator.create_server("Elsewhere", world.human["publicId"])["server"]
    with pytest.raises(ServiceAPIError) as info:
        Guild(bot, other).fetch_member_count()                     # the bot is not a member
    assert info.value.status == 403

    emulator.add_fault("GET", f"/servers/{sid(world)}/stats", status=200, body='{"channelCount": 3}',
                       content_type="application/json")
    with pytest.raises(ServiceAPIError, match="memberCount") as info:
        guild.fetch_member_count()
    assert info.value.status == 200 and info.value.path == f"/servers/{sid(world)}/stats"
    assert info.value.data == {"channelCount": 3}
