"""The people of ``bot_world`` act, and each action returns once the bot's listeners handled it.

Every bot listener here does a round trip to the emulator before it records what it saw (it
sends a message and waits for the echo), so a test that read the record right after an action
that did not wait would find it empty.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from service_client import Client, Message
from service_client.pytest_plugin import BotWorld, WorldObject, WorldUser


class Seen:
    """What the bot's listeners recorded, each after a round trip (a message sent to #random)."""

    def __init__(self, world: BotWorld, client: Client) -> None:
        self.world, self.client = world, client
        self.items: list[tuple[Any, ...]] = []
        self._lock = threading.Lock()

    def note(self, *item: Any) -> None:
        self.client.send_message(self.world.random.id, f"noted {item[0]}")   # waits for the echo
        with self._lock:
            self.items.append(item)

    def all(self) -> list[tuple[Any, ...]]:
        with self._lock:
            return list(self.items)


@pytest.fixture
def seen(bot_world: BotWorld, bot_client: Client) -> Seen:
    return Seen(bot_world, bot_client)


def test_react_and_unreact_return_once_the_bot_handled_them(bot_world: BotWorld, bot_client: Client,
                                                            seen: Seen, say: Any) -> None:
    bot_client.on("message_reaction_add", lambda info, user, mid: seen.note("add", mid, info["emoji"], user.id))
    bot_client.on("message_reaction_remove", lambda info, user, mid: seen.note("remove", mid, info["emoji"], user.id))
    said = say("general", "vote here")
    bot_world.react(said, "👍", as_user="carol")
    assert seen.all() == [("add", said.id, "👍", bot_world.member.id)]
    bot_world.unreact(said.id, "👍", as_user=bot_world.member)                # a message id works too
    assert seen.all()[1:] == [("remove", said.id, "👍", bot_world.member.id)]
    bot_world.react(said, "🎉")                                               # alice by default
    assert seen.all()[2:] == [("add", said.id, "🎉", bot_world.owner.id)]
    with pytest.raises(ValueError, match="alice already reacted 🎉 to message"):
        bot_world.react(said, "🎉")
    with pytest.raises(ValueError, match="bob has not reacted 🎉 to message"):
        bot_world.unreact(said, "🎉", as_user="bob")
    with pytest.raises(TypeError, match="emoji must be a non-empty str"):
        bot_world.react(said, "")


def test_typing_reaches_the_bot(bot_world: BotWorld, bot_client: Client, seen: Seen) -> None:
    bot_client.on("typing_start", lambda data: seen.note("typing", data["channelPublicId"], data["userPublicId"]))
    bot_world.typing("general", as_user="bob")
    assert seen.all() == [("typing", bot_world.general.id, bot_world.moderator.id)]


def test_dm_is_a_users_direct_message_the_bot_answers(bot_world: BotWorld, bot_client: Client, seen: Seen,
                                                      expect_reply: Any) -> None:
    bot_client.on("dm_new", lambda data: seen.note("dm_new", data["publicId"]))

    @bot_client.on("message_create")
    def answer(message: Message) -> None:
        if message.server_id is None and message.author is not None and message.author.id != bot_world.bot.id:
            seen.note("dm", message.content)
            message.reply(f"you said {message.content}")

    said = bot_world.dm("carol", "!help")
    assert said.server_id is None and said.author is not None and said.author.id == bot_world.member.id
    assert seen.all() == [("dm_new", said.channel_id), ("dm", "!help")]        # both handled before it returned
    assert expect_reply(said).content == "you said !help"
    again = bot_world.dm(bot_world.member, "twice")                              # the same DM channel
    assert again.channel_id == said.channel_id and seen.all()[2:] == [("dm", "twice")]
    with pytest.raises(ValueError, match="cannot DM itself"):
        bot_world.dm("testbot", "hi")


def test_join_leave_kick_and_ban_reach_the_bot(bot_world: BotWorld, bot_client: Client, seen: Seen) -> None:
    bot_client.on("guild_member_add", lambda member: seen.note("add", member.user.username))
    bot_client.on("guild_member_remove", lambda member: seen.note("remove", member.display_name, member.reason))
    bot_client.on("guild_ban_add", lambda data: seen.note("ban", data["memberPublicId"]))
    dave = bot_world.join("dave")                                   # a new user
    assert isinstance(dave, WorldUser) and bot_world.user("dave") is dave
    bot_world.leave(dave)
    assert bot_world.join("dave") is dave                           # back, the same user
    bot_world.kick("dave")
    bot_world.join(dave.id)
    bot_world.ban(dave, reason="spam")
    assert seen.all() == [("add", "dave"), ("remove", "dave", "left"), ("add", "dave"),
                          ("remove", "dave", "kicked"), ("add", "dave"), ("remove", "dave", "banned"),
                          ("ban", dave.id)]
    assert [(b["user"]["name"], b["reason"]) for b in bot_world.emulator.bans(bot_world.server.id)] == [
        ("dave", "spam")]
    with pytest.raises(ValueError, match="dave is banned from Test Server"):
        bot_world.join(dave)
    with pytest.raises(ValueError, match="carol is a member of Test Server already"):
        bot_world.join("carol")
    with pytest.raises(ValueError, match="owner_cannot_leave"):
        bot_world.leave("alice")
    erin = bot_world.add_user("erin")
    bot_world.leave(erin)
    bot_world.ban(erin)                                             # not a member: no event to wait for
    assert [b["user"]["name"] for b in bot_world.emulator.bans(bot_world.server.id)] == ["dave", "erin"]


def test_the_bot_itself_leaving_or_rejoining_is_guild_delete_and_guild_create(bot_world: BotWorld,
                                                                               bot_client: Client) -> None:
    gone: list[str] = []
    bot_client.on("guild_delete", lambda guild: gone.append(guild.id if not isinstance(guild, dict) else "raw"))
    bot_world.kick(bot_world.bot)
    assert gone == [bot_world.server.id] and bot_world.server.id not in bot_client.guilds.cache
    bot_world.join(bot_world.bot)
    assert bot_world.server.id in bot_client.guilds.cache          # guild_create came before join() returned


def test_give_and_take_role_reach_the_bot(bot_world: BotWorld, bot_client: Client, seen: Seen) -> None:
    sid = bot_world.server.id
    bot_client.on("guild_member_update", lambda member: seen.note("update", member.id, sorted(member.role_ids)))
    bot_world.give_role("carol", "Moderator")
    assert bot_world.moderator_role.id in bot_client.members.get(sid, bot_world.member.id).role_ids
    bot_world.take_role(bot_world.member, bot_world.moderator_role)
    assert bot_world.moderator_role.id not in bot_client.members.get(sid, bot_world.member.id).role_ids
    assert [item[:2] for item in seen.all()] == [("update", bot_world.member.id)] * 2
    with pytest.raises(ValueError, match="carol does not have the role Moderator"):
        bot_world.take_role("carol", "Moderator")
    with pytest.raises(ValueError, match="bob has the role Moderator"):
        bot_world.give_role("bob", "Moderator")
    with pytest.raises(LookupError, match="no role 'Admin'"):
        bot_world.give_role("bob", "Admin")


def test_create_channel_adds_a_channel_of_the_world(bot_world: BotWorld, bot_client: Client, seen: Seen,
                                                    say: Any) -> None:
    bot_client.on("guild_channels_update", lambda data: seen.note("channels", data["serverPublicId"]))
    news = bot_world.create_channel("news")
    assert isinstance(news, WorldObject) and bot_world.channel("news") is news
    assert seen.all() == [("channels", bot_world.server.id)]
    assert say("news", "first!").channel_id == news.id
    staff = bot_world.create_channel("staff", private=True)
    assert bot_world.emulator.can_view(staff.id, bot_world.bot.id) is False
    assert bot_world.emulator.can_view(staff.id, bot_world.owner.id) is True
    with pytest.raises(ValueError, match="a channel named 'news' already"):
        bot_world.create_channel("news")
    with pytest.raises(TypeError, match="private must be a bool"):
        bot_world.create_channel("x", private="yes")  # type: ignore[arg-type]


def test_an_event_the_bot_never_gets_fails_the_action_with_what_was_awaited(bot_world: BotWorld,
                                                                              bot_client: Client) -> None:
    staff = bot_world.create_channel("staff", private=True)          # the bot cannot see it
    bot_world.event_timeout = 0.5
    with pytest.raises(AssertionError) as failed:
        bot_world.typing(staff, as_user="alice")
    text = str(failed.value)
    assert text.startswith("expected the bot's typing_start listeners to run for: alice types in #staff, "
                           "within 0.5 s; the bot's client did not get that event")
    assert "no message in #staff" in text and text.endswith("listener errors: none")


def test_without_a_bot_client_the_actions_only_drive_the_emulator(bot_world: BotWorld, say: Any) -> None:
    said = say("general", "hello")
    bot_world.react(said, "👍", as_user="bob")
    assert [(r["emoji"], r["userName"]) for r in bot_world.emulator.reactions(said.id)] == [("👍", "bob")]
    dave = bot_world.join("dave")
    bot_world.give_role(dave, "Moderator")
    assert bot_world.moderator_role.id in {r["publicId"] for r in
                                           bot_world.emulator.member(bot_world.server.id, dave.id)["roles"]}
    bot_world.kick(dave)
    with pytest.raises(LookupError):
        bot_world.emulator.member(bot_world.server.id, dave.id)
    assert bot_world.dm("carol", "anyone?").content == "anyone?"
