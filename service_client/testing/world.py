"""The seeded world of the pytest plugin's bot fixtures, and the way a test talks to the bot.

:class:`BotWorld` seeds a reset emulator with a server, users, roles and channels. Its users act
as people would (:meth:`~BotWorld.say`, :meth:`~BotWorld.react`, :meth:`~BotWorld.join`,
:meth:`~BotWorld.dm`...), each action returning once the bot's listeners have handled the event
it caused, and its expectations (:meth:`~BotWorld.expect_reply`,
:meth:`~BotWorld.expect_message`, :meth:`~BotWorld.expect_dm`,
:meth:`~BotWorld.expect_reaction`) read what the clients of the world recorded, so an answer
that comes at once is never missed and an answer to an earlier action is never taken for the
answer to a later one. The fixtures of :mod:`service_client.pytest_plugin` hand these out;
import the classes from ``service_client.pytest_plugin``.

The emulator is only named in annotations here: the plugin loads in every pytest session, with
or without the ``emulator`` extra.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from ..client import Client
from ..events.clock import ManualClock, new_clients_use
from ..models.message import Message
from .actions import WorldActions
from .base import LOGIN_TIMEOUT_S, WorldBase
from .clock import ADVANCE_TIMEOUT_S, login_bot
from .handles import WorldObject, WorldUser
from .listener_errors import ListenerErrors
from .recorder import Recorder, SeenReaction, after_mark, scan_until
from .voice import VoiceParticipant, WorldVoice

if TYPE_CHECKING:  # pragma: no cover - annotations only: the plugin loads without the emulator extra
    from ..emulator import Emulator

__all__ = ["NO_REPLY_WINDOW_S", "REPLY_TIMEOUT_S", "BotWorld", "ExpectedMessage"]

#: Seconds the expectations (:meth:`BotWorld.expect_reply` and the others) wait by default.
REPLY_TIMEOUT_S = 10.0
#: Seconds :meth:`BotWorld.expect_no_reply` watches for a message of the bot by default.
NO_REPLY_WINDOW_S = 1.0


def _check_timeout(timeout: object) -> float:
    # At most threading.TIMEOUT_MAX: a longer wait (inf, 1e300) is no bound, and would end in
    # an OverflowError from deep inside the wait instead of this error at the call.
    if (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
            or not 0 <= timeout <= threading.TIMEOUT_MAX):
        raise ValueError(f"timeout must be a non-negative number of seconds (at most "
                         f"{threading.TIMEOUT_MAX:g}), got {timeout!r}")
    return float(timeout)


def _check_callable(check: object) -> None:
    if check is not None and not callable(check):
        raise TypeError(f"check must be a callable or None, got {type(check).__name__}")


P = ParamSpec("P")
R = TypeVar("R")


def _action(method: Callable[Concatenate[WorldActions, P], R]) -> Callable[Concatenate[BotWorld, P], R]:
    """``method`` of the world's :class:`~.actions.WorldActions` part, offered as the world's own
    (same name, signature and docstring)."""

    @functools.wraps(method)
    def act(world: BotWorld, /, *args: P.args, **kwargs: P.kwargs) -> R:
        """Call the actions part's method of the same name."""
        __tracebackhide__ = True
        return method(world._actions, *args, **kwargs)

    return act


def _authored_by(message: Message, user: WorldUser) -> bool:
    return message.author is not None and message.author.id == user.id


class ExpectedMessage:
    """A wait for the bot's next message in a channel, started by :meth:`BotWorld.expect_message`.

    Only messages stored after the handle was made count (or, made with ``since="start"``,
    every message since the world began). :meth:`result` blocks until a matching message has
    arrived; as a context manager, the end of the ``with`` block waits for it (unless the block
    raised) so :meth:`result` returns at once after it. Thread-safe.
    """

    def __init__(
        self,
        world: BotWorld,
        recorder: Recorder,
        mark: int,
        channel_id: str,
        author: WorldUser,
        check: Callable[[Message], bool] | None,
        timeout: float,
        since: str,
    ) -> None:
        self._world = world
        self._recorder = recorder
        self._mark = mark
        self._channel_id = channel_id
        self._author = author
        self._check = check
        self._timeout = timeout
        self._since = since
        self._lock = threading.Lock()  # guards _message
        self._message: Message | None = None

    def result(self, timeout: float | None = None) -> Message:
        """The message: the first one of the author in the channel since the handle's start.

        Args:
            timeout: Seconds to wait; default the ``timeout`` given to ``expect_message``.

        Returns:
            The :class:`~service_client.Message` as the watching client received it; the same
            one on every call.

        Raises:
            AssertionError: None came within the timeout. The text says what was expected and
                shows the channel's last messages and the listener errors so far.
            ValueError: A bad ``timeout``.
            Exception: Whatever ``check`` raised.
        """
        __tracebackhide__ = True
        wait = self._timeout if timeout is None else _check_timeout(timeout)
        with self._lock:
            if self._message is not None:
                return self._message
        world = self._world

        def accept(message: Message) -> bool:
            """True for the awaited message: this channel, this author, after the mark, not taken yet."""
            if message.channel_id != self._channel_id or not _authored_by(message, self._author):
                return False
            if not after_mark(message.id, self._mark):
                return False
            if self._check is not None and not self._check(message):  # the caller's code: no lock held
                return False
            with self._lock:
                if self._message is not None:
                    return True
                if not world._taken.message(message):
                    return False
                self._message = message
                return True

        start = "since the world began" if self._since == "start" else "after expect_message() was called"
        scan_until(
            self._recorder, lambda: self._recorder.messages, accept, wait,
            lambda: world._report(
                f"expected a message from {self._author.name} in {world._label(self._channel_id)} "
                f"{start}{' passing check' if self._check is not None else ''}, within {wait:g} s",
                self._channel_id,
            ),
        )
        with self._lock:
            assert self._message is not None
            return self._message

    def __enter__(self) -> ExpectedMessage:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        __tracebackhide__ = True
        if exc_type is None:
            self.result()

    def __repr__(self) -> str:
        state = "received" if self._message is not None else "waiting"
        return f"<ExpectedMessage channel={self._channel_id!r} author={self._author.name!r} {state}>"


class BotWorld(WorldBase):
    """A server with users, roles and channels on a reset emulator, and a way to act in it.

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

    :meth:`user`, :meth:`channel` and :meth:`role` find them by name (channels and roles the bot
    or the emulator's control plane made too); :meth:`add_user` adds a member and
    :meth:`create_role` a role.

    Limits: the world turns the emulator's limit mode on (``emulator.configure(limits=True)``),
    so a message over the limits of :mod:`service_client._message_rules` (content over 4000
    characters, more than 10 embeds, an embed over its limits) is refused in a test as it would
    be by the service, whose limits are not published: the client refuses it at the call site
    with ``ValueError``, and the emulator refuses it from any other sender (the control plane,
    a webhook). ``BotWorld(..., limits=False)`` or ``bot_world.limits = False`` turns it off,
    for a test of what the bot does with longer messages posted through the control plane.

    Acting as people would: :meth:`say` posts through the user's own logged-in
    :class:`~service_client.Client` (made on first use, destroyed at teardown); :meth:`dm`,
    :meth:`react`, :meth:`unreact`, :meth:`typing`, :meth:`join`, :meth:`leave`, :meth:`kick`,
    :meth:`ban`, :meth:`create_role`, :meth:`give_role`, :meth:`take_role` and
    :meth:`create_channel` do the rest.
    Once the bot's client was handed to the world (the ``bot_client`` fixture does it, see
    :meth:`attach_bot`), each of them returns only after the bot's listeners of the event it
    caused have run, so whatever they did (a reply sent, a role given) is done. The bot's
    scheduled work runs when the test calls :meth:`advance`, without real waiting.

    Checking what the bot did: :meth:`expect_reply`, :meth:`expect_message`, :meth:`expect_dm`
    and :meth:`expect_reaction`; that it stayed silent: :meth:`expect_no_reply`. Each returns something no earlier expectation returned, and
    only what was stored after the point it names (the message answered, the call, the last
    action), so an old message is never taken for the answer to a later action. When one
    fails, the :class:`AssertionError` says what was expected and shows the channel's last
    messages and the listener errors so far.

    Time and restarts: the bot's scheduled work is timed by :attr:`clock`, a
    :class:`~service_client.ManualClock` that :meth:`advance` moves; :meth:`restart_bot`
    destroys the bot's client and builds it again (same factory, token and clock). The bot's
    token is ``bot_world.bot.token`` (a :class:`~service_client._secret.Secret`:
    ``.get()`` gives the text).

    The messages returned are :class:`~service_client.Message` objects, whose ``content`` is
    the text as typed (the service escapes ``& < >`` on the wire;
    ``emulator.messages(channel_id, decoded=True)`` reads stored messages the same way).

    Thread-safe. Built from parts: what it knows of the world (its users, channels and
    clients) is its base, :class:`~.base.WorldBase`; what its people do is
    :class:`~.actions.WorldActions`, a part it builds with itself and whose methods it offers
    as its own; its time is :attr:`clock`.

    Args:
        emulator: A running emulator, freshly reset.
        listener_errors: The test's listener error record, shown when an expectation fails
            (the ``bot_world`` fixture passes it).
        limits: Run the emulator with its limit mode on (the default); see :attr:`limits`.

    Attributes:
        emulator: The running :class:`~service_client.emulator.Emulator`.
        clock: The world's :class:`~service_client.ManualClock`: ``clock.now()`` is 0 s when
            the world is made and ``clock.utcnow()`` the real time then; both move only with
            :meth:`advance` (or ``clock.advance_to(datetime)``).
        event_timeout: Seconds an action waits for the bot's listeners of the event it caused
            (default 10); raise it for a bot whose listeners take longer.
    """

    #: Permissions of the ``Moderator`` role.
    MODERATOR_PERMISSIONS = (1 << 6) | (1 << 7) | (1 << 8)
    #: Permissions of the ``Bot`` role.
    BOT_PERMISSIONS = MODERATOR_PERMISSIONS | (1 << 1) | (1 << 2)

    def __init__(self, emulator: Emulator, *, listener_errors: ListenerErrors | None = None,
                 limits: bool = True) -> None:
        super().__init__(emulator, listener_errors=listener_errors)
        self.clock = ManualClock()
        self._actions = WorldActions(self)
        self.limits = limits

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
        with self._lock:  # seeding is not an action: expect_dm() counts from the world's start
            self._action_mark, self._last_action = 0, "none yet"
        self._voice = WorldVoice(self, self._actions)

    # -- voice (the part in testing/voice.py) -------------------------------------------------------

    def join_voice(self, user: WorldUser | str, channel: WorldObject | str) -> VoiceParticipant:
        """Put a user in a voice channel; its ``speak(440)`` then talks there. See
        :meth:`WorldVoice.join_voice <service_client.testing.voice.WorldVoice.join_voice>`."""
        __tracebackhide__ = True
        return self._voice.join_voice(user, channel)

    def expect_audio(self, user: VoiceParticipant | WorldUser | str, *, frequency: float, within: float = 5.0,
                     window: float = 0.5, tolerance: float = 10.0) -> float:
        """Assert that the bot played ``frequency`` Hz to ``user``'s voice channel; returns what was
        heard. See :meth:`WorldVoice.expect_audio <service_client.testing.voice.WorldVoice.expect_audio>`."""
        __tracebackhide__ = True
        return self._voice.expect_audio(user, frequency=frequency, within=within, window=window, tolerance=tolerance)

    # -- what the people do (the WorldActions part) ------------------------------------------

    say = _action(WorldActions.say)
    react = _action(WorldActions.react)
    unreact = _action(WorldActions.unreact)
    typing = _action(WorldActions.typing)
    dm = _action(WorldActions.dm)
    join = _action(WorldActions.join)
    leave = _action(WorldActions.leave)
    kick = _action(WorldActions.kick)
    ban = _action(WorldActions.ban)
    create_role = _action(WorldActions.create_role)
    give_role = _action(WorldActions.give_role)
    take_role = _action(WorldActions.take_role)
    create_channel = _action(WorldActions.create_channel)

    # -- time ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def new_clients_use_clock(self) -> Iterator[None]:
        """Within the block, every client made on this thread is timed by :attr:`clock` from its construction on.

        The ``bot_world`` fixture holds it open for the whole test, so the bot's factory, a
        restart of the bot and a client the test builds itself all get the world's clock
        without being told.
        """
        with new_clients_use(self.clock):
            yield

    def attach_bot(self, client: Client, *, factory: Callable[..., Client] | None = None) -> None:
        """Hand the bot's client to the world; the ``bot_client`` fixture does it before login.

        From then on the world records every message and reaction that client receives (its
        own messages included), every action waits until the bot's listeners of the event it
        caused have run, and the client's scheduled work (``call_later``, ``every``) is timed
        by :attr:`clock`: it runs only when the test calls :meth:`advance`
        (``client.set_clock(None)`` goes back to real time). Hand it over before ``login()``
        to record what the bot does in its ``ready`` listener.

        Args:
            client: The bot's :class:`~service_client.Client` (logged in as the world's bot,
                or about to be). The world does not destroy it.
            factory: What made ``client``, called as ``factory(base_url=..., socket_url=...)``:
                what :meth:`restart_bot` calls to build
                the bot again (the ``bot_client`` fixture passes its ``bot_factory``).

        Raises:
            TypeError: Not a :class:`~service_client.Client`; ``factory`` not callable.
            ValueError: Another client was handed over already.
        """
        super().attach_bot(client, factory=factory)
        self._give_clock(client)

    def _give_clock(self, client: Client) -> None:
        """Time ``client``'s scheduled work by the world's :attr:`clock` (at handing over, and
        for the client :meth:`restart_bot` builds)."""
        client.set_clock(self.clock)

    def advance(self, seconds: float, *, timeout: float = ADVANCE_TIMEOUT_S) -> int:
        """Move the bot's clock ``seconds`` forward, running its scheduled work that falls due.

        No real time passes: the due calls (``call_later``, runs of ``every`` tasks) run on the
        bot's worker pool one after another in due order, and this returns once they have
        ended, so whatever they sent is sent::

            say("general", "!remind 3600 stretch")
            with bot_world.expect_message("general") as got:
                bot_world.advance(3600)              # milliseconds, not an hour
            assert got.result().content.endswith("stretch")

        A task every 60 s runs 60 times over ``advance(3600)`` (plus its first run, due at
        ``start()``, if that had not run yet). ``advance(0)`` runs what is due now.

        Args:
            seconds: How far to move, seconds (>= 0).
            timeout: Longest wait for one call to end, seconds.

        Returns:
            How many calls ran.

        Raises:
            TypeError, ValueError: ``seconds`` or ``timeout`` is not a number >= 0.
            TimeoutError: A call did not end within ``timeout``.
        """
        return self.clock.advance(seconds, timeout=timeout)

    @property
    def limits(self) -> bool:
        """Whether the emulator runs with its limit mode on (True unless turned off).

        Setting it reconfigures the emulator at once (``emulator.configure(limits=...)``).

        Raises:
            TypeError: Set to something other than a bool.
        """
        return self._limits

    @limits.setter
    def limits(self, value: bool) -> None:
        """Turn the emulator's limit mode on or off (see the getter)."""
        if not isinstance(value, bool):
            raise TypeError(f"limits must be a bool, got {type(value).__name__}")
        self.emulator.configure(limits=value)
        self._limits = value

    # -- seeding and lookups ----------------------------------------------------------------------

    def add_user(self, name: str, *, bot: bool = False, roles: Iterable[WorldObject | str] = ()) -> WorldUser:
        """Create a user and make it a member of the server (the bot sees ``guild_member_add``).

        Like :meth:`join` with a new name, plus the account type and roles; it waits for the
        bot's listeners the same way.

        Args:
            name: The user's name.
            bot: Create a bot account.
            roles: Roles to give it: :class:`WorldObject` roles, role names or ids.

        Returns:
            The new :class:`WorldUser`.

        Raises:
            LookupError: A role name or id is unknown.
            ValueError: The emulator refused the name.
            AssertionError: The bot's client did not get ``guild_member_add`` in time.
        """
        __tracebackhide__ = True
        role_ids = [self._role_id(r) for r in roles]
        user = self._new_user(name, bot=bot)
        self._actions._join(user, role_ids)
        return user

    def _said(self, to: Message | None, helper: str) -> Message:
        if to is not None and not isinstance(to, Message):
            raise TypeError(
                f"{helper}() takes a message returned by say(), got {type(to).__name__}; to wait "
                "for a message the bot posts in a channel on its own, use expect_message(channel)"
            )
        with self._lock:
            said = to if to is not None else self._last_said
        if said is None:
            raise ValueError(f"{helper}() needs a message: nothing was said yet (use say() first)")
        return said

    def _quote(self, said: Message) -> str:
        who = said.author.username if said.author is not None else "?"
        return f"{said.content!r} ({who} in {self._label(said.channel_id or '')})"

    def expect_reply(
        self, to: Message | None = None, *, timeout: float = REPLY_TIMEOUT_S, author: WorldUser | str | None = None
    ) -> Message:
        """The bot's next message in the channel of ``to``, after ``to``.

        Each call returns a message no earlier expectation returned, so two calls give the bot's
        first two messages after ``to``. A message stored before ``to`` never counts. To check
        that the bot ignored a message, say another one it answers and expect that answer as the
        first reply to the first message::

            ignored = say("general", "!nope")
            say("general", "!ping")
            assert expect_reply(ignored).content == "Pong!"   # nothing came in between

        Args:
            to: A message returned by :meth:`say` or :meth:`dm` (a DM is answered in the DM);
                default the last one said.
            timeout: Seconds to wait.
            author: Whose message counts as the reply: a :class:`WorldUser`, name or id;
                default the world's bot.

        Returns:
            The reply, a :class:`~service_client.Message` as the speaker's client received it
            (``content`` decoded: the text as the bot sent it).

        Raises:
            AssertionError: No such message within ``timeout``. The text says what was expected
                and shows the channel's last messages and the listener errors so far.
            TypeError: ``to`` is not a :class:`~service_client.Message` (a channel, say: use
                :meth:`expect_message` for a message the bot posts on its own).
            ValueError: Nothing was said yet, ``to`` was not returned by this world, or a bad
                ``timeout``.
        """
        __tracebackhide__ = True
        wait = _check_timeout(timeout)
        said = self._said(to, "expect_reply")
        recorder = self._recorder_of(said, "expect_reply")
        replier = self.bot if author is None else self._speaker(author)
        mark = int(said.id) if said.id.isdigit() else 0

        def accept(message: Message) -> bool:
            """True for the reply: the said message's channel, the replier, after it, not taken yet."""
            return (message.channel_id == said.channel_id and _authored_by(message, replier)
                    and after_mark(message.id, mark) and self._taken.message(message))

        return scan_until(
            recorder, lambda: recorder.messages, accept, wait,
            lambda: self._report(f"expected a reply from {replier.name} to {self._quote(said)} within {wait:g} s",
                                 said.channel_id),
        )

    def expect_no_reply(
        self,
        to: Message | None = None,
        *,
        within: float = NO_REPLY_WINDOW_S,
        author: WorldUser | str | None = None,
        anywhere: bool = False,
    ) -> None:
        """Assert that the bot stayed silent: no message of the bot in the channel of ``to``,
        after ``to``, within ``within`` seconds.

        The counterpart of :meth:`expect_reply` (dpytest's ``verify().message().nothing()``).
        Messages an earlier expectation returned do not count, so after the expected answer
        it asserts that nothing more came::

            said = say("general", "!ping")
            assert expect_reply(said).content == "Pong!"
            expect_no_reply(said)                              # and nothing else

            expect_no_reply(say("general", "hello"), within=0.2)   # not a command: silence
            expect_no_reply(said, anywhere=True)               # no DM, no other channel either

        It reads the speaker's recorded messages and waits on them (no sleep): it fails as
        soon as a message of the bot arrives, and passes once ``within`` seconds went by
        without one. Silence can only be watched for a while: ``within`` is how long an
        answer may take to count as one.

        Args:
            to: A message returned by :meth:`say` or :meth:`dm`; default the last one said.
            within: Seconds to watch, counted from this call (>= 0; 0 checks what has arrived
                already).
            author: Whose message would break the silence: a :class:`WorldUser`, name or id;
                default the world's bot.
            anywhere: Watch every channel the bot is in, its DMs included, not only the
                channel of ``to``: through the bot's own client, which the world records
                (the ``bot_client`` fixture hands it over).

        Raises:
            AssertionError: A message of the bot came: the text quotes it and shows the
                last messages of its channel and the listener errors so far.
            TypeError: ``to`` is not a :class:`~service_client.Message`, or ``anywhere`` not
                a bool.
            ValueError: Nothing was said yet, ``to`` was not returned by this world, a bad
                ``within``, or ``anywhere=True`` with no bot client handed to the world.
        """
        __tracebackhide__ = True
        try:
            wait = _check_timeout(within)
        except ValueError:
            raise ValueError(f"within must be a non-negative number of seconds, got {within!r}") from None
        if not isinstance(anywhere, bool):
            raise TypeError(f"anywhere must be a bool, got {type(anywhere).__name__}")
        said = self._said(to, "expect_no_reply")
        recorder = self._recorder_of(said, "expect_no_reply")
        if anywhere:
            bot = self.bot_client
            if bot is None:
                raise ValueError("expect_no_reply(anywhere=True) watches through the bot's own client: use the "
                                 "bot_client fixture (or bot_world.attach_bot())")
            with self._lock:
                recorder = self._recorders[id(bot)]
        replier = self.bot if author is None else self._speaker(author)
        mark = int(said.id) if said.id.isdigit() else 0

        def breaks_silence(message: Message) -> bool:
            """True for a message of the replier after ``said`` (in its channel unless
            ``anywhere``) that no expectation took."""
            return ((anywhere or message.channel_id == said.channel_id) and _authored_by(message, replier)
                    and after_mark(message.id, mark) and not self._taken.has(message))

        try:
            found = scan_until(recorder, lambda: recorder.messages, breaks_silence, wait, lambda: "")
        except AssertionError:
            return  # the window went by in silence
        where = "" if found.channel_id == said.channel_id else f" in {self._label(found.channel_id or '')}"
        raise AssertionError(self._report(
            f"expected no {'message' if anywhere else 'reply'} from {replier.name} "
            f"{'anywhere ' if anywhere else ''}after {self._quote(said)} within {wait:g} s, "
            f"got {found.content!r}{where}",
            found.channel_id,
        ))

    def restart_bot(self, *, timeout: float = LOGIN_TIMEOUT_S) -> Client:
        """Destroy the bot's client and build it again: a restart of the bot within one test.

        The new client is made by the factory that made the first one (the ``bot_client``
        fixture's ``bot_factory``), logged in with the bot's token (:attr:`bot`'s
        ``token``), timed by the world's :attr:`clock` (which keeps its time: a cooldown or
        a reminder stored by the bot outlives the restart only if the bot stored it outside
        the client), and recorded as the first one was: the world's actions wait for its
        listeners, and ``expect_message(..., since="start")`` sees what both clients said.
        What a test holds of the old client (the ``bot_client`` fixture's value) is destroyed;
        use the returned client, or :attr:`bot_client`::

            def test_balance_survives_a_restart(bot_world, bot_client, say, expect_reply):
                say("general", "!daily")
                expect_reply()
                bot = bot_world.restart_bot()             # new client, same token and clock
                assert bot.state.value == "ready"
                say("general", "!balance")
                assert expect_reply().content == "100 coins"

        The new client is destroyed at the test's teardown, as the first one is.

        Args:
            timeout: Seconds the new client's login may take.

        Returns:
            The new :class:`~service_client.Client`, logged in, its ``ready`` listeners run.

        Raises:
            RuntimeError: The world has no bot client, or was not told how to build one (hand
                it over with ``attach_bot(client, factory=...)``; the ``bot_client`` fixture
                does), or the world was torn down.
            TypeError: The factory did not return a :class:`~service_client.Client`.
            ServiceError: The login failed (the new client is destroyed).
            TimeoutError: The new client's ``ready`` listeners did not end within 10 s.
        """
        with self._lock:
            old, factory, closed = self._bot_client, self._bot_factory, self._closed
        if closed:
            raise RuntimeError("this BotWorld was torn down")
        if old is None or factory is None:
            raise RuntimeError(
                "restart_bot() builds the bot again with the factory that made it: use the bot_client "
                "fixture (or bot_world.attach_bot(client, factory=...))"
            )
        old.destroy()
        emulator = self.emulator
        with self.new_clients_use_clock():
            client = factory(base_url=emulator.base_url, socket_url=emulator.socket_url)
        if not isinstance(client, Client):
            raise TypeError(f"the bot's factory must return a service_client.Client, got {type(client).__name__}")
        with self._lock:
            recorder = self._recorders[id(old)]
            self._bot_client = client
            self._recorders[id(client)] = recorder
        recorder.attach(client)
        self._give_clock(client)
        try:
            login_bot(client, self.bot.token.get() or "", timeout=timeout)
        except BaseException:
            client.destroy()
            raise
        return client

    def expect_message(
        self,
        channel: Any,
        *,
        timeout: float = REPLY_TIMEOUT_S,
        check: Callable[[Message], bool] | None = None,
        author: WorldUser | str | None = None,
        as_user: WorldUser | str | None = None,
        since: str = "now",
    ) -> ExpectedMessage:
        """Start waiting for the next message the bot posts in a channel, with no :meth:`say` before.

        For what the bot sends on its own (a welcome when a member joins, a scheduled
        announcement). Call it *before* the action that makes the bot post: it marks the
        moment, and only messages stored after it count, however soon they come. Use it as
        a context manager, which waits when the block ends, or keep the handle and call
        :meth:`ExpectedMessage.result`::

            with bot_world.expect_message("general") as got:
                bot_world.join("dave")                        # the bot welcomes dave
            assert got.result().content == "Welcome, dave!"

        For what the bot said before the test body began (in its ``ready`` listener, say), ask
        for every message since the world began::

            hello = bot_world.expect_message("general", since="start").result()

        Each handle returns one message, and a message is returned by one expectation only:
        the first :meth:`ExpectedMessage.result` call takes the earliest matching message no
        other expectation took. So two handles made before the action, asked in turn, return
        the bot's first two messages in order.

        Args:
            channel: A channel name of this world, a channel id, a :class:`WorldObject`, a
                :class:`~service_client.Channel` or a channel record.
            timeout: Seconds :meth:`ExpectedMessage.result` (and the end of the ``with`` block)
                waits, counted from the call of ``result`` (or the block's end).
            check: Only a message for which ``check(message)`` is true counts.
            author: Whose message counts: a :class:`WorldUser`, name or id; default the bot.
            as_user: Whose client watches the channel (it must see it); default ``alice``,
                the server's owner, who sees every channel of the server. Not with
                ``since="start"``.
            since: ``"now"`` (default): messages stored after this call. ``"start"``: every
                message since the world began, watched through the bot's own client, which the
                world records from before its login (the ``bot_client`` fixture hands it over,
                see :meth:`attach_bot`); it must see the channel.

        Returns:
            An :class:`ExpectedMessage` handle, already recording.

        Raises:
            TypeError, ValueError, LookupError: A bad channel, user, ``timeout``, ``check`` or
                ``since`` (before anything is recorded); ``since="start"`` with ``as_user``, or
                with no bot client handed to the world.
            ServiceError: The watching user's client could not log in.
        """
        wait = _check_timeout(timeout)
        _check_callable(check)
        if since not in ("now", "start"):
            raise ValueError(f"since must be 'now' or 'start', got {since!r}")
        channel_id = self._channel_id(channel)
        replier = self.bot if author is None else self._speaker(author)
        if since == "start":
            if as_user is not None:
                raise ValueError("expect_message(since='start') watches through the bot's own client: "
                                 "leave as_user out")
            bot = self.bot_client
            if bot is None:
                raise ValueError("expect_message(since='start') needs the bot's client, which records from "
                                 "before its login: use the bot_client fixture (or bot_world.attach_bot())")
            with self._lock:
                recorder = self._recorders[id(bot)]
            return ExpectedMessage(self, recorder, 0, channel_id, replier, check, wait, since)
        client = self.client_for(self._speaker(as_user))
        with self._lock:
            recorder = self._recorders[id(client)]
        mark = int(self.emulator.id_mark())
        return ExpectedMessage(self, recorder, mark, channel_id, replier, check, wait, since)

    def expect_dm(
        self,
        user: WorldUser | str,
        *,
        since: Message | str = "action",
        timeout: float = REPLY_TIMEOUT_S,
        check: Callable[[Message], bool] | None = None,
    ) -> Message:
        """The bot's next direct message to ``user``, sent after the world's last action.

        The last action is the last :meth:`say`, :meth:`dm`, :meth:`react`, :meth:`join` or
        other action of this world (the world's start when there was none), so a DM the bot
        sent for an earlier action is never taken for the answer to the last one::

            say("general", "!remind me", as_user="carol")
            assert expect_dm("carol").content == "I will remind you."

            dave = bot_world.join("dave")
            assert expect_dm(dave).content.startswith("Welcome")

        Each call returns a DM no earlier expectation returned, so two calls give the bot's
        first two DMs to ``user``. With the bot's client handed to the world (the
        ``bot_client`` fixture), the world watches through it and sees every DM the bot
        sends; without it, through ``user``'s own client, made now if needed (a DM sent
        before it was made is missed).

        Args:
            user: The recipient: a :class:`WorldUser`, a user name or id.
            since: ``"action"`` (default): after the start of the world's last action.
                ``"start"``: since the world began. A :class:`~service_client.Message`: after
                that message.
            timeout: Seconds to wait.
            check: Only a message for which ``check(message)`` is true counts (it runs on the
                test's thread).

        Returns:
            The DM, a :class:`~service_client.Message` (``content`` the text as the bot sent it).

        Raises:
            AssertionError: No such DM within ``timeout``. The text says what was expected and
                shows the DM's last messages and the listener errors so far.
            TypeError, ValueError, LookupError: A bad user (the bot itself included),
                ``since``, ``timeout`` or ``check``.
            Exception: Whatever ``check`` raised.
        """
        __tracebackhide__ = True
        wait = _check_timeout(timeout)
        _check_callable(check)
        recipient = self._speaker(user)
        if recipient.id == self.bot.id:
            raise ValueError("expect_dm() waits for the bot's DM to another user, not to itself")
        if isinstance(since, Message):
            mark = int(since.id) if since.id.isdigit() else 0
            after = f"after {since.content!r}"
        elif since == "action":
            with self._lock:
                mark, action = self._action_mark, self._last_action
            after = f"after the world's last action, {action}"
        elif since == "start":
            mark, after = 0, "since the world began"
        else:
            raise ValueError(f"since must be 'action', 'start' or a Message, got {since!r}")
        bot = self.bot_client
        watcher = bot if bot is not None else self.client_for(recipient)
        with self._lock:
            recorder = self._recorders[id(watcher)]
        found: list[str] = []  # the DM channel's id, once it exists

        def dm_id() -> str | None:
            """The id of the DM channel of the bot and the recipient, once it exists, else None."""
            if not found:
                ident = self.emulator.dm_channel(self.bot.id, recipient.id)
                if ident is None:
                    return None
                with self._lock:
                    self._labels.setdefault(ident, f"the DM of {recipient.name} and {self.bot.name}")
                found.append(ident)
            return found[0]

        def accept(message: Message) -> bool:
            """True for the bot's DM to the recipient, after the mark, not taken yet."""
            if message.server_id is not None or not _authored_by(message, self.bot):
                return False
            if message.channel_id != dm_id() or not after_mark(message.id, mark):
                return False
            if check is not None and not check(message):
                return False
            return self._taken.message(message)

        return scan_until(
            recorder, lambda: recorder.messages, accept, wait,
            lambda: self._report(f"expected a DM from {self.bot.name} to {recipient.name} {after}, within {wait:g} s",
                                 dm_id()),
        )

    def expect_reaction(
        self,
        to: Message | None = None,
        *,
        emoji: str | None = None,
        timeout: float = REPLY_TIMEOUT_S,
        author: WorldUser | str | None = None,
    ) -> SeenReaction:
        """The bot's next reaction to ``to``, in the style of :meth:`expect_reply`.

        ::

            said = say("general", "!vote pizza")
            assert expect_reaction(said).emoji == "👍"

        Each call returns a reaction no earlier call returned; a reaction removed and added
        again counts again.

        Args:
            to: A message returned by :meth:`say`, :meth:`dm` or an expectation; default the
                last one said.
            emoji: Only this emoji counts; default any.
            timeout: Seconds to wait.
            author: Whose reaction counts: a :class:`WorldUser`, name or id; default the bot.

        Returns:
            A :class:`SeenReaction` (``message_id``, ``emoji``, ``user_id``, ``user_name``).

        Raises:
            AssertionError: No such reaction within ``timeout``. The text says what was
                expected and shows the channel's last messages and the listener errors so far.
            TypeError, ValueError: As :meth:`expect_reply`; ``emoji`` not a non-empty str.
        """
        __tracebackhide__ = True
        wait = _check_timeout(timeout)
        if emoji is not None and (not isinstance(emoji, str) or not emoji):
            raise TypeError(f"emoji must be a non-empty str or None, got {emoji!r}")
        said = self._said(to, "expect_reaction")
        recorder = self._recorder_of(said, "expect_reaction")
        reactor = self.bot if author is None else self._speaker(author)

        def accept(reaction: SeenReaction) -> bool:
            """True for the awaited reaction: that message, that user, that emoji, not taken yet."""
            return (reaction.message_id == said.id and reaction.user_id == reactor.id
                    and (emoji is None or reaction.emoji == emoji) and self._taken.reaction(reaction))

        wanted = f"{emoji} " if emoji is not None else ""
        return scan_until(
            recorder, lambda: recorder.reactions, accept, wait,
            lambda: self._report(
                f"expected a {wanted}reaction from {reactor.name} to {self._quote(said)} within {wait:g} s"
                f" (reactions it has now: {self._reactions_now(said.id)})",
                said.channel_id,
            ),
        )
