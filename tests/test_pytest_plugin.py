"""The pytest plugin that ships with the package: a clean emulator per test, a seeded world, the
bot's client, say/expect_reply, listener errors and clients left running."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys
import threading
import time
from typing import Any

import pytest
import requests

from service_client import Client, Message
from service_client.pytest_plugin import BotWorld, WorldUser


def test_plugin_fixture_is_a_running_reset_emulator(service_emulator):
    created = service_emulator.create_user("plugin-user")
    me = requests.get(
        service_emulator.base_url + "/auth/me",
        headers={"Authorization": f"Bearer {created['token']}"},
        timeout=10,
    )
    assert me.status_code == 200
    assert me.json()["user"]["publicId"] == created["user"]["publicId"]


def test_plugin_fixture_resets_between_tests(service_emulator):
    assert service_emulator.requests() == []


INNER_TESTS = '''
import threading

from service_client import Client
from service_client.events import EventEmitter, OrderedWorkerPool


def _raise_in_listener(client, exc, *, error_listener=False):
    """Make a listener of ``client`` raise ``exc`` on its worker pool; return once it ran."""
    done, handled = threading.Event(), threading.Event()

    def broken():
        raise exc

    name = client.register_event("boom")
    client.on(name, broken)
    client.on(name, done.set)
    if error_listener:
        client.on("error", lambda error: handled.set())
    client.dispatch(name, key="k")
    assert done.wait(5)
    if error_listener:
        assert handled.wait(5)


def _raise_in_a_plain_emitter(exc):
    pool = OrderedWorkerPool(1, name="inner")
    emitter = EventEmitter(pool, name="inner")
    done = threading.Event()

    def broken():
        raise exc

    emitter.on("x", broken)
    emitter.on("x", done.set)
    emitter.emit("x", key="k")
    assert done.wait(5)
    emitter.close()
    pool.shutdown()


def test_unexpected_listener_error_fails(bot_client):
    _raise_in_listener(bot_client, ValueError("surprise"))


def test_handled_by_an_error_listener_passes(bot_client):
    _raise_in_listener(bot_client, ValueError("handled"), error_listener=True)


def test_a_raising_error_listener_fails(bot_client):
    def bad_error_listener(exc):
        raise KeyError("the error listener itself failed")

    reported = threading.Event()
    bot_client.on("error", bad_error_listener)
    bot_client.on("error", lambda exc: reported.set())   # runs once the failure above was recorded
    _raise_in_listener(bot_client, ValueError("first"))
    assert reported.wait(5)   # before the test ends: else teardown's destroy() could drop the error task


def test_a_client_the_test_built_itself_is_not_judged(service_emulator):
    with Client(base_url=service_emulator.base_url, socket_url=service_emulator.socket_url) as own:
        _raise_in_listener(own, ValueError("the test's own business"))


def test_a_plain_emitter_is_not_judged():
    _raise_in_a_plain_emitter(ValueError("not the plugin's client"))


def test_expected_listener_error_passes(bot_client, listener_errors):
    listener_errors.expect(ValueError, match="planned")
    _raise_in_listener(bot_client, ValueError("a planned failure"))
    assert [str(e) for e in listener_errors.errors] == ["a planned failure"]


def test_wait_for_a_listener_error(bot_client, listener_errors):
    thread = threading.Thread(target=_raise_in_listener, args=(bot_client, KeyError("late")))
    thread.start()
    assert isinstance(listener_errors.wait(KeyError, timeout=5), KeyError)
    thread.join(5)


def test_another_type_than_expected_fails(bot_client, listener_errors):
    listener_errors.expect(KeyError)
    _raise_in_listener(bot_client, ValueError("not a key error"))


def test_no_listener_error_passes(bot_client):
    pass


def test_a_failure_shows_the_redacted_traceback(bot_world, bot_client):
    _raise_in_listener(bot_client, ValueError("bad header " + bot_world.bot.token.get()))


def test_a_listener_failing_while_its_client_is_destroyed_does_not_count(bot_client):
    entered, release = threading.Event(), threading.Event()

    def slow():
        entered.set()
        release.wait(5)
        raise RuntimeError("the client was destroyed before the message was echoed")

    name = bot_client.register_event("slow")
    bot_client.on(name, slow)
    bot_client.dispatch(name)
    assert entered.wait(5)
    threading.Timer(0.2, release.set).start()
    bot_client.destroy()


def test_a_failing_client_close_listener_fails_at_teardown(bot_client):
    def save_balances():
        raise RuntimeError("the balances could not be saved")

    bot_client.on("client_close", save_balances)


def test_a_failing_client_close_listener_fails_when_the_test_destroys(bot_client):
    def save_balances():
        raise RuntimeError("the balances could not be saved either")

    bot_client.on("client_close", save_balances)
    bot_client.destroy()
'''


INNER_CLIENT_TESTS = '''
import pytest

from service_client import Client

KEPT = []


def _logged_in(emulator, name):
    user = emulator.create_user(name, bot=True)
    client = Client(base_url=emulator.base_url, socket_url=emulator.socket_url)
    client.login(user["token"], timeout=15)
    return client


@pytest.fixture(scope="module")
def module_client(service_emulator_server):
    client = _logged_in(service_emulator_server, "modulebot")
    yield client
    client.destroy()


def test_leaves_a_client_running(service_emulator):
    KEPT.append(_logged_in(service_emulator, "leaky"))


def test_the_plugin_destroyed_it():
    assert KEPT[0].state.value == "destroyed"


def test_bot_client_is_the_world_bot_logged_in(bot_world, bot_client):
    assert bot_client.state.value == "ready" and bot_client.user.id == bot_world.bot.id
    KEPT.append(bot_client)


def test_bot_client_was_destroyed_at_teardown():
    assert KEPT[1].state.value == "destroyed"


def test_after_a_world_test_a_new_client_has_the_real_clock():
    from service_client import MonotonicClock

    client = Client(base_url="http://127.0.0.1:9/api/v2", socket_url="http://127.0.0.1:9")
    try:
        assert isinstance(client.clock, MonotonicClock)  # the world's clock stayed in its test
    finally:
        client.destroy()


def test_a_client_of_a_module_fixture_is_not_reported(module_client):
    assert module_client.state.value == "ready"
'''


INNER_WORLD_TESTS = '''
import pytest

from service_client import Client


@pytest.fixture
def bot_factory(bot_world):
    def build(**urls):
        client = Client(**urls)
        client.on("ready", lambda: client.send_message(bot_world.general.id, "Hello!"))
        return client
    return build


def test_a_failed_expectation_prints_a_short_report(bot_world, bot_client, say, expect_reply):
    @bot_client.on("message_create")
    def broken(message):
        if message.content == "!ping":
            raise ValueError("the bot broke")

    said = say("general", "!ping")
    assert expect_reply(said, timeout=1).content == "Pong!"


def test_what_the_bot_said_when_ready_needs_no_fixture_ordering(bot_client, expect_message):
    assert expect_message("general", since="start").result().content == "Hello!"


def test_scheduled_work_that_raised_is_named_as_such(bot_world, bot_client):
    def remind():
        raise LookupError("no reminder store")

    bot_client.call_later(30, remind)
    bot_world.advance(30)
'''


@pytest.fixture(scope="module")
def inner_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], str]:
    """One inner pytest run of the inner test files: (outcome per "module::test", output)."""
    where = tmp_path_factory.mktemp("inner")
    (where / "test_inner.py").write_text(INNER_TESTS)
    (where / "test_inner_clients.py").write_text(INNER_CLIENT_TESTS)
    (where / "test_inner_world.py").write_text(INNER_WORLD_TESTS)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "test_inner.py", "test_inner_clients.py",
         "test_inner_world.py"],
        cwd=where, capture_output=True, text=True, timeout=120,
    )
    found = re.findall(r"(test_inner\w*)\.py::(\w+) (PASSED|FAILED|ERROR)", proc.stdout)
    return {f"{module}::{test}": outcome for module, test, outcome in found}, proc.stdout


def outcomes_in(found: dict[str, str], module: str) -> dict[str, str]:
    """{test name: outcome} for the inner run's tests in ``module`` (its file name without ``.py``),
    from ``found`` as the ``inner_run`` fixture gives it ({"module::test": outcome})."""
    return {key.split("::")[1]: outcome for key, outcome in found.items() if key.startswith(module + "::")}


def test_a_test_whose_listeners_raised_fails_unless_it_expected_it(inner_run):
    found, proc_stdout = inner_run
    outcomes = outcomes_in(found, "test_inner")
    assert outcomes == {
        "test_unexpected_listener_error_fails": "FAILED",
        "test_handled_by_an_error_listener_passes": "PASSED",
        "test_a_raising_error_listener_fails": "FAILED",
        "test_a_client_the_test_built_itself_is_not_judged": "PASSED",
        "test_a_plain_emitter_is_not_judged": "PASSED",
        "test_expected_listener_error_passes": "PASSED",
        "test_wait_for_a_listener_error": "PASSED",
        "test_another_type_than_expected_fails": "FAILED",
        "test_no_listener_error_passes": "PASSED",
        "test_a_listener_failing_while_its_client_is_destroyed_does_not_count": "PASSED",
        "test_a_failure_shows_the_redacted_traceback": "FAILED",
        "test_a_failing_client_close_listener_fails_at_teardown": "ERROR",
        "test_a_failing_client_close_listener_fails_when_the_test_destroys": "FAILED",
    }, proc_stdout
    assert "RuntimeError: the balances could not be saved" in proc_stdout
    assert "in a 'client_close' listener" in proc_stdout
    assert "ValueError: surprise" in proc_stdout
    assert "KeyError: 'the error listener itself failed'" in proc_stdout
    assert "ValueError: bad header [REDACTED]" in proc_stdout
    assert "exception(s) raised by event listeners or scheduled work during this test" in proc_stdout


def test_a_client_left_running_is_destroyed_with_a_warning(inner_run):
    found, stdout = inner_run
    outcomes = outcomes_in(found, "test_inner_clients")
    assert outcomes == {
        "test_leaves_a_client_running": "PASSED",
        "test_the_plugin_destroyed_it": "PASSED",
        "test_bot_client_is_the_world_bot_logged_in": "PASSED",
        "test_bot_client_was_destroyed_at_teardown": "PASSED",
        "test_after_a_world_test_a_new_client_has_the_real_clock": "PASSED",
        "test_a_client_of_a_module_fixture_is_not_reported": "PASSED",
    }, stdout
    warned = re.findall(r"ClientLeftRunningWarning: (\S+) left (\d+) Client", stdout)
    assert warned == [("test_inner_clients.py::test_leaves_a_client_running", "1")], stdout
    assert "'leaky'" in stdout and "token=[REDACTED]" in stdout


# -- bot_world, bot_client, say and expect_reply -----------------------------------------------------


def test_bot_world_seeds_a_server_with_roles_channels_and_the_bot_as_a_member(bot_world: BotWorld) -> None:
    emu, sid = bot_world.emulator, bot_world.server.id
    assert [bot_world.owner.name, bot_world.moderator.name, bot_world.member.name, bot_world.bot.name] == [
        "alice", "bob", "carol", "testbot"]
    assert bot_world.bot.bot and not bot_world.owner.bot
    assert emu.server(sid)["ownerId"] == bot_world.owner.id
    role_ids = lambda user: {r if isinstance(r, str) else r["publicId"] for r in emu.member(sid, user.id)["roles"]}  # noqa: E731
    assert bot_world.bot_role.id in role_ids(bot_world.bot)
    assert bot_world.moderator_role.id in role_ids(bot_world.moderator)
    assert bot_world.moderator_role.id not in role_ids(bot_world.member)
    assert {(c.name, c.record["type"]) for c in (bot_world.general, bot_world.random, bot_world.voice)} == {
        ("general", "TEXT"), ("random", "TEXT"), ("voice", "VOICE")}
    assert bot_world.channel("general") is bot_world.general and bot_world.user("bob") is bot_world.moderator
    assert bot_world.role("Moderator") is bot_world.moderator_role
    assert bot_world.user(bot_world.member.id) is bot_world.member          # by id too
    with pytest.raises(LookupError, match="no channel 'nope'.*general"):
        bot_world.channel("nope")
    dave = bot_world.add_user("dave", roles=["Moderator"])
    assert isinstance(dave, WorldUser) and bot_world.moderator_role.id in role_ids(dave)
    token = bot_world.bot.token.get()
    assert token and token not in repr(bot_world) and token not in repr(bot_world.bot)


def test_say_and_expect_reply_return_decoded_messages_in_order(
    bot_world: BotWorld, bot_client: Client, say: Any, expect_reply: Any
) -> None:
    @bot_client.on("message_create")
    def answer(message: Message) -> None:
        if message.author is not None and message.author.id != bot_world.bot.id:
            message.reply(f"1: {message.content}")
            message.reply("2: <done> & over")

    bot_client.send_message(bot_world.general.id, "said before, never a reply")
    said = say("general", "<b>hi</b> & bye", as_user="carol")
    assert isinstance(said, Message) and said.content == "<b>hi</b> & bye"
    assert said.author is not None and said.author.id == bot_world.member.id
    first, second = expect_reply(said), expect_reply(said)
    assert (first.content, second.content) == ("1: <b>hi</b> & bye", "2: <done> & over")
    assert first.author is not None and first.author.id == bot_world.bot.id
    raw = [m["content"] for m in bot_world.emulator.messages(bot_world.general.id)]
    decoded = [m["content"] for m in bot_world.emulator.messages(bot_world.general.id, decoded=True)]
    assert raw[1:] == ["&lt;b&gt;hi&lt;/b&gt; &amp; bye", "1: &lt;b&gt;hi&lt;/b&gt; &amp; bye",
                       "2: &lt;done&gt; &amp; over"]
    assert decoded[1:] == [said.content, first.content, second.content]


def test_a_reply_that_came_before_expect_reply_is_not_missed(
    bot_world: BotWorld, bot_client: Client, say: Any, expect_reply: Any
) -> None:
    replied = threading.Event()

    @bot_client.on("message_create")
    def answer(message: Message) -> None:
        if message.content == "!now":
            message.reply("at once")
            replied.set()

    said = say(bot_world.general, "!now")
    assert replied.wait(10)                   # the reply is out before anyone waits for it
    assert expect_reply(said).content == "at once"


def test_expect_reply_fails_with_what_the_channel_saw(bot_world: BotWorld, say: Any, expect_reply: Any) -> None:
    first = say("random", "anyone there?", as_user="bob")
    say("random", "hello?", as_user="bob")
    assert expect_reply(first, author="bob").content == "hello?"   # another author than the bot
    with pytest.raises(AssertionError) as failed:
        expect_reply(first, timeout=0)                              # nobody runs the bot here
    assert str(failed.value) == (
        "expected a reply from testbot to 'anyone there?' (bob in #random) within 0 s\n"
        "messages in #random (all, oldest first):\n"
        "  bob: 'anyone there?'\n"
        "  bob: 'hello?'\n"
        "listener errors: none"
    )
    stranger = Client(base_url=bot_world.emulator.base_url, socket_url=bot_world.emulator.socket_url)
    try:
        with pytest.raises(ValueError, match="returned by say"):
            expect_reply(Message(stranger, {"publicId": "M0", "channelPublicId": bot_world.random.id}))
    finally:
        stranger.destroy()


def test_a_misspelt_channel_name_is_refused_at_once_with_the_known_channels(bot_world: BotWorld, say: Any) -> None:
    started = time.monotonic()
    with pytest.raises(LookupError, match=r"no channel 'genral' in this world; known: general, random, voice"):
        say("genral", "hi")
    assert time.monotonic() - started < 2                            # no 10 s wait for an echo
    made = bot_world.emulator.create_channel(bot_world.server.id, "later")
    made = made.get("publicId") or made["channel"]["publicId"]
    assert say(made, "by id").channel_id == made                     # an id the world did not seed is fine


def test_expect_reply_given_a_channel_says_it_takes_a_message_from_say(
    bot_world: BotWorld, say: Any, expect_reply: Any
) -> None:
    say("general", "hi")
    with pytest.raises(TypeError, match=r"takes a message returned by say\(\), got WorldObject.*expect_message"):
        expect_reply(bot_world.general)


def test_expect_message_returns_what_the_bot_posts_on_its_own(
    bot_world: BotWorld, bot_client: Client, expect_message: Any
) -> None:
    @bot_client.on("guild_member_add")
    def welcome(member: Any) -> None:
        bot_client.send_message(bot_world.general.id, f"Welcome, {member.user.username}!")
        if member.user.username != "dave":
            bot_client.send_message(bot_world.general.id, "Read the rules.")

    bot_client.send_message(bot_world.general.id, "posted before: never counts")
    with expect_message("general") as got:
        bot_world.add_user("dave")
    assert got.result().content == "Welcome, dave!"                   # waited for at the block's end
    assert got.result() is got.result()
    assert got.result().channel_id == bot_world.general.id

    # two handles made before the action: the first two messages, in order
    first, second = expect_message(bot_world.general), expect_message("general")
    bot_world.add_user("erin")
    assert (first.result().content, second.result().content) == ("Welcome, erin!", "Read the rules.")

    # check filters; a message that arrived before result() was called is not missed
    rules = expect_message("general", check=lambda m: m.content.startswith("Read"))
    bot_world.add_user("frank")
    assert rules.result().content == "Read the rules."

    quiet = expect_message("random", timeout=0)
    with pytest.raises(AssertionError, match=r"^expected a message from testbot in #random after expect_message\(\) "
                                             r"was called, within 0 s\nno message in #random\n"):
        quiet.result()
    with pytest.raises(LookupError, match="known: general"):
        expect_message("genral")
    with pytest.raises(TypeError, match="check must be a callable"):
        expect_message("general", check="yes")


def test_the_plugin_imports_no_emulator_until_a_fixture_needs_it() -> None:
    code = (
        "import sys, service_client.pytest_plugin\n"
        "heavy = ('service_client.emulator', 'starlette', 'uvicorn', 'socketio', 'engineio')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_a_failed_expectation_is_one_short_failure_with_the_channel_and_the_listener_errors(inner_run):
    found, stdout = inner_run
    assert outcomes_in(found, "test_inner_world") == {
        "test_a_failed_expectation_prints_a_short_report": "FAILED",   # one failure: no ERROR at teardown
        "test_what_the_bot_said_when_ready_needs_no_fixture_ordering": "PASSED",
        "test_scheduled_work_that_raised_is_named_as_such": "FAILED",
    }, stdout
    report = stdout[stdout.index("_ test_a_failed_expectation_prints_a_short_report _"):]
    report = report[:report.index("short test summary info")]
    assert (
        "E       AssertionError: expected a reply from testbot to '!ping' (alice in #general) within 1 s\n"
        "E       messages in #general (all, oldest first):\n"
        "E         testbot: 'Hello!'\n"
        "E         alice: '!ping'\n"
        "E       listener errors:\n"
        "E         ValueError: the bot broke (a 'message_create' listener)\n"
    ) in report
    # the tracebacks of the listener errors come with it, and no frame of the world's own code
    assert "Captured listener errors call" in report and 'raise ValueError("the bot broke")' in report
    assert "service_client/testing" not in report and "scan_until" not in report
    # scheduled work's exception is reported as the work's, not as a listener's
    scheduled = stdout[stdout.index("_ test_scheduled_work_that_raised_is_named_as_such _"):]
    assert "--- in scheduled work (client.call_later):" in scheduled and "no reminder store" in scheduled


INNER_SWITCHED_OFF = '''
import threading

from service_client import Client


def test_the_fixtures_are_gone(bot_world):
    pass


def test_nothing_judges_a_raising_listener():
    with Client(base_url="http://127.0.0.1:9/v2", socket_url="http://127.0.0.1:9") as client:
        done = threading.Event()
        name = client.register_event("boom")
        client.on(name, lambda: (_ for _ in ()).throw(ValueError("nobody judges this")))
        client.on(name, done.set)
        client.dispatch(name)
        assert done.wait(5)
'''


def test_p_no_service_client_switches_the_plugin_off(tmp_path: pathlib.Path) -> None:
    (tmp_path / "test_off.py").write_text(INNER_SWITCHED_OFF)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-p", "no:service_client", "test_off.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    outcomes = dict(re.findall(r"test_off\.py::(\w+) (PASSED|FAILED|ERROR)", proc.stdout))
    assert outcomes == {"test_the_fixtures_are_gone": "ERROR", "test_nothing_judges_a_raising_listener": "PASSED"}, \
        proc.stdout
    assert "fixture 'bot_world' not found" in proc.stdout
