"""pytest fixtures for bot authors: test a bot against the local emulator.

Registered as a ``pytest11`` entry point, so installing ``service_client``
makes the fixtures available in any test suite. Import-light: the emulator is
imported only when a fixture needs it, and a missing ``emulator`` extra skips
the test with its reason printed.

A complete test of a bot, built by its own factory (the ``bot_factory``
fixture: the one way to give the bot under test its commands and listeners)::

    import pytest

    from service_client import Client, CommandDispatcher

    def build_bot(**options):
        client = Client(**options)
        commands = CommandDispatcher(client, prefix="!")

        @commands.command()
        def ping(ctx):
            ctx.reply("Pong!")

        return client

    @pytest.fixture
    def bot_factory():
        return build_bot

    def test_ping(bot_world, bot_client, say, expect_reply):
        said = say("general", "!ping")                 # as alice, the server's owner
        assert expect_reply(said).content == "Pong!"   # the bot's next message in #general

Fixtures:

- ``bot_world`` (:class:`BotWorld`): on a freshly reset emulator, the users
  ``alice`` (owner), ``bob`` (the ``Moderator`` role), ``carol`` (no role)
  and the bot ``testbot`` (the ``Bot`` role), all members of ``Test
  Server``, which has the text channels ``general`` and ``random`` (category
  ``Text``) and the voice channel ``voice``.
- ``bot_client``: a :class:`~service_client.Client` logged in as the world's
  bot, returned once its ``ready`` listeners have run, timed by the world's
  clock (``bot_world.clock``), destroyed at teardown. It is made by the ``bot_factory`` fixture,
  ``Client`` by default; override it to test your own bot's setup::

      @pytest.fixture
      def bot_factory():
          return build_client     # called with base_url= and socket_url=, returns a Client

- ``say`` and ``expect_reply``: :meth:`BotWorld.say` and
  :meth:`BotWorld.expect_reply`, race-free (see there).
- ``expect_message``: :meth:`BotWorld.expect_message`, for a message the bot
  posts on its own (no ``say`` before it); made before the action that
  causes it, so it cannot miss it; ``since="start"`` for what the bot said
  before the test body began (in its ``ready`` listener).
- ``expect_dm`` and ``expect_reaction``: :meth:`BotWorld.expect_dm` (the
  bot's next DM to a user) and :meth:`BotWorld.expect_reaction` (its next
  reaction to a message).

The people of ``bot_world`` act with its methods (``react``, ``unreact``,
``typing``, ``dm``, ``join``, ``leave``, ``kick``, ``ban``, ``create_role``,
``give_role``, ``take_role``, ``create_channel``); with ``bot_client`` in the
test, each returns once the bot's listeners of the event it caused have run.
The world finds channels and roles by name however they were made (by the
world, by the bot, through the emulator's control plane). It runs the
emulator with its limit mode on (``bot_world.limits``, see
:class:`BotWorld`), so a message over the limits is refused in tests as it
would be in production.
- ``service_emulator_server`` (an emulator for the session) and
  ``service_emulator`` (the same, reset before each test).
- ``listener_errors`` (see below).

The plugin judges only the clients made through its own fixtures: the
``bot_client`` and the users' clients of ``bot_world`` (``say`` speaks through
them). Clients a test builds itself are its own business.

Listener errors fail tests: when a listener of one of those clients raises
while a test runs (its setup, call and teardown included) and no ``error``
listener of that client handled it, the test fails and the report shows each
exception with its traceback (the bot token redacted). An exception an
``error`` listener handled is not a failure (an ``error`` listener that raises
is). A listener that fails because its client is being destroyed (for example
``destroy()`` at teardown ended the reply it was waiting for) does not count.
A test that provokes listener errors on purpose says so with the
``listener_errors`` fixture::

    def test_bad_command(service_emulator, listener_errors):
        listener_errors.expect(ValueError, match="unknown command")
        ...  # make the bot's listener raise ValueError("unknown command: !nope")
        exc = listener_errors.wait(ValueError)  # optional: block until it happened

Clients left running: a :class:`~service_client.Client` pointed at the
plugin's emulator, created during a test (its function-scoped fixtures
included), that is still logged in, or logging in, once the test's fixtures are
torn down is destroyed by the plugin, and a :class:`ClientLeftRunningWarning`
names it. Clients made by fixtures of a wider scope (module, session), and
clients of other servers, are left alone.

Switching the plugin off: it is registered as the pytest plugin
``service_client``, so ``pytest -p no:service_client`` (or ``addopts = -p
no:service_client`` in a suite's configuration) disables its fixtures and
checks entirely.
"""

from __future__ import annotations

import threading
import warnings
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from .client import Client, ClientState, _live_clients
from .events import emitter

# The helpers live apart from the fixtures and hooks that pytest loads from this module: the
# world in .testing (world, actions, handles, recorder), the listener error record in
# .testing.listener_errors.
from .testing import (
    LOGIN_TIMEOUT_S,
    BotWorld,
    ExpectedMessage,
    ListenerErrors,
    SeenReaction,
    WorldObject,
    WorldRole,
    WorldUser,
)
from .testing import REPLY_TIMEOUT_S as REPLY_TIMEOUT_S
from .testing.clock import login_bot

if TYPE_CHECKING:  # pragma: no cover - annotations only: the plugin loads without the emulator extra
    from .emulator import Emulator
    from .models.message import Message

__all__ = [
    "BotWorld",
    "ClientLeftRunningWarning",
    "ExpectedMessage",
    "ListenerErrors",
    "SeenReaction",
    "WorldObject",
    "WorldRole",
    "WorldUser",
    "bot_client",
    "bot_factory",
    "bot_world",
    "expect_dm",
    "expect_message",
    "expect_reaction",
    "expect_reply",
    "listener_errors",
    "say",
    "service_emulator",
    "service_emulator_server",
]

_RECORDER_KEY = pytest.StashKey[ListenerErrors]()

#: The clients made through this plugin's fixtures (``bot_client``) and the worlds whose users'
#: clients it made (``bot_world``): the only clients whose listener errors it judges.
_OWN_CLIENTS: weakref.WeakSet[Client] = weakref.WeakSet()
_OWN_WORLDS: weakref.WeakSet[BotWorld] = weakref.WeakSet()


def _own_client_running_this_thread() -> Client | None:
    """The plugin's own client whose worker pool runs the calling thread, or None."""
    here = threading.current_thread()
    candidates = list(_OWN_CLIENTS) + [client for world in list(_OWN_WORLDS) for client in world.clients()]
    for client in candidates:
        if here in client._pool.threads:
            return client
    return None


def _judging(recorder: ListenerErrors) -> Callable[[str, BaseException, str], None]:
    """The listener error hook of one test: records the exceptions a listener of one of the
    plugin's own clients raised that no ``error`` listener of that client handled."""

    def judge(event: str, exc: BaseException, text: str) -> None:
        """Record ``exc`` when it is the plugin's to judge (runs on the listener's thread)."""
        client = _own_client_running_this_thread()
        if client is None:
            return
        if event != "error" and client.listeners("error"):
            return  # handled: the client's error listener got it
        recorder._record(event, exc, text)

    return judge


@pytest.fixture(autouse=True)
def _service_client_listener_errors(request: pytest.FixtureRequest) -> Iterator[ListenerErrors]:
    """Record listener exceptions for the whole test; fail it on unexpected ones at teardown."""
    recorder = ListenerErrors()
    request.node.stash[_RECORDER_KEY] = recorder
    hook = _judging(recorder)
    emitter._add_listener_error_hook(hook)
    try:
        yield recorder
    finally:
        emitter._remove_listener_error_hook(hook)
    reported = getattr(request.node, "_service_client_reported", 0)
    unexpected = recorder._unexpected()[reported:]
    if unexpected:
        pytest.fail(recorder._failure_text(unexpected), pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Fail the test call itself when its listeners raised unexpectedly so far."""
    outcome: Any = yield
    recorder = item.stash.get(_RECORDER_KEY, None)
    if recorder is None:
        return
    unexpected = recorder._unexpected()
    if not unexpected:
        return
    if outcome.excinfo is not None:
        # The test failed already (a failed expectation of the world lists these errors in
        # brief): their tracebacks go with that one failure, not into a second one at teardown.
        item._service_client_reported = len(unexpected)  # type: ignore[attr-defined]
        item.add_report_section("call", "listener errors", recorder._failure_text(unexpected))
        return
    if hasattr(outcome, "force_exception"):
        item._service_client_reported = len(unexpected)  # type: ignore[attr-defined]
        outcome.force_exception(pytest.fail.Exception(recorder._failure_text(unexpected), pytrace=False))


@pytest.fixture
def listener_errors(_service_client_listener_errors: ListenerErrors) -> ListenerErrors:
    """The listener exceptions of this test; call ``expect()`` or ``wait()`` to allow them.

    Returns:
        The test's :class:`ListenerErrors`.
    """
    return _service_client_listener_errors


#: The session's emulator while ``service_emulator_server`` runs (one entry), else empty.
_SESSION_EMULATOR: list[Emulator] = []


@pytest.fixture(scope="session")
def service_emulator_server() -> Iterator[Emulator]:
    """A running in-process emulator (127.0.0.1, free port, in-memory), shared by the session.

    Yields:
        A started :class:`service_client.emulator.Emulator`; stopped at the end.
    """
    module = pytest.importorskip(
        "service_client.emulator",
        reason="the emulator extra is not installed: pip install 'service_client[emulator]'",
    )
    with module.Emulator() as emu:
        _SESSION_EMULATOR[:] = [emu]
        try:
            yield emu
        finally:
            _SESSION_EMULATOR.clear()


@pytest.fixture
def service_emulator(service_emulator_server: Emulator) -> Emulator:
    """The session's emulator, reset (state, faults, limiter, journal, sockets) before the test."""
    service_emulator_server.reset()
    return service_emulator_server


# -- clients left running ------------------------------------------------------------------------


class ClientLeftRunningWarning(UserWarning):
    """A test ended with a :class:`~service_client.Client` still logged in (the plugin destroyed it).

    Call ``client.destroy()`` at the end of the test (``with Client() as client:`` does it), or
    use the ``bot_client`` fixture, which does.
    """


#: Clients created while a fixture of a wider scope than a function was set up.
_LONG_LIVED: weakref.WeakSet[Any] = weakref.WeakSet()


def _running(client: Client) -> bool:
    return client.state in (ClientState.CONNECTING, ClientState.READY)


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest) -> Iterator[None]:
    """Remember the clients that fixtures of a module, class, package or session scope create."""
    if fixturedef.scope == "function":
        yield
        return
    before = set(map(id, _live_clients()))
    yield
    for client in _live_clients():
        if id(client) not in before:
            _LONG_LIVED.add(client)


@pytest.fixture(autouse=True)
def _service_client_running_clients(request: pytest.FixtureRequest) -> Iterator[None]:
    """Destroy, and warn about, the clients a test leaves running (checked after its other fixtures)."""
    existing: weakref.WeakSet[Any] = weakref.WeakSet(_live_clients())
    yield
    emulator = _SESSION_EMULATOR[0] if _SESSION_EMULATOR else None
    if emulator is None:
        return  # the plugin's emulator never ran: no client of this test is the plugin's
    left = [c for c in _live_clients() if c not in existing and c not in _LONG_LIVED and _running(c)
            and c.base_url == emulator.base_url.rstrip("/")]
    shown = ", ".join(repr(c) for c in left)  # as they were, before destroy()
    for client in left:
        client.destroy()
    if left:
        warnings.warn(
            ClientLeftRunningWarning(
                f"{request.node.nodeid} left {len(left)} Client(s) running: {shown}. Call destroy() at the "
                "end of the test (or use the bot_client fixture); the plugin destroyed them."
            ),
            stacklevel=1,
        )



@pytest.fixture
def bot_world(service_emulator: Emulator, _service_client_listener_errors: ListenerErrors) -> Iterator[BotWorld]:
    """A reset emulator seeded with a server, users, roles, channels and the bot as a member.

    Yields:
        The :class:`BotWorld`; its users' clients are destroyed at teardown. A failed
        expectation of it shows the test's listener errors.
    """
    world = BotWorld(service_emulator, listener_errors=_service_client_listener_errors)
    _OWN_WORLDS.add(world)
    try:
        with world.new_clients_use_clock():  # every client the test makes is timed by the world's clock
            yield world
    finally:
        world.close()


@pytest.fixture
def bot_factory() -> Callable[..., Client]:
    """What ``bot_client`` calls to make the bot's client: ``Client`` by default.

    Override it in your ``conftest.py`` or test module to test your bot as it is built::

        @pytest.fixture
        def bot_factory():
            return build_client   # build_client(base_url=..., socket_url=...) -> Client

    Returns:
        A callable taking the keyword arguments ``base_url`` and ``socket_url`` and returning a
        :class:`~service_client.Client` that is not logged in.
    """
    return Client


@pytest.fixture
def bot_client(bot_world: BotWorld, bot_factory: Callable[..., Client]) -> Iterator[Client]:
    """A :class:`~service_client.Client` logged in as ``bot_world.bot``, destroyed at teardown.

    Made by the ``bot_factory`` fixture (``Client`` unless overridden), pointed at the emulator,
    timed by ``bot_world.clock`` from its construction on, and handed to the world before its
    login (:meth:`BotWorld.attach_bot`): the world records what the bot says from its first
    message on (``expect_message(..., since="start")``), and the world's actions wait for the
    bot's listeners. It is returned once the bot's ``ready`` listeners have run, so what they
    start (a repeating task, a first message) is started when the test body begins.

    Raises:
        TypeError: ``bot_factory`` did not return a Client.
        TimeoutError: The ``ready`` listeners did not end within 10 s.
    """
    emulator = bot_world.emulator
    client = bot_factory(base_url=emulator.base_url, socket_url=emulator.socket_url)
    if not isinstance(client, Client):
        raise TypeError(f"bot_factory must return a service_client.Client, got {type(client).__name__}")
    _OWN_CLIENTS.add(client)
    bot_world.attach_bot(client)
    try:
        login_bot(client, bot_world.bot.token.get() or "", timeout=LOGIN_TIMEOUT_S)
        yield client
    finally:
        client.destroy()


@pytest.fixture
def say(bot_world: BotWorld) -> Callable[..., Message]:
    """:meth:`BotWorld.say` of the test's ``bot_world``: ``say(channel, text, as_user=None)``."""
    return bot_world.say


@pytest.fixture
def expect_reply(bot_world: BotWorld) -> Callable[..., Message]:
    """:meth:`BotWorld.expect_reply` of the test's ``bot_world``: ``expect_reply(to=None, timeout=10, author=None)``."""
    return bot_world.expect_reply


@pytest.fixture
def expect_message(bot_world: BotWorld) -> Callable[..., ExpectedMessage]:
    """:meth:`BotWorld.expect_message` of the test's ``bot_world``:
    ``expect_message(channel, timeout=10, check=None, author=None, as_user=None, since="now")``,
    made before the action::

        with expect_message("general") as got:
            bot_world.join("dave")
        assert got.result().content == "Welcome, dave!"

        # what the bot said in its ready listener, before the test body began
        assert expect_message("general", since="start").result().content == "Hello!"
    """
    return bot_world.expect_message


@pytest.fixture
def expect_dm(bot_world: BotWorld) -> Callable[..., Message]:
    """:meth:`BotWorld.expect_dm` of the test's ``bot_world``: the bot's next DM to a user, sent
    after the world's last action: ``expect_dm(user, since="action", timeout=10, check=None)``::

        bot_world.join("dave")
        assert expect_dm("dave").content == "Welcome to Test Server!"
    """
    return bot_world.expect_dm


@pytest.fixture
def expect_reaction(bot_world: BotWorld) -> Callable[..., SeenReaction]:
    """:meth:`BotWorld.expect_reaction` of the test's ``bot_world``: the bot's next reaction to a
    message said: ``expect_reaction(to=None, emoji=None, timeout=10, author=None)``::

        said = say("general", "!vote pizza")
        assert expect_reaction(said).emoji == "👍"
    """
    return bot_world.expect_reaction
