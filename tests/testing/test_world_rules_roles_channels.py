"""Through the plugin's fixtures: messages that cannot be sent are refused at the call site on
every send path, the world runs the emulator's limit mode, roles are made and given whoever made
them, and channels the bot made are found by name."""

from __future__ import annotations

import time
from typing import Any

import pytest
import requests

from service_client import Client, CommandDispatcher, EmptyMessageError, Message, Permissions, ServiceAuthError
from service_client.pytest_plugin import BotWorld, WorldRole

RULE = "a message needs content that is not only whitespace, or at least one embed"


# -- sends: refused at once, naming the rule ----------------------------------------------------

def _refused_at_once(call: Any, action: str, rule: str = RULE) -> None:
    start = time.monotonic()
    with pytest.raises(ValueError, match=f"^{action}: {rule}"):
        call()
    assert time.monotonic() - start < 1.0                     # no 10 s wait for an echo that never comes


def test_whitespace_only_is_refused_at_once_on_every_send_path(bot_world: BotWorld, bot_client: Client) -> None:
    general = bot_world.general.id
    own = bot_client.send_message(general, "mine")
    carol_dm = bot_client.create_dm(bot_world.member.id)
    hook = bot_client.channels.fetch(general).create_webhook("Hook")
    _refused_at_once(lambda: bot_client.send_message(general, "   "), "send_message")
    _refused_at_once(lambda: bot_client.send_message(general, "\ufeff"), "send_message")
    _refused_at_once(lambda: bot_client.send_message(general, content="\n\t", embeds=[]), "send_message")
    _refused_at_once(lambda: bot_client.channels.fetch(general).send("  "), "send_message")
    _refused_at_once(lambda: own.reply(" "), "send_message")
    _refused_at_once(lambda: carol_dm.send("   "), "send_message")
    _refused_at_once(lambda: own.edit("   "), "edit")
    _refused_at_once(lambda: hook.execute("   "), "execute")
    # nothing was stored: the last message of #general is still the bot's own
    assert [m["content"] for m in bot_world.emulator.messages(general)][-1] == "mine"
    assert bot_world.emulator.messages(carol_dm.id) == []
    # a lone surrogate is refused at the call site, naming the content and where it is
    with pytest.raises(ValueError, match=r"^send_message: content must be text that UTF-8 can encode "
                                         r"\(a lone surrogate at index 1\)$"):
        bot_client.send_message(general, "a\ud800b")
    with pytest.raises(ValueError, match=r"^edit: content must be text that UTF-8 can encode"):
        own.edit("\udfff")
    # with an embed, whitespace content is a message
    assert bot_client.send_message(general, content=" ", embeds=[{"title": "t"}]).embeds == [{"title": "t"}]


def _empty_refused_at_once(call: Any, text: str) -> None:
    start = time.monotonic()
    with pytest.raises(ServiceAuthError) as info:
        call()
    assert time.monotonic() - start < 1.0
    assert str(info.value) == text
    assert isinstance(info.value, EmptyMessageError) and isinstance(info.value, ValueError)


def test_empty_is_refused_with_the_specs_error_on_every_send_path(
        bot_world: BotWorld, bot_client: Client, say: Any, expect_reply: Any) -> None:
    spec = "send_message requires non-empty content or at least one embed."
    general = bot_world.general.id
    own = bot_client.send_message(general, "mine")
    carol_dm = bot_client.create_dm(bot_world.member.id)
    hook = bot_client.channels.fetch(general).create_webhook("Hook")
    for call in (lambda: bot_client.send_message(general, ""), lambda: bot_client.send_message(general),
                 lambda: bot_client.send_message(general, content="", embeds=[]),
                 lambda: bot_client.send_message(general, {"content": "", "embeds": []}),
                 lambda: bot_client.channels.fetch(general).send(""), lambda: own.reply(""),
                 lambda: carol_dm.send(), lambda: carol_dm.send("")):
        _empty_refused_at_once(call, spec)
    _empty_refused_at_once(lambda: own.edit(""), "edit requires non-empty content or at least one embed.")
    _empty_refused_at_once(lambda: hook.execute(""), "execute requires non-empty content or at least one embed.")
    _empty_refused_at_once(lambda: hook.execute(), "execute requires non-empty content or at least one embed.")
    # a command's context: ctx.reply and ctx.send
    commands = CommandDispatcher(bot_client, prefix="!")
    caught: list[str] = []

    @commands.command()
    def empty(ctx: Any) -> None:
        for send in (ctx.reply, ctx.send):
            try:
                send("")
            except EmptyMessageError as exc:
                caught.append(str(exc))
        ctx.reply("done")

    assert expect_reply(say("general", "!empty")).content == "done"
    assert caught == [spec, spec]
    # nothing was stored but the command's answer
    assert [m["content"] for m in bot_world.emulator.messages(general)][-2:] == ["!empty", "done"]
    assert bot_world.emulator.messages(carol_dm.id) == []


def test_the_world_runs_the_limits_the_client_checks(bot_world: BotWorld, bot_client: Client) -> None:
    general = bot_world.general.id
    assert bot_world.limits is True
    _refused_at_once(lambda: bot_client.send_message(general, "x" * 4001), "send_message",
                     r"a message's content is at most 4000 characters \(the content is 4001 characters\)")
    _refused_at_once(lambda: bot_client.send_message(general, embeds=[{"title": "t"}] * 11), "send_message",
                     "a message has at most 10 embeds")
    assert bot_client.send_message(general, "x" * 4000).content == "x" * 4000
    # the emulator refuses the same message from any other sender (here a webhook posted by hand)
    answer = _post_by_hand(bot_world, bot_client, "y" * 4001)
    assert answer.status_code == 400
    assert answer.json()["error"].startswith("messages.errors.too_long: a message's content is at most 4000")


def _post_by_hand(world: BotWorld, client: Client, content: str) -> requests.Response:
    hook = client.channels.fetch(world.general.id).create_webhook("Hook")
    token = hook.token.get() if hook.token is not None else ""
    return requests.post(f"{world.emulator.base_url}/webhooks/{hook.id}/{token}", json={"content": content},
                         timeout=5)


def test_a_world_option_turns_the_limits_off(bot_world: BotWorld, bot_client: Client) -> None:
    bot_world.limits = False
    assert _post_by_hand(bot_world, bot_client, "y" * 4001).status_code == 200
    with pytest.raises(TypeError, match="limits must be a bool"):
        bot_world.limits = "no"  # type: ignore[assignment]
    assert BotWorld(bot_world.emulator, limits=False).limits is False


# -- roles ----------------------------------------------------------------------------------------

def test_create_role_returns_a_typed_role_the_bot_sees(bot_world: BotWorld, bot_client: Client) -> None:
    made: list[Any] = []
    bot_client.on("role_create", made.append)
    staff = bot_world.create_role("Staff", permissions=Permissions.KICK_MEMBERS, color=0xE67E22)
    assert isinstance(staff, WorldRole)
    assert (staff.name, staff.permissions, staff.color) == ("Staff", Permissions.KICK_MEMBERS, "#e67e22")
    assert staff.mention == f"<@&{staff.id}>"
    assert [r.id for r in made] == [staff.id]                 # the bot's listener ran before it returned
    assert bot_world.role("Staff") is staff
    bot_world.give_role("carol", staff)
    member = bot_client.guilds.cache[bot_world.server.id].fetch_member(bot_world.member.id)
    assert staff.id in member.roles
    with pytest.raises(ValueError, match="has a role named 'Staff' already"):
        bot_world.create_role("Staff")
    with pytest.raises(ValueError, match="color"):
        bot_world.create_role("Bad", color="orange")


def test_roles_made_by_the_bot_or_the_control_plane_can_be_given(bot_world: BotWorld, bot_client: Client) -> None:
    guild = bot_client.guilds.cache[bot_world.server.id]
    by_bot = guild.roles.create("Helpers")
    by_plane = bot_world.emulator.create_role(bot_world.server.id, "Plane", 0)["role"]
    bot_world.give_role("carol", "Helpers")                   # by name
    bot_world.give_role("carol", by_plane["publicId"])        # by id
    bot_world.take_role("carol", by_bot)                      # the bot's own Role object
    held = {r["name"] for r in bot_world.emulator.member(bot_world.server.id, bot_world.member.id)["roles"]}
    assert "Plane" in held and "Helpers" not in held
    assert isinstance(bot_world.role("Plane"), WorldRole)
    with pytest.raises(LookupError, match="no role 'Nope'"):
        bot_world.give_role("carol", "Nope")


# -- channels the bot made, by name --------------------------------------------------------------

def test_channels_the_bot_made_are_found_by_name(bot_world: BotWorld, bot_client: Client, say: Any,
                                                 expect_reply: Any) -> None:
    bot_client.channels.create(bot_world.server.id, "modmail")

    def echo(message: Message) -> None:
        if message.content == "!where" and message.channel is not None:
            message.reply(f"#{message.channel.name}")

    bot_client.on("message_create", echo)
    modmail = bot_world.channel("modmail")
    assert modmail.kind == "channel" and modmail.name == "modmail"
    said = say(channel="modmail", text="!where")
    assert said.channel_id == modmail.id
    assert expect_reply(said).content == "#modmail"
    with pytest.raises(LookupError, match="no channel 'nowhere'"):
        bot_world.channel("nowhere")


# -- channels cached for the bot's servers -------------------------------------------------------

def _listings(world: BotWorld) -> int:
    path = f"/servers/{world.server.id}/categories"
    return sum(1 for r in world.emulator.requests() if r["method"] == "GET" and r["path"] == path
               and r["userId"] == world.bot.id)


def test_ctx_channel_and_reaction_channel_are_set_with_one_listing_per_server(
        bot_world: BotWorld, bot_client: Client, say: Any, expect_reply: Any) -> None:
    from service_client import CommandDispatcher

    assert bot_world.general.id not in bot_client.channels.cache          # nothing listed at login
    commands = CommandDispatcher(bot_client, prefix="!")

    @commands.command()
    def where(ctx: Any) -> None:
        ctx.reply(f"#{ctx.channel.name}" if ctx.channel is not None else "unknown")

    seen: list[Any] = []
    bot_client.on("message_reaction_add", lambda info, user, mid: seen.append(info.channel))
    assert expect_reply(say("general", "!where")).content == "#general"
    assert expect_reply(say("random", "!where", as_user="bob")).content == "#random"
    said = say("general", "react here")
    bot_world.react(said, "👍", as_user="carol")
    assert [c.name for c in seen] == ["general"]
    assert _listings(bot_world) == 1                                   # one request for the server, not per need


def test_the_control_plane_posts_within_the_limits_of_the_world(bot_world: BotWorld) -> None:
    general, carol = bot_world.general.id, bot_world.member.id
    with pytest.raises(ValueError, match="messages.errors.too_long"):
        bot_world.emulator.post_message(general, carol, "z" * 4001)
    with pytest.raises(ValueError, match=r"contents\[1\]: messages.errors.too_long"):
        bot_world.emulator.post_messages(general, carol, ["ok", "z" * 4001])
    with pytest.raises(ValueError, match="messages.errors.empty"):
        bot_world.emulator.post_message(general, carol, "   ")
    # the emulator counts and trims as JavaScript does, like the client
    with pytest.raises(ValueError, match="messages.errors.empty"):
        bot_world.emulator.post_message(general, carol, "\ufeff\u3000")
    assert bot_world.emulator.post_message(general, carol, "\x85")["message"]["content"] == "\x85"
    assert bot_world.emulator.post_message(general, carol, "\U0001F600" * 2000)["message"]["content"]
    with pytest.raises(ValueError, match="messages.errors.too_long"):
        bot_world.emulator.post_message(general, carol, "z" * 3999 + "\U0001F600")
    with pytest.raises(ValueError, match="contents must be a list of non-empty strings"):
        bot_world.emulator.post_messages(general, carol, ["ok", "\ufeff"])
    bot_world.limits = False
    assert bot_world.emulator.post_message(general, carol, "z" * 4001)["message"]["content"] == "z" * 4001
