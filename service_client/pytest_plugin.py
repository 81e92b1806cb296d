"""pytest fixtures for bot authors: test a bot against the local emulator.

Registered as a ``pytest11`` entry point, so installing ``service_client``
makes the fixtures available in any test suite. Import-light: the emulator is
imported only when a fixture needs it, and a missing ``emulator`` extra skips
the test with its reason printed.

A complete test of a bot::

    from service_client import CommandDispatcher

    def add_commands(client):
        commands = CommandDispatcher(client, prefix="!")

        @commands.command()
        def ping(ctx):
            ctx.reply("Pong!")

    def test_ping(bot_world, bot_client, say, expect_reply):
        add_commands(bot_client)
        said = say("general", "!ping")                 # as alice, the server's owner
        assert expect_reply(said).content == "Pong!"   # the bot's next message in #general

Fixtures:

- ``bot_world`` (:class:`BotWorld`): on a freshly reset emulator, the users
  ``alice`` (owner), ``bob`` (the ``Moderator`` role), ``carol`` (no role)
  and the bot ``testbot`` (the ``Bot`` role), all members of ``Test
  Server``, which has the text channels ``general`` and ``random`` (category
  ``Text``) and the voice channel ``voice``.
- ``bot_client``: a :class:`~service_client.Client` logged in as the world's
  bot, destroyed at teardown. It is made by the ``bot_factory`` fixture,
  ``Client`` by default; override it to test your own bot's setup::

      @pytest.fixture
      def bot_factory():
          return build_client     # called with base_url= and socket_url=, returns a Client

- ``say`` and ``expect_reply``: :meth:`BotWorld.say` and
  :meth:`BotWorld.expect_reply`, race-free (see there).
- ``service_emulator_server`` (an emulator for the session) and
  ``service_emulator`` (the same, reset before each test).
- ``listener_errors`` (see below).

Listener errors fail tests: when a listener of any client raises while a test
runs (its setup, call and teardown included), the test fails and the report
shows each exception with its traceback, even when an ``error`` listener
handled it. A listener that fails because its client is being destroyed (for
example ``destroy()`` at teardown ended the reply it was waiting for) does not
count. A test that provokes listener errors on purpose says so with the
``listener_errors`` fixture::

    def test_bad_command(service_emulator, listener_errors):
        listener_errors.expect(ValueError, match="unknown command")
        ...  # make the bot's listener raise ValueError("unknown command: !nope")
        exc = listener_errors.wait(ValueError)  # optional: block until it happened

Clients left running: a :class:`~service_client.Client` created during a test
(its function-scoped fixtures included) that is still logged in, or logging
in, once the test's fixtures are torn down is destroyed by the plugin, and a
:class:`ClientLeftRunningWarning` names it. Clients made by fixtures of a wider
scope (module, session) are left alone.
"""

from __future__ import annotations

import re
import threading
import time
import traceback
import warnings
import weakref
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # pragma: no cover
    from ._secret import Secret
    from .client import Client
    from .models.message import Message

__all__ = [
    "BotWorld",
    "ClientLeftRunningWarning",
    "ListenerErrors",
    "WorldObject",
    "WorldUser",
    "bot_client",
    "bot_factory",
    "bot_world",
    "expect_reply",
    "listener_errors",
    "say",
    "service_emulator",
    "service_emulator_server",
]

#: Seconds :meth:`BotWorld.expect_reply` waits by default.
REPLY_TIMEOUT_S = 10.0
#: Seconds a login of the bot or of a speaking user may take.
LOGIN_TIMEOUT_S = 15.0


class ListenerErrors:
    """The exceptions raised by listeners during one test, and those the test expects.

    Thread-safe: listeners record from worker threads while the test reads.
    """

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._errors: list[tuple[str, BaseException]] = []
        self._expected: list[tuple[type[BaseException], re.Pattern[str] | None]] = []

    def _record(self, event: str, exc: BaseException) -> None:
        with self._lock:
            self._errors.append((event, exc))
            self._lock.notify_all()

    @property
    def errors(self) -> list[BaseException]:
        """Every exception raised by a listener so far in this test, in order (a copy)."""
        with self._lock:
            return [exc for _, exc in self._errors]

    def expect(self, exc_type: type[BaseException] = Exception, *, match: str | None = None) -> None:
        """Declare that listeners may raise ``exc_type`` in this test without failing it.

        Args:
            exc_type: The exception class expected (subclasses match too).
            match: A regular expression searched in ``str(exc)``; None accepts any text.

        Raises:
            TypeError: ``exc_type`` is not an exception class or ``match`` is not a str.
        """
        if not (isinstance(exc_type, type) and issubclass(exc_type, BaseException)):
            raise TypeError(f"exc_type must be an exception class, got {exc_type!r}")
        if match is not None and not isinstance(match, str):
            raise TypeError(f"match must be a str or None, got {type(match).__name__}")
        with self._lock:
            self._expected.append((exc_type, None if match is None else re.compile(match)))

    def wait(
        self, exc_type: type[BaseException] = Exception, *, match: str | None = None, timeout: float = 10.0
    ) -> BaseException:
        """Expect ``exc_type`` (as :meth:`expect`) and block until a listener raised one.

        Args:
            exc_type: The exception class awaited.
            match: A regular expression searched in ``str(exc)``.
            timeout: Seconds to wait.

        Returns:
            The first matching exception raised in this test (possibly before the call).

        Raises:
            AssertionError: No listener raised a matching exception within ``timeout``.
        """
        self.expect(exc_type, match=match)
        pattern = None if match is None else re.compile(match)

        def found() -> BaseException | None:
            for _, exc in self._errors:
                if isinstance(exc, exc_type) and (pattern is None or pattern.search(str(exc))):
                    return exc
            return None

        with self._lock:
            if not self._lock.wait_for(lambda: found() is not None, timeout):
                raise AssertionError(f"no listener raised {exc_type.__name__} within {timeout} s")
            exc = found()
            assert exc is not None
            return exc

    def _unexpected(self) -> list[tuple[str, BaseException]]:
        with self._lock:
            return [
                (event, exc)
                for event, exc in self._errors
                if not any(
                    isinstance(exc, kind) and (pattern is None or pattern.search(str(exc)))
                    for kind, pattern in self._expected
                )
            ]

    def _failure_text(self, unexpected: list[tuple[str, BaseException]]) -> str:
        parts = [
            f"{len(unexpected)} exception(s) raised by event listeners during this test; "
            "a test that expects them calls listener_errors.expect(...)"
        ]
        for event, exc in unexpected:
            parts.append(f"--- in a {event!r} listener:")
            parts.append("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip())
        return "\n".join(parts)


_RECORDER_KEY = pytest.StashKey[ListenerErrors]()


@pytest.fixture(autouse=True)
def _service_client_listener_errors(request: pytest.FixtureRequest) -> Iterator[ListenerErrors]:
    """Record listener exceptions for the whole test; fail it on unexpected ones at teardown."""
    from . import events

    recorder = ListenerErrors()
    request.node.stash[_RECORDER_KEY] = recorder
    events._add_listener_error_hook(recorder._record)
    try:
        yield recorder
    finally:
        events._remove_listener_error_hook(recorder._record)
    reported = getattr(request.node, "_service_client_reported", 0)
    unexpected = recorder._unexpected()[reported:]
    if unexpected:
        pytest.fail(recorder._failure_text(unexpected), pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Fail the test call itself when its listeners raised unexpectedly so far."""
    outcome: Any = yield
    recorder = item.stash.get(_RECORDER_KEY, None)
    if recorder is None or outcome.excinfo is not None or not hasattr(outcome, "force_exception"):
        return
    unexpected = recorder._unexpected()
    if unexpected:
        item._service_client_reported = len(unexpected)  # type: ignore[attr-defined]
        outcome.force_exception(pytest.fail.Exception(recorder._failure_text(unexpected), pytrace=False))


@pytest.fixture
def listener_errors(_service_client_listener_errors: ListenerErrors) -> ListenerErrors:
    """The listener exceptions of this test; call ``expect()`` or ``wait()`` to allow them.

    Returns:
        The test's :class:`ListenerErrors`.
    """
    return _service_client_listener_errors


@pytest.fixture(scope="session")
def service_emulator_server() -> Iterator[Any]:
    """A running in-process emulator (127.0.0.1, free port, in-memory), shared by the session.

    Yields:
        A started :class:`service_client.emulator.Emulator`; stopped at the end.
    """
    module = pytest.importorskip(
        "service_client.emulator",
        reason="the emulator extra is not installed: pip install 'service_client[emulator]'",
    )
    with module.Emulator() as emu:
        yield emu


@pytest.fixture
def service_emulator(service_emulator_server: Any) -> Any:
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
    from .client import ClientState

    return client.state in (ClientState.CONNECTING, ClientState.READY)


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest) -> Iterator[None]:
    """Remember the clients that fixtures of a module, class, package or session scope create."""
    if fixturedef.scope == "function":
        yield
        return
    from .client import _live_clients

    before = set(map(id, _live_clients()))
    yield
    for client in _live_clients():
        if id(client) not in before:
            _LONG_LIVED.add(client)


@pytest.fixture(autouse=True)
def _service_client_running_clients(request: pytest.FixtureRequest) -> Iterator[None]:
    """Destroy, and warn about, the clients a test leaves running (checked after its other fixtures)."""
    from .client import _live_clients

    existing: weakref.WeakSet[Any] = weakref.WeakSet(_live_clients())
    yield
    left = [c for c in _live_clients() if c not in existing and c not in _LONG_LIVED and _running(c)]
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


# -- a seeded world --------------------------------------------------------------------------------


class WorldUser:
    """A user seeded in a :class:`BotWorld`; its token is held as a secret.

    Attributes:
        id: The user's public id.
        name: The user's name.
        bot: True for the bot account.
        record: The User record the emulator returned (a dict).
    """

    __slots__ = ("id", "name", "bot", "record", "_token")

    def __init__(self, created: Mapping[str, Any]) -> None:
        from ._secret import Secret

        record = dict(created["user"])
        self.id: str = record["publicId"]
        self.name: str = record["name"]
        self.bot: bool = bool(record.get("isBot"))
        self.record = record
        self._token = Secret(created["token"])

    @property
    def token(self) -> Secret:
        """The user's token, a :class:`~service_client._secret.Secret` (``token.get()`` gives the text)."""
        return self._token

    @property
    def mention(self) -> str:
        """The mention text ``<@id>``."""
        return f"<@{self.id}>"

    def __repr__(self) -> str:
        return f"<WorldUser id={self.id!r} name={self.name!r} bot={self.bot!r}>"


class WorldObject:
    """A server, channel or role seeded in a :class:`BotWorld`.

    Attributes:
        id: Its public id.
        name: Its name.
        kind: ``"server"``, ``"channel"`` or ``"role"``.
        record: The record the emulator returned (a dict).
    """

    __slots__ = ("id", "name", "kind", "record")

    def __init__(self, kind: str, record: Mapping[str, Any]) -> None:
        self.kind = kind
        self.record = dict(record)
        self.id: str = self.record["publicId"]
        self.name: str = self.record["name"]

    def __repr__(self) -> str:
        return f"<WorldObject kind={self.kind!r} id={self.id!r} name={self.name!r}>"


class _Recorder:
    """Every message a speaking user's client received, in arrival order (one channel's in order)."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.messages: list[Message] = []
        self.consumed: set[str] = set()

    def record(self, message: Message) -> None:
        with self.cond:
            self.messages.append(message)
            self.cond.notify_all()


class BotWorld:
    """A server with users, roles and channels on a reset emulator, and a way to talk to the bot.

    Built by the ``bot_world`` fixture. The seeded objects:

    ========================  =====================================================================
    ``server``                ``Test Server``, owned by ``alice``
    ``owner``                 ``alice``, the owner (every permission)
    ``moderator``             ``bob``, with the ``Moderator`` role (KICK_MEMBERS, BAN_MEMBERS,
                              MANAGE_MESSAGES)
    ``member``                ``carol``, no role (the server's default permissions)
    ``bot``                   ``testbot``, a bot account with the ``Bot`` role (the Moderator
                              permissions plus MANAGE_ROLES and MANAGE_CHANNELS)
    ``general``, ``random``   text channels in the category ``Text``
    ``voice``                 a voice channel, uncategorised
    ``moderator_role``,       the two roles
    ``bot_role``
    ========================  =====================================================================

    :meth:`user`, :meth:`channel` and :meth:`role` find them by name; :meth:`add_user` adds a
    member. Talking to the bot: :meth:`say` posts as a user through that user's own logged-in
    :class:`~service_client.Client` (made on first use, destroyed at teardown), and
    :meth:`expect_reply` returns the bot's answer. Both return :class:`~service_client.Message`
    objects, whose ``content`` is the text as typed (the service escapes ``& < >`` on the wire;
    ``emulator.messages(channel_id, decoded=True)`` reads stored messages the same way).

    Thread-safe.

    Attributes:
        emulator: The running :class:`~service_client.emulator.Emulator`.
    """

    #: Permissions of the ``Moderator`` role.
    MODERATOR_PERMISSIONS = (1 << 6) | (1 << 7) | (1 << 8)
    #: Permissions of the ``Bot`` role.
    BOT_PERMISSIONS = MODERATOR_PERMISSIONS | (1 << 1) | (1 << 2)

    def __init__(self, emulator: Any) -> None:
        self.emulator = emulator
        self._lock = threading.Lock()
        self._users: list[WorldUser] = []
        self._objects: list[WorldObject] = []
        self._clients: dict[str, Future[Client]] = {}
        self._made: list[Client] = []
        self._recorders: dict[int, _Recorder] = {}
        self._last_said: Message | None = None
        self._closed = False

        owner = self._new_user("alice")
        made = emulator.create_server(
            "Test Server",
            owner.id,
            categories=[{"name": "Text", "channels": [{"name": "general", "type": "TEXT"},
                                                       {"name": "random", "type": "TEXT"}]}],
            channels=[{"name": "voice", "type": "VOICE"}],
        )
        self.server = self._add("server", made["server"])
        for channel in made["channels"]:
            self._add("channel", channel)
        self.moderator_role = self._add(
            "role", emulator.create_role(self.server.id, "Moderator", self.MODERATOR_PERMISSIONS)["role"])
        self.bot_role = self._add("role", emulator.create_role(self.server.id, "Bot", self.BOT_PERMISSIONS)["role"])
        self.owner = owner
        self.moderator = self.add_user("bob", roles=[self.moderator_role])
        self.member = self.add_user("carol")
        self.bot = self.add_user("testbot", bot=True, roles=[self.bot_role])
        self.general = self.channel("general")
        self.random = self.channel("random")
        self.voice = self.channel("voice")

    def _new_user(self, name: str, *, bot: bool = False) -> WorldUser:
        user = WorldUser(self.emulator.create_user(name, bot=bot))
        with self._lock:
            self._users.append(user)
        return user

    def _add(self, kind: str, record: Mapping[str, Any]) -> WorldObject:
        obj = WorldObject(kind, record)
        with self._lock:
            self._objects.append(obj)
        return obj

    # -- seeding and lookups ----------------------------------------------------------------------

    def add_user(self, name: str, *, bot: bool = False, roles: Any = ()) -> WorldUser:
        """Create a user and make it a member of the server.

        Args:
            name: The user's name.
            bot: Create a bot account.
            roles: Roles to give it: :class:`WorldObject` roles, role names or ids.

        Returns:
            The new :class:`WorldUser`.

        Raises:
            LookupError: A role name or id is unknown.
            ValueError: The emulator refused the name.
        """
        role_ids = [self._role_id(r) for r in roles]
        user = self._new_user(name, bot=bot)
        self.emulator.add_member(self.server.id, user.id, role_ids=role_ids or None)
        return user

    def user(self, name_or_id: str) -> WorldUser:
        """The seeded user with this name (else this id).

        Raises:
            LookupError: No such user in this world.
        """
        with self._lock:
            users = list(self._users)
        for user in users:
            if user.name == name_or_id:
                return user
        for user in users:
            if user.id == name_or_id:
                return user
        raise LookupError(f"no user {name_or_id!r} in this world; known: {', '.join(u.name for u in users)}")

    def channel(self, name_or_id: str) -> WorldObject:
        """The seeded channel with this name (else this id).

        Raises:
            LookupError: No such channel in this world.
        """
        return self._find("channel", name_or_id)

    def role(self, name_or_id: str) -> WorldObject:
        """The seeded role with this name (else this id).

        Raises:
            LookupError: No such role in this world.
        """
        return self._find("role", name_or_id)

    def _find(self, kind: str, name_or_id: str) -> WorldObject:
        with self._lock:
            objects = [o for o in self._objects if o.kind == kind]
        for obj in objects:
            if obj.name == name_or_id:
                return obj
        for obj in objects:
            if obj.id == name_or_id:
                return obj
        raise LookupError(f"no {kind} {name_or_id!r} in this world; known: {', '.join(o.name for o in objects)}")

    def _role_id(self, role: Any) -> str:
        if isinstance(role, WorldObject):
            return role.id
        if isinstance(role, str):
            return self.role(role).id
        raise TypeError(f"a role must be a WorldObject or a role name, got {type(role).__name__}")

    def _channel_id(self, channel: Any) -> str:
        if isinstance(channel, str):
            if not channel:
                raise ValueError("channel must not be empty")
            try:
                return self.channel(channel).id
            except LookupError:
                return channel  # a channel this world did not seed (a DM, a new channel)
        ident = channel.get("publicId") if isinstance(channel, Mapping) else getattr(channel, "id", None)
        if isinstance(ident, str) and ident:
            return ident
        raise TypeError(
            "channel must be a channel name or id, a WorldObject, a Channel or a channel record, "
            f"got {type(channel).__name__}"
        )

    def _speaker(self, as_user: Any) -> WorldUser:
        if as_user is None:
            return self.owner
        if isinstance(as_user, WorldUser):
            return as_user
        if isinstance(as_user, str):
            return self.user(as_user)
        ident = getattr(as_user, "id", None)
        if isinstance(ident, str):
            return self.user(ident)
        raise TypeError(f"as_user must be a WorldUser, a user name or id, got {type(as_user).__name__}")

    # -- talking to the bot ---------------------------------------------------------------------------

    def client_for(self, user: WorldUser | str) -> Client:
        """The logged-in :class:`~service_client.Client` of a seeded user (made on first use).

        It records every message it receives from the moment it is made, which is what
        :meth:`expect_reply` reads. Destroyed at the fixture's teardown.

        Raises:
            LookupError: An unknown user name.
            ServiceError: The login failed.
        """
        from .client import Client

        speaker = self._speaker(user)
        with self._lock:
            if self._closed:
                raise RuntimeError("this BotWorld was torn down")
            pending = self._clients.get(speaker.id)
            owner = pending is None
            if pending is None:
                pending = self._clients[speaker.id] = Future()
        if not owner:
            return pending.result(LOGIN_TIMEOUT_S + 5)
        try:
            client = Client(base_url=self.emulator.base_url, socket_url=self.emulator.socket_url, workers=1)
            recorder = _Recorder()
            client.on("message_create", recorder.record)
            with self._lock:
                self._recorders[id(client)] = recorder
                self._made.append(client)
            client.login(speaker.token.get() or "", timeout=LOGIN_TIMEOUT_S)
        except BaseException as exc:
            with self._lock:
                self._clients.pop(speaker.id, None)
            pending.set_exception(exc)
            raise
        pending.set_result(client)
        return client

    def say(self, channel: Any, text: str, *, as_user: WorldUser | str | None = None) -> Message:
        """Post ``text`` in a channel as a seeded user, through that user's own socket.

        Race-free with :meth:`expect_reply`: the user's client records every message it receives
        from before the post, so a reply that comes at once is not missed.

        Args:
            channel: A channel name of this world (``"general"``), a channel id (a DM's too), a
                :class:`WorldObject`, a :class:`~service_client.Channel` or a channel record.
            text: The text, as typed (the service escapes it on the wire).
            as_user: Who speaks: a :class:`WorldUser`, a user name or id; default ``alice``, the
                server's owner.

        Returns:
            The posted :class:`~service_client.Message` (as the service echoed it).

        Raises:
            TypeError, ValueError, LookupError: A bad channel or user.
            ServiceAuthError, TimeoutError: The send failed or was not echoed within 10 s.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        channel_id = self._channel_id(channel)
        client = self.client_for(self._speaker(as_user))
        message = client.send_message(channel_id, text)
        with self._lock:
            self._last_said = message
        return message

    def expect_reply(
        self, to: Message | None = None, *, timeout: float = REPLY_TIMEOUT_S, author: WorldUser | str | None = None
    ) -> Message:
        """The bot's next message in the channel of ``to``, after ``to``.

        Each call returns a message no earlier call returned, so two calls give the bot's first
        two messages after ``to``. A message the bot sent before ``to`` never counts. To check
        that the bot ignored a message, say another one it answers and expect that answer as the
        first reply to the first message::

            ignored = say("general", "!nope")
            say("general", "!ping")
            assert expect_reply(ignored).content == "Pong!"   # nothing came in between

        Args:
            to: A message returned by :meth:`say`; default the last one said.
            timeout: Seconds to wait.
            author: Whose message counts as the reply: a :class:`WorldUser`, name or id;
                default the world's bot.

        Returns:
            The reply, a :class:`~service_client.Message` as the speaker's client received it
            (``content`` decoded: the text as the bot sent it).

        Raises:
            AssertionError: No such message within ``timeout`` (the text lists the messages
                seen in that channel after ``to``).
            ValueError: Nothing was said yet, or ``to`` was not returned by :meth:`say`.
        """
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
            raise ValueError(f"timeout must be a non-negative number of seconds, got {timeout!r}")
        with self._lock:
            said = to if to is not None else self._last_said
        if said is None:
            raise ValueError("expect_reply() needs a message: nothing was said yet (use say() first)")
        recorder = self._recorders.get(id(said.client))
        if recorder is None:
            raise ValueError("expect_reply() takes a message returned by say()")
        replier = self.bot if author is None else self._speaker(author)
        deadline = time.monotonic() + timeout
        with recorder.cond:
            while True:
                seen: list[Message] = []
                found_said = False
                for message in recorder.messages:
                    if message.id == said.id:
                        found_said = True
                    elif found_said and message.channel_id == said.channel_id:
                        seen.append(message)
                        if (
                            message.author is not None
                            and message.author.id == replier.id
                            and message.id not in recorder.consumed
                        ):
                            recorder.consumed.add(message.id)
                            return message
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    lines = "; ".join(
                        f"{m.author.username if m.author else None}: {m.content!r}" for m in seen
                    ) or "none"
                    raise AssertionError(
                        f"no reply from {replier.name} to {said.content!r} within {timeout} s "
                        f"(messages after it in that channel: {lines})"
                    )
                recorder.cond.wait(remaining)

    def close(self) -> None:
        """Destroy the users' clients made by :meth:`client_for` (the fixture does it at teardown)."""
        with self._lock:
            self._closed = True
            clients, self._made = self._made, []
        for client in clients:
            client.destroy()

    def __repr__(self) -> str:
        return (
            f"<BotWorld server={self.server.id!r} bot={self.bot.id!r} "
            f"users={[u.name for u in self._users]!r}>"
        )


@pytest.fixture
def bot_world(service_emulator: Any) -> Iterator[BotWorld]:
    """A reset emulator seeded with a server, users, roles, channels and the bot as a member.

    Yields:
        The :class:`BotWorld`; its users' clients are destroyed at teardown.
    """
    world = BotWorld(service_emulator)
    try:
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
    from .client import Client

    return Client


@pytest.fixture
def bot_client(bot_world: BotWorld, bot_factory: Callable[..., Client]) -> Iterator[Client]:
    """A :class:`~service_client.Client` logged in as ``bot_world.bot``, destroyed at teardown.

    Made by the ``bot_factory`` fixture (``Client`` unless overridden), pointed at the emulator.

    Raises:
        TypeError: ``bot_factory`` did not return a Client.
    """
    from .client import Client

    emulator = bot_world.emulator
    client = bot_factory(base_url=emulator.base_url, socket_url=emulator.socket_url)
    if not isinstance(client, Client):
        raise TypeError(f"bot_factory must return a service_client.Client, got {type(client).__name__}")
    try:
        client.login(bot_world.bot.token.get() or "", timeout=LOGIN_TIMEOUT_S)
        yield client
    finally:
        client.destroy()


@pytest.fixture
def say(bot_world: BotWorld) -> Callable[..., Message]:
    """:meth:`BotWorld.say` of the test's ``bot_world``: ``say(channel, text, as_user=None)``."""
    return bot_world.say


@pytest.fixture
def expect_reply(bot_world: BotWorld) -> Callable[..., Message]:
    """:meth:`BotWorld.expect_reply` of the test's ``bot_world``: ``expect_reply(to=None, timeout=10)``."""
    return bot_world.expect_reply
