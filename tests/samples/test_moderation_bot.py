"""Tests of the moderation bot (``samples/moderation_bot.py``): ``!purge 20`` and
``!kick @user reason...`` with typed arguments, an apostrophe in the reason included."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from moderation_bot import build_client

from service_client import Client
from service_client.testing import BotWorld


@pytest.fixture
def bot_factory() -> Callable[..., Client]:
    return build_client


def test_purge_deletes_the_last_messages_and_the_command(bot_world: BotWorld, bot_client: Client, say: Any,
                                                          expect_message: Any) -> None:
    general = bot_world.channel("general").id
    bot_world.emulator.post_messages(general, bot_world.user("carol").id, [f"spam {i}" for i in range(30)])
    with expect_message("general") as done:
        say("general", "!purge 20", as_user="bob")
    assert done.result().content == "Deleted 20 messages."
    left = [m["content"] for m in bot_world.emulator.messages(general, decoded=True)]
    assert left == [f"spam {i}" for i in range(10)] + ["Deleted 20 messages."]


def test_purge_refuses_a_bad_count_and_a_member_without_the_permission(bot_world: BotWorld, bot_client: Client,
                                                                        say: Any, expect_reply: Any) -> None:
    said = say("general", "!purge lots", as_user="bob")
    assert "count" in expect_reply(said).content
    said = say("general", "!purge 500", as_user="bob")
    assert "between 1 and 100" in expect_reply(said).content
    said = say("general", "!purge 5", as_user="carol")
    assert "MANAGE_MESSAGES" in expect_reply(said).content


def test_kick_takes_a_mention_and_the_reason_as_typed(bot_world: BotWorld, bot_client: Client, say: Any,
                                                      expect_reply: Any) -> None:
    carol = bot_world.user("carol")
    said = say("general", f"!kick {carol.mention} she didn't stop", as_user="bob")
    assert expect_reply(said).content == "Kicked carol: she didn't stop"
    with pytest.raises(LookupError):
        bot_world.emulator.member(bot_world.server.id, carol.id)
    [entry] = [e for e in bot_world.emulator.audit_log(bot_world.server.id) if e["actionType"] == "MEMBER_KICK"]
    assert entry["details"]["reason"] == "she didn't stop"


def test_kick_of_the_owner_is_answered_with_the_services_reason(bot_world: BotWorld, bot_client: Client, say: Any,
                                                                expect_reply: Any) -> None:
    said = say("general", f"!kick {bot_world.user('alice').mention}", as_user="bob")
    assert expect_reply(said).content == "Could not kick alice (servers.errors.cannot_kick_owner)."
    said = say("general", f"!kick {bot_world.user('bob').mention}", as_user="carol")
    assert "KICK_MEMBERS" in expect_reply(said).content


def test_warn_is_for_the_staff_roles_and_warnings_only_in_the_mod_log(bot_world: BotWorld, bot_client: Client,
                                                                        say: Any, expect_reply: Any) -> None:
    carol = bot_world.user("carol")
    said = say("general", f"!warn {carol.mention} spamming links", as_user="bob")
    assert expect_reply(said).content == "Warned carol (1 warning): spamming links"
    said = say("general", f"!warn {bot_world.user('bob').mention} revenge", as_user="carol")
    assert expect_reply(said).content == "You need one of the roles Moderator, Admin to use !warn."

    said = say("general", f"!warnings {carol.mention}", as_user="bob")
    assert expect_reply(said).content == "!warnings can only be used in #mod-log."
    mod_log = bot_world.create_channel("mod-log")
    said = say(mod_log, f"!warnings {carol.mention}", as_user="bob")
    assert expect_reply(said).content == "carol: 1. spamming links"


def test_the_help_hides_the_staff_list_of_warnings(bot_world: BotWorld, bot_client: Client, say: Any,
                                                   expect_reply: Any) -> None:
    listing = expect_reply(say("general", "!help", as_user="carol")).content
    assert "!warn <member> <reason...>" in listing and "!warnings" not in listing
