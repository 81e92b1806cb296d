"""Cogs and extensions: a cog's commands, listeners and tasks are added, removed, loaded, unloaded
and reloaded as one, at run time, and a failure leaves nothing half-applied.

The first tests run a client that never logs in (a cog's parts are registrations; the world's
clock runs its tasks); the last ones run the bot in the pytest plugin's test world, as a bot
author tests it: the cog's command answers, its listener runs, its task runs on
``bot_world.advance()``, and an extension rewritten on disk is reloaded.
"""

from __future__ import annotations

import gc
import importlib
import itertools
import pathlib
import sys
import textwrap
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from service_client import (
    Client,
    Cog,
    CommandDispatcher,
    ExtensionAlreadyLoadedError,
    ExtensionError,
    ExtensionFailedError,
    ExtensionNotFoundError,
    ExtensionNotLoadedError,
    ManualClock,
    NoEntryPointError,
)
from service_client.commands import CogTask

_names = itertools.count()


@pytest.fixture
def client() -> Iterator[Client]:
    """A client that never logs in, timed by a manual clock, with a dispatcher."""
    made = Client(base_url="http://127.0.0.1:9/v2", socket_url="ws://127.0.0.1:9")
    made.set_clock(ManualClock())
    CommandDispatcher(made, prefix="!")
    try:
        yield made
    finally:
        made.destroy()


@pytest.fixture
def extension_dir(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """A folder on ``sys.path`` for extension modules; no bytecode is cached, so a rewrite is seen."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    return tmp_path


def _write(folder: pathlib.Path, source: str, *, name: str | None = None) -> str:
    """Write an extension module; returns its (unique) name."""
    name = name or f"cog_ext_{next(_names)}"
    (folder / f"{name}.py").write_text(textwrap.dedent(source))
    return name


def _commands(client: Client) -> set[str]:
    return set(client.commands)


def _dispatcher(client: Client) -> CommandDispatcher:
    host = client._extension_host
    assert host is not None
    return host._dispatcher  # type: ignore[attr-defined, no-any-return]


class Shop(Cog):
    """Buy things."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.ticks = 0

    def cog_load(self) -> None:
        self.events.append("load")
        self.restock.start()

    def cog_unload(self) -> None:
        self.events.append("unload")

    @Cog.command(aliases=["b"])
    def buy(self, ctx: Any, item: str) -> None:
        """Buy an item."""

    @Cog.listener()
    def on_message_create(self, message: Any) -> None:
        self.events.append("message")

    @Cog.every(seconds=60)
    def restock(self) -> None:
        self.ticks += 1


# -- the cog class ----------------------------------------------------------------------------------


def test_the_marks_are_read_from_the_class_and_its_bases() -> None:
    class Base(Cog, name="Money", description="Coins and more."):
        @Cog.command
        def balance(self, ctx: Any) -> None:
            """Show a balance."""

        @Cog.listener("ready")
        @Cog.listener("reconnect")
        def greet(self) -> None: ...

        @Cog.every(hours=1, count=3)
        def leaderboard(self) -> None: ...

    class Child(Base):
        def greet(self) -> None:  # a plain method: no longer a listener
            ...

    cog = Base()
    assert cog.qualified_name == "Money" and cog.description == "Coins and more."
    [command] = cog.get_commands()
    assert (command.name, command.description) == ("balance", "Show a balance.")
    assert cog.get_commands() == [command]  # the same objects every time
    assert sorted(event for event, _ in cog.get_listeners()) == ["ready", "reconnect"]
    assert isinstance(Base.leaderboard, CogTask)
    assert Base.leaderboard.options == {"hours": 1, "count": 3}
    assert Child().qualified_name == "Child" and Child().get_listeners() == []
    assert [c.name for c in Child().get_commands()] == ["balance"]
    assert Shop().description == "Buy things."
    assert Shop().get_listeners()[0][0] == "message_create"  # on_ is left out


def test_a_task_is_there_once_the_cog_is_added(client: Client) -> None:
    shop = Shop.__new__(Shop)
    with pytest.raises(AttributeError, match="exists once the cog is added"):
        shop.restock  # noqa: B018
    assert not hasattr(shop, "restock")


def test_bad_marks_are_refused_when_the_class_body_runs() -> None:
    with pytest.raises(ValueError, match="cooldown"):
        class Bad(Cog):
            @Cog.command(cooldown=-1)
            def slow(self, ctx: Any) -> None: ...
    with pytest.raises(TypeError, match="a command or a listener already"):
        class Twice(Cog):
            @Cog.every(seconds=1)
            @Cog.command()
            def both(self, ctx: Any) -> None: ...
    with pytest.raises(ValueError, match="whitespace"):
        class Named(Cog, name="two words"):
            pass


# -- add_cog and remove_cog -----------------------------------------------------------------------


def test_add_cog_registers_the_three_parts_and_remove_cog_takes_them_away(client: Client) -> None:
    shop = client.add_cog(Shop())
    assert client.get_cog("Shop") is shop and list(client.cogs) == ["Shop"]
    assert _commands(client) == {"buy"}
    [registered] = [fn for fn in client.listeners("message_create") if getattr(fn, "__wrapped__", None)]
    assert registered.__wrapped__ == shop.on_message_create and registered.__qualname__ == "Shop.on_message_create"
    assert shop.restock.is_running() and shop.get_tasks() == {"restock": shop.restock}
    assert client.clock.advance(0) == 1 and shop.ticks == 1  # type: ignore[attr-defined]
    assert shop.events == ["load"]

    assert client.remove_cog("Shop") is shop
    assert client.cogs == {} and client.get_cog("Shop") is None
    assert _commands(client) == set()
    assert registered not in client.listeners("message_create")
    assert not shop.restock.is_running()
    assert client.clock.advance(3600) == 0 and shop.ticks == 1  # type: ignore[attr-defined]
    assert shop.events == ["load", "unload"]
    assert client.remove_cog("Shop") is None


def test_a_name_is_taken_once_unless_overridden(client: Client) -> None:
    first = client.add_cog(Shop())
    with pytest.raises(ValueError, match="a cog named 'Shop' is added already"):
        client.add_cog(Shop())
    with pytest.raises(ValueError, match="added already"):
        client.add_cog(first, override=True)
    second = client.add_cog(Shop(), override=True)
    assert client.get_cog("Shop") is second
    assert first.events == ["load", "unload"] and not first.restock.is_running()
    assert second.restock.is_running() and _commands(client) == {"buy"}


@pytest.mark.parametrize("failure", ["cog_load", "command", "listener", "task"])
def test_a_failing_add_leaves_nothing_behind(client: Client, failure: str) -> None:
    _dispatcher(client).command("taken")(lambda ctx: None)

    class Broken(Shop):
        def cog_load(self) -> None:
            super().cog_load()
            if failure == "cog_load":
                raise RuntimeError("no stock")

        if failure == "command":
            @Cog.command(aliases=["taken"])
            def sell(self, ctx: Any) -> None: ...

        if failure == "listener":
            @Cog.listener("mesage_create")
            def typo(self, message: Any) -> None: ...

        if failure == "task":
            @Cog.every(seconds=-1)
            def never(self) -> None: ...

    broken = Broken()
    expected = {"cog_load": RuntimeError, "command": ValueError, "listener": ValueError, "task": ValueError}
    with pytest.raises(expected[failure]):
        client.add_cog(broken)
    assert client.cogs == {} and _commands(client) == {"taken"}
    assert client.listeners("message_create") == [_dispatcher(client)._on_message]
    assert client.clock.advance(60) == 0 and broken.ticks == 0  # type: ignore[attr-defined]
    # cog_unload answers cog_load: called when cog_load ran to its end
    assert broken.events == ([] if failure == "task" else ["load"] if failure == "cog_load" else ["load", "unload"])
    client.add_cog(Shop())  # the name is free again


def test_an_event_queued_before_the_removal_does_not_reach_the_removed_cog(client: Client) -> None:
    # The client hands an event to the listeners registered when it arrived: the first listener
    # holds the event up while the cog is removed; the cog's listener, next in line, is skipped.
    tick = client.register_event("tick")
    holding, release, done = threading.Event(), threading.Event(), threading.Event()
    client.on(tick, lambda: (holding.set(), release.wait(5)))

    class Listening(Cog):
        def __init__(self) -> None:
            self.heard = 0

        @Cog.listener("tick")
        def heard_tick(self) -> None:
            self.heard += 1

    cog = client.add_cog(Listening())
    client.on(tick, done.set)
    client.dispatch(tick, key="k")
    assert holding.wait(5)
    client.remove_cog("Listening")
    release.set()
    assert done.wait(5)
    assert cog.heard == 0
    client.off(tick, done.set)
    client.add_cog(cog)
    client.on(tick, done.set)  # after the cog's listener again
    done.clear()
    client.dispatch(tick, key="k")
    assert done.wait(5) and cog.heard == 1


def test_a_failing_cog_unload_is_reported_and_the_removal_stands(client: Client) -> None:
    reported: list[BaseException] = []
    done = threading.Event()
    client.on("error", lambda exc: (reported.append(exc), done.set()))

    class Leaky(Shop):
        def cog_unload(self) -> None:
            raise OSError("the database is gone")

    client.add_cog(Leaky())
    assert client.remove_cog("Leaky") is not None
    assert client.cogs == {} and _commands(client) == set()
    assert done.wait(5) and isinstance(reported[0], OSError)


def test_without_a_dispatcher_the_client_says_to_make_one() -> None:
    bare = Client(base_url="http://127.0.0.1:9/v2", socket_url="ws://127.0.0.1:9")
    try:
        assert bare.cogs == {} and bare.extensions == {} and bare.get_cog("Shop") is None
        assert bare.remove_cog("Shop") is None
        with pytest.raises(RuntimeError, match="CommandDispatcher"):
            bare.add_cog(Shop())
        with pytest.raises(RuntimeError, match="CommandDispatcher"):
            bare.load_extension("anything")
        # the first dispatcher serves the client; a second one serves itself only
        first, second = CommandDispatcher(bare), CommandDispatcher(bare, prefix="?")
        assert first.extensions.installed and not second.extensions.installed
        shop = second.extensions.add_cog(Shop())
        assert bare.cogs == {} and "buy" in second.commands
        with pytest.raises(ValueError, match="added to another client"):
            first.extensions.add_cog(shop)  # one cog serves one dispatcher at a time
        second.extensions.remove_cog("Shop")
        first.extensions.add_cog(shop)
        assert bare.get_cog("Shop") is shop
    finally:
        bare.destroy()


# -- extensions -----------------------------------------------------------------------------------

EXTENSION = """
    from service_client import Cog

    calls = []

    class Vault(Cog):
        def cog_load(self):
            self.tick.start()

        @Cog.command()
        def deposit(self, ctx):
            pass

        @Cog.every(seconds=10)
        def tick(self):
            calls.append("tick")

    def loose(message):
        pass

    def setup(client):
        calls.append("setup")
        client.add_cog(Vault())
        client.on("message_create", loose)
        {extra}

    def teardown(client):
        calls.append("teardown")
"""


def test_load_and_unload_an_extension(client: Client, extension_dir: pathlib.Path) -> None:
    name = _write(extension_dir, EXTENSION.format(extra="pass"))
    client.load_extension(name)
    module = client.extensions[name]
    assert sys.modules[name] is module and module.calls == ["setup"]
    assert list(client.cogs) == ["Vault"] and _commands(client) == {"deposit"}
    assert module.loose in client.listeners("message_create")
    assert client.clock.advance(10) == 2  # type: ignore[attr-defined]
    with pytest.raises(ExtensionAlreadyLoadedError, match=name):
        client.load_extension(name)

    client.unload_extension(name)
    assert client.extensions == {} and client.cogs == {} and _commands(client) == set()
    assert module.loose not in client.listeners("message_create")  # a listener outside the cog too
    assert name not in sys.modules
    assert client.clock.advance(60) == 0  # type: ignore[attr-defined]
    assert module.calls == ["setup", "tick", "tick", "teardown"]
    with pytest.raises(ExtensionNotLoadedError, match=name):
        client.unload_extension(name)
    with pytest.raises(ExtensionNotLoadedError, match=name):
        client.reload_extension(name)


def test_a_failing_setup_leaves_nothing_behind(client: Client, extension_dir: pathlib.Path) -> None:
    common = _write(extension_dir, """
        from service_client import Cog

        class Common(Cog):
            @Cog.command()
            def shared(self, ctx):
                pass
    """)
    extra = ("from service_client import Command\n"
             "        client.commands['plain'] = Command('plain', lambda ctx: None)\n"
             f"        from {common} import Common\n"
             "        client.add_cog(Common())  # a cog of another module\n"
             "        raise LookupError('no config')")
    name = _write(extension_dir, EXTENSION.format(extra=extra))
    with pytest.raises(ExtensionFailedError) as caught:
        client.load_extension(name)
    error = caught.value
    assert error.name == name and isinstance(error.original, LookupError) and error.__cause__ is error.original
    assert f"extension {name!r}" in str(error) and "not loaded" in str(error)
    assert client.extensions == {} and client.cogs == {} and _commands(client) == set()
    assert client.listeners("message_create") == [_dispatcher(client)._on_message]
    assert name not in sys.modules
    assert client.clock.advance(60) == 0  # type: ignore[attr-defined]
    (extension_dir / f"{name}.py").write_text(textwrap.dedent(EXTENSION.format(extra="pass")))
    client.load_extension(name)
    assert list(client.cogs) == ["Vault"]


def test_the_load_errors_name_the_extension(client: Client, extension_dir: pathlib.Path) -> None:
    with pytest.raises(ExtensionNotFoundError, match="'no_such_cog_module' not found"):
        client.load_extension("no_such_cog_module")
    with pytest.raises(ExtensionNotFoundError, match="not found"):
        client.load_extension("no_such_package.economy")
    plain = _write(extension_dir, "VALUE = 1\n")
    with pytest.raises(NoEntryPointError, match=f"{plain!r} has no setup"):
        client.load_extension(plain)
    assert plain not in sys.modules
    broken = _write(extension_dir, "def setup(client)\n    pass\n")
    with pytest.raises(ExtensionFailedError, match="SyntaxError"):
        client.load_extension(broken)
    assert broken not in sys.modules
    with pytest.raises(TypeError, match="name must be a str"):
        client.load_extension(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"not the class: add_cog\(Shop\(...\)\)"):
        client.add_cog(Shop)  # type: ignore[arg-type]
    with pytest.raises(ExtensionNotFoundError, match="relative name"):
        client.load_extension(".economy")
    assert isinstance(ExtensionNotFoundError("x", name="x"), ExtensionError)


def test_a_failed_load_leaves_a_module_the_program_imported_in_place(
    client: Client, extension_dir: pathlib.Path
) -> None:
    # A typo that names one of the bot's own modules (or a library's: "logging") must not
    # evict it and its submodules from sys.modules: a later import would make new ones,
    # with classes and state of their own.
    name = f"cog_pkg_{next(_names)}"
    (extension_dir / name).mkdir()
    (extension_dir / name / "__init__.py").write_text("VALUE = 1\n")
    (extension_dir / name / "sub.py").write_text("VALUE = 2\n")
    package, sub = importlib.import_module(name), importlib.import_module(f"{name}.sub")
    with pytest.raises(NoEntryPointError):
        client.load_extension(name)
    assert sys.modules[name] is package and sys.modules[f"{name}.sub"] is sub
    (extension_dir / name / "__init__.py").write_text("def setup(client):\n    raise RuntimeError('no')\n")
    with pytest.raises(ExtensionFailedError, match="RuntimeError"):
        client.load_extension(name)
    assert sys.modules[name] is package and sys.modules[f"{name}.sub"] is sub
    (extension_dir / name / "__init__.py").write_text("raise RuntimeError('at import')\n")
    with pytest.raises(ExtensionFailedError, match="at import"):
        client.load_extension(name)
    assert sys.modules[name] is package and sys.modules[f"{name}.sub"] is sub
    assert client.extensions == {}


def test_a_package_extension_with_a_relative_name(client: Client, extension_dir: pathlib.Path) -> None:
    package = extension_dir / f"cog_pkg_{next(_names)}"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "shop.py").write_text(textwrap.dedent(EXTENSION.format(extra="pass")))
    client.load_extension(".shop", package=package.name)
    assert list(client.extensions) == [f"{package.name}.shop"]


def test_a_reload_swaps_in_the_new_code_and_a_failing_one_keeps_the_old(
    client: Client, extension_dir: pathlib.Path
) -> None:
    name = _write(extension_dir, EXTENSION.format(extra="pass"))
    client.load_extension(name)
    old = client.extensions[name]
    old_cog = client.get_cog("Vault")

    (extension_dir / f"{name}.py").write_text("def setup(client:\n")  # a syntax error: nothing changes
    with pytest.raises(ExtensionFailedError, match="the old version stays loaded"):
        client.reload_extension(name)
    assert client.extensions[name] is old and client.get_cog("Vault") is old_cog and sys.modules[name] is old

    (extension_dir / f"{name}.py").write_text("VALUE = 2\n")
    with pytest.raises(NoEntryPointError, match="the old version stays loaded"):
        client.reload_extension(name)
    assert client.get_cog("Vault") is old_cog

    (extension_dir / f"{name}.py").unlink()
    with pytest.raises(ExtensionNotFoundError, match="the old version stays loaded"):
        client.reload_extension(name)
    assert client.get_cog("Vault") is old_cog and sys.modules[name] is old

    extra = "raise RuntimeError('half done')"
    (extension_dir / f"{name}.py").write_text(textwrap.dedent(EXTENSION.format(extra=extra)))
    with pytest.raises(ExtensionFailedError, match="old version was set up again and is loaded"):
        client.reload_extension(name)
    assert client.extensions[name] is old and sys.modules[name] is old
    assert list(client.cogs) == ["Vault"] and client.get_cog("Vault") is not old_cog
    assert _commands(client) == {"deposit"}
    assert old.calls == ["setup", "teardown", "setup"]

    new_source = EXTENSION.format(extra="pass").replace("def deposit", "def withdraw")
    (extension_dir / f"{name}.py").write_text(textwrap.dedent(new_source))
    client.reload_extension(name)
    new = client.extensions[name]
    assert new is not old and sys.modules[name] is new
    assert _commands(client) == {"withdraw"}
    assert client.clock.advance(0) == 1 and new.calls == ["setup", "tick"]  # type: ignore[attr-defined]
    assert old.calls[-1] == "teardown"


def test_extensions_are_unloaded_when_the_client_is_destroyed(extension_dir: pathlib.Path) -> None:
    made = Client(base_url="http://127.0.0.1:9/v2", socket_url="ws://127.0.0.1:9")
    made.set_clock(ManualClock())  # the cog's task, due at once, runs only when the test moves time
    CommandDispatcher(made)
    name = _write(extension_dir, EXTENSION.format(extra="pass"))
    made.load_extension(name)
    module = made.extensions[name]
    made.destroy()
    assert module.calls == ["setup", "teardown"] and name not in sys.modules


def test_no_lock_is_held_while_user_code_runs(client: Client, extension_dir: pathlib.Path) -> None:
    # setup() loads another extension and reads the client's cogs; cog_load blocks until another
    # thread was refused the same cog name and went on with another one.
    inner = _write(extension_dir, EXTENSION.format(extra="pass"))
    outer = _write(extension_dir, f"""
        def setup(client):
            client.load_extension({inner!r})
            assert list(client.cogs) == ["Vault"]
    """)
    client.load_extension(outer)
    assert set(client.extensions) == {inner, outer}

    entered, release = threading.Event(), threading.Event()

    class Slow(Cog):
        def cog_load(self) -> None:
            assert client.get_cog("Slow") is None  # reading while adding: no deadlock
            entered.set()
            assert release.wait(5)

    adding = threading.Thread(target=client.add_cog, args=(Slow(),), name="test-add-cog")
    adding.start()
    try:
        assert entered.wait(5)
        with pytest.raises(ValueError, match="being added or removed on another thread"):
            client.add_cog(Slow())
        client.add_cog(Shop())  # another name goes ahead meanwhile
    finally:
        release.set()
        adding.join(5)
    assert set(client.cogs) == {"Vault", "Shop", "Slow"}


# -- in the test world ----------------------------------------------------------------------------

BANK = """
    from service_client import Cog

    VERSION = {version!r}

    class Bank(Cog):
        def __init__(self, client):
            self.client = client

        def cog_load(self):
            self.interest.start()

        def cog_check(self, ctx):
            return ctx.author.username != "carol"

        @Cog.command(aliases=["bal"])
        def balance(self, ctx):
            \"\"\"Show your balance.\"\"\"
            ctx.reply(f"100 coins ({{VERSION}})")

        @Cog.listener()
        def on_message_create(self, message):
            if message.content == "hello bank":
                message.reply(f"hello ({{VERSION}})")

        @Cog.every(hours=1)
        def interest(self):
            self.client.send_message({channel!r}, f"interest paid ({{VERSION}})")

    def setup(client):
        client.add_cog(Bank(client))
"""


def _bot(**options: Any) -> Client:
    made = Client(**options)
    commands = CommandDispatcher(made, prefix="!")

    @commands.command()
    def ping(ctx: Any) -> None:
        ctx.reply("Pong!")

    @commands.command()
    def reload(ctx: Any, name: str) -> None:
        ctx.client.reload_extension(name)
        ctx.reply(f"reloaded {name}")

    return made


@pytest.fixture
def bot_factory() -> Callable[..., Client]:
    return _bot


def test_a_cog_in_the_world_answers_listens_and_ticks_until_unloaded(
    bot_world: Any, bot_client: Client, say: Any, expect_reply: Any, extension_dir: pathlib.Path
) -> None:
    name = _write(extension_dir, BANK.format(version="v1", channel=bot_world.general.id))
    bot_client.load_extension(name)
    assert expect_reply(say("general", "!bal")).content == "100 coins (v1)"
    assert expect_reply(say("general", "!balance", as_user=bot_world.member)).content == "You cannot use !balance."
    assert expect_reply(say("general", "hello bank")).content == "hello (v1)"
    with bot_world.expect_message("general") as paid:
        assert bot_world.advance(0) == 1
    assert paid.result().content == "interest paid (v1)"

    bot_client.unload_extension(name)
    assert bot_world.advance(3600) == 0  # the task is stopped
    ignored = say("general", "!bal")
    say("general", "hello bank")
    say("general", "!ping")
    # One channel's messages are handled in order: had the bot answered either, that answer
    # would be its first message after them.
    assert expect_reply(ignored).content == "Pong!"


def test_a_cog_task_with_start_on_ready_starts_by_itself_and_stops_with_its_cog(
    bot_world: Any, bot_client: Client, extension_dir: pathlib.Path
) -> None:
    name = _write(extension_dir, f"""
        from service_client import Cog

        class Ticker(Cog):
            def __init__(self, client):
                self.client = client

            @Cog.every(hours=1, start_on_ready=True)
            def tick(self):
                self.client.send_message("{bot_world.general.id}", "tick")

        def setup(client):
            client.add_cog(Ticker(client))
    """)
    bot_client.load_extension(name)             # the client is ready: the task starts at once
    assert bot_client.get_cog("Ticker").tick.is_running()   # type: ignore[union-attr]
    with bot_world.expect_message("general") as ticked:
        assert bot_world.advance(0) == 1
    assert ticked.result().content == "tick"
    bot_client.reload_extension(name)           # the new version's task starts too, the old one stopped
    assert bot_world.advance(0) == 1
    bot_client.unload_extension(name)
    assert bot_world.advance(3600) == 0


def test_a_reload_from_a_command_picks_up_the_file_rewritten_on_disk(
    bot_world: Any, bot_client: Client, say: Any, expect_reply: Any, extension_dir: pathlib.Path
) -> None:
    name = _write(extension_dir, BANK.format(version="v1", channel=bot_world.general.id))
    bot_client.load_extension(name)
    assert expect_reply(say("general", "!bal")).content == "100 coins (v1)"
    assert bot_world.advance(0) == 1

    (extension_dir / f"{name}.py").write_text(
        textwrap.dedent(BANK.format(version="v2, rewritten", channel=bot_world.general.id)))
    assert expect_reply(say("general", f"!reload {name}")).content == f"reloaded {name}"
    assert expect_reply(say("general", "!bal")).content == "100 coins (v2, rewritten)"
    assert expect_reply(say("general", "hello bank")).content == "hello (v2, rewritten)"
    with bot_world.expect_message("general") as paid:
        assert bot_world.advance(0) == 1  # the new task's first run; the old task is stopped
    assert paid.result().content == "interest paid (v2, rewritten)"
    assert list(bot_client.cogs) == ["Bank"]


def test_loads_and_unloads_from_several_threads_leave_a_consistent_client(
    client: Client, extension_dir: pathlib.Path
) -> None:
    # Two threads race on one extension, two more each own one; every call either does its work
    # or is refused with an ExtensionError; at the end what is loaded matches what is registered.
    names = [_write(extension_dir, EXTENSION.format(extra="pass").replace("class Vault", f"class Vault{i}")
                    .replace("Vault()", f"Vault{i}()").replace("def deposit", f"def deposit{i}"))
             for i in range(3)]
    shared, own = names[0], names[1:]
    failures: list[BaseException] = []

    def churn(name: str, rounds: int, contended: bool) -> None:
        for _ in range(rounds):
            for step in (client.load_extension, client.unload_extension):
                try:
                    step(name)
                except ExtensionError:
                    if not contended:
                        raise
                except BaseException as exc:  # noqa: BLE001 - collected for the assertion below
                    failures.append(exc)
                    return

    threads = [threading.Thread(target=churn, args=(shared, 30, True), name=f"test-churn-{i}") for i in range(2)]
    threads += [threading.Thread(target=churn, args=(name, 30, False), name=f"test-own-{name}") for name in own]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert failures == []
    loaded = set(client.extensions)
    assert loaded <= {shared}
    expected = {"Vault0"} if loaded else set()
    assert set(client.cogs) == expected
    assert _commands(client) == ({"deposit0"} if loaded else set())
    listeners = client.listeners("message_create")
    assert len(listeners) == 1 + len(loaded)  # the dispatcher's, and the extension's loose one


def test_loads_while_other_threads_import_modules_read_sys_modules_safely(
    client: Client, extension_dir: pathlib.Path
) -> None:
    # Another thread may import or forget modules (another extension's load or unload) while a
    # load, reload or unload reads which modules are the extension's. That reading must not iterate
    # sys.modules while Python code can run (a thread switch): it raised "dictionary changed size
    # during iteration". A garbage collector callback stands for the other thread here, made
    # certain: with a threshold of 1 a collection runs at each allocation of a tracked object
    # (each item tuple of sys.modules.items(), once the tuple free list is used up), and each
    # collection adds a module to sys.modules.
    name = _write(extension_dir, EXTENSION.format(extra="pass"))
    added: list[str] = []

    def other_thread_imports(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            key = f"_cogs_probe_{len(added)}"
            sys.modules[key] = types.ModuleType(key)
            added.append(key)

    free_list_used_up = [(i, i) for i in range(3000)]  # noqa: F841 - kept alive on purpose
    threshold = gc.get_threshold()
    gc.callbacks.append(other_thread_imports)
    gc.set_threshold(1)
    try:
        client.load_extension(name)
        client.reload_extension(name)
        client.unload_extension(name)
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(other_thread_imports)
        for key in added:
            sys.modules.pop(key, None)
    assert added  # the other thread did change sys.modules meanwhile
    assert client.extensions == {} and client.cogs == {} and name not in sys.modules


def test_a_failing_setup_in_the_world_leaves_the_bot_as_it_was(
    bot_world: Any, bot_client: Client, say: Any, expect_reply: Any, extension_dir: pathlib.Path
) -> None:
    source = BANK.format(version="v1", channel=bot_world.general.id) + "        raise KeyError('BANK_CHANNEL')\n"
    name = _write(extension_dir, source)
    with pytest.raises(ExtensionFailedError, match=f"extension {name!r}: setup.*KeyError"):
        bot_client.load_extension(name)
    assert bot_client.cogs == {} and bot_client.extensions == {}
    assert bot_world.advance(3600) == 0  # its task was made and started, and is stopped
    ignored = say("general", "!bal")
    say("general", "hello bank")
    say("general", "!ping")
    assert expect_reply(ignored).content == "Pong!"
