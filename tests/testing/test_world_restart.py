"""``bot_world.restart_bot()`` and ``expect_no_reply``: the bot restarted within one test keeps
its token, the world's clock and the world's recording; silence is asserted without a sleep."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from service_client import Client, CommandDispatcher
from service_client.pytest_plugin import BotWorld, ListenerErrors

#: How many clients the test's factory built, in order.
BUILT: list[Client] = []


@pytest.fixture
def bot_factory(bot_world: BotWorld) -> Callable[..., Client]:
    """A bot answering ``!ping`` and ``!boot`` (the number of clients built so far), greeting
    #general when ready."""
    BUILT.clear()

    def build(**urls: Any) -> Client:
        client = Client(**urls)
        BUILT.append(client)
        commands = CommandDispatcher(client, prefix="!")
        generation = len(BUILT)

        @commands.command()
        def ping(ctx: Any) -> None:
            ctx.reply("Pong!")

        @commands.command()
        def boot(ctx: Any) -> None:
            ctx.reply(f"boot {generation}")

        @commands.command()
        def whisper(ctx: Any) -> None:
            client.create_dm(ctx.author.id).send("psst")

        @client.on("ready")
        def hello() -> None:
            client.send_message(bot_world.general.id, f"up {generation}")

        return client

    return build


def test_restart_bot_builds_the_bot_again_with_the_same_token_clock_and_recording(
    bot_world: BotWorld, bot_client: Client, say: Any, expect_reply: Any
) -> None:
    assert bot_world.expect_message("general", since="start").result().content == "up 1"
    assert expect_reply(say("general", "!boot")).content == "boot 1"
    bot_world.advance(30)

    bot = bot_world.restart_bot()

    assert BUILT == [bot_client, bot] and bot is not bot_client
    assert bot_client.state.value == "destroyed" and bot.state.value == "ready"
    assert bot_world.bot_client is bot
    assert bot.user is not None and bot.user.id == bot_world.bot.id          # the same token
    assert bot.clock is bot_world.clock and bot.clock.now() == 30.0           # the world's clock, still at 30 s
    # still recorded: what the new client said when ready, and the answers to the people
    assert bot_world.expect_message("general", since="start").result().content == "up 2"
    assert expect_reply(say("general", "!boot")).content == "boot 2"
    # the world's actions wait for the new client's listeners
    seen: list[str] = []
    bot.on("message_reaction_add", lambda info, user, message_id: seen.append(message_id))
    said = say("general", "react to me")
    bot_world.react(said, "👍")
    assert seen == [said.id]
    # its scheduled work runs on the world's clock
    handle = bot.call_later(10, bot.send_message, bot_world.general.id, "later")
    with bot_world.expect_message("general") as got:
        assert bot_world.advance(10) == 1
    assert got.result().content == "later" and handle.done()


def test_the_restarted_bot_s_listener_errors_are_judged_like_the_first_one_s(
    bot_world: BotWorld, bot_client: Client, say: Any, listener_errors: ListenerErrors
) -> None:
    bot = bot_world.restart_bot()

    @bot.on("message_create")
    def broken(message: Any) -> None:
        if message.content == "boom":
            raise ValueError("the restarted bot broke")

    say("general", "boom")
    assert str(listener_errors.wait(ValueError, match="restarted bot", timeout=5)) == "the restarted bot broke"


def test_a_world_without_a_factory_cannot_restart_the_bot(bot_world: BotWorld) -> None:
    with pytest.raises(RuntimeError, match="bot_client fixture"):
        bot_world.restart_bot()
    client = Client(base_url=bot_world.emulator.base_url, socket_url=bot_world.emulator.socket_url)
    try:
        bot_world.attach_bot(client)
        with pytest.raises(RuntimeError, match=r"attach_bot\(client, factory=\.\.\.\)"):
            bot_world.restart_bot()
        with pytest.raises(TypeError, match="factory must be callable"):
            bot_world.attach_bot(client, factory="build")  # type: ignore[arg-type]
    finally:
        client.destroy()


def test_expect_no_reply_passes_on_silence_and_after_the_expected_answer(
    bot_world: BotWorld, bot_client: Client, say: Any, expect_reply: Any, expect_no_reply: Any
) -> None:
    said = say("general", "!ping")
    assert expect_reply(said).content == "Pong!"
    started = time.monotonic()
    expect_no_reply(said, within=0.2)            # the answer an expectation took does not count
    assert time.monotonic() - started >= 0.2     # it watched for the whole window
    expect_no_reply(say("general", "just chatting"), within=0.1)


def test_expect_no_reply_fails_at_once_on_a_message_of_the_bot(
    bot_world: BotWorld, bot_client: Client, say: Any, expect_no_reply: Any
) -> None:
    said = say("general", "!ping")
    started = time.monotonic()
    with pytest.raises(AssertionError) as failed:
        expect_no_reply(said, within=5)
    assert time.monotonic() - started < 4        # failed when the answer came, not at the window's end
    text = str(failed.value)
    assert "expected no reply from testbot after '!ping' (alice in #general) within 5 s, got 'Pong!'" in text
    assert "messages in #general" in text


def test_expect_no_reply_anywhere_watches_the_bot_s_dms_and_other_channels(
    bot_world: BotWorld, bot_client: Client, say: Any, expect_no_reply: Any
) -> None:
    said = say("general", "!whisper", as_user="carol")
    assert bot_world.expect_dm("carol").content == "psst"      # taken by an expectation: not counted
    expect_no_reply(said, anywhere=True, within=0.1)
    said = say("general", "!whisper", as_user="carol")
    expect_no_reply(said, within=0.1)                           # nothing in #general
    with pytest.raises(AssertionError) as failed:
        expect_no_reply(said, anywhere=True, within=5)           # but a DM
    assert "expected no message from testbot anywhere after '!whisper' (carol in #general)" in str(failed.value)
    assert "got 'psst' in " in str(failed.value)


def test_expect_no_reply_refuses_bad_arguments(bot_world: BotWorld, say: Any) -> None:
    with pytest.raises(ValueError, match="nothing was said yet"):
        bot_world.expect_no_reply()
    said = say("general", "hello")
    with pytest.raises(ValueError, match="within must be a non-negative number of seconds, got -1"):
        bot_world.expect_no_reply(said, within=-1)
    for endless in (float("inf"), 1e300):  # no wait can be that long: said at the call, not an OverflowError
        with pytest.raises(ValueError, match="within must be a non-negative number of seconds"):
            bot_world.expect_no_reply(said, within=endless)
        with pytest.raises(ValueError, match="timeout must be a non-negative number of seconds"):
            bot_world.expect_reply(said, timeout=endless)
    with pytest.raises(TypeError, match="takes a message returned by say"):
        bot_world.expect_no_reply("general")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="anywhere must be a bool"):
        bot_world.expect_no_reply(said, anywhere="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="bot_client fixture"):
        bot_world.expect_no_reply(said, anywhere=True)
