"""A bot author's test module as ``mypy --strict`` sees it: the world's emulator and the records
it returns are typed, so a misspelt key or method is reported. Each line marked ``# error:
<code>`` must be reported, and nothing else.

Checked by ``tests/testing/test_world_typing.py``.
"""

from __future__ import annotations

from service_client import Message
from service_client.emulator import Emulator, MemberRecord, MessageRecord, RequestRecord
from service_client.pytest_plugin import BotWorld, ExpectedMessage, SeenReaction, WorldObject


def fitting(bot_world: BotWorld) -> None:
    """What the world gives, used as what it is."""
    emulator: Emulator = bot_world.emulator
    stored: list[MessageRecord] = emulator.messages(bot_world.general.id, decoded=True)
    author = stored[0]["author"]
    print(stored[0]["content"].upper(), author["name"] if author is not None else None)
    member: MemberRecord = emulator.member(bot_world.server.id, bot_world.bot.id)
    print(member["user"]["isBot"], [role["permissions"] for role in member["roles"]])
    journal: list[RequestRecord] = emulator.requests()
    print([entry["status"] for entry in journal], emulator.id_mark().isdigit())
    said: Message = bot_world.say("general", "!vote")
    reaction: SeenReaction = bot_world.expect_reaction(said)
    pending: ExpectedMessage = bot_world.expect_message("general", since="start")
    channel: WorldObject = bot_world.create_channel("news", private=True)
    print(reaction.emoji, pending.result().content, channel.id, bot_world.expect_dm("carol").content)
    bot_world.react(said, "👍", as_user="bob")
    print(bot_world.dm("carol", "hi").channel_id, bot_world.join("dave").mention)


def misfits(bot_world: BotWorld) -> None:
    """Mistakes mypy catches because the emulator is not ``Any``."""
    stored = bot_world.emulator.messages(bot_world.general.id)
    print(stored[0]["contnet"])  # error: typeddict-item
    bot_world.emulator.post_mesage("1", "2", "x")  # error: attr-defined
    member = bot_world.emulator.member(bot_world.server.id, bot_world.bot.id)
    bits: int = member["roles"][0]["permissions"]  # error: assignment
    when: str = bot_world.emulator.requests()[0]["startedAt"]  # error: assignment
    emoji: int = bot_world.expect_reaction().emoji  # error: assignment
    print(bits, when, emoji)
