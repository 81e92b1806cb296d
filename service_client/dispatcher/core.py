"""The :class:`CommandDispatcher`: run :class:`~service_client.Command` records from chat messages.

:mod:`service_client.commands` describes and loads commands; a
:class:`CommandDispatcher` runs them::

    from service_client import Client, CommandDispatcher, Member, Permissions, has_role

    client = Client()
    commands = CommandDispatcher(client, prefix="!")

    @commands.command(aliases=["p"])
    def ping(ctx):
        \"\"\"Check that the bot is alive.\"\"\"
        ctx.reply("Pong!")

    @commands.command(requires=Permissions.KICK_MEMBERS, cooldown=10)
    def kick(ctx, member: Member, *, reason: str = "no reason given"):
        \"\"\"Kick a member out of the server.\"\"\"
        member.kick()
        ctx.send(f"{member.display_name} was kicked: {reason}")

    @commands.command(hidden=True)
    @has_role("Staff")
    def close(ctx):
        \"\"\"Close this ticket.\"\"\"

    client.load_commands("commands/")   # command files go to the same registry
    client.run(TOKEN)

A message ``!kick <@U123> she didn't stop`` then calls
``kick(ctx, <the Member U123>, reason="she didn't stop")``.

How a message is handled, in order:

1. Messages without an author, from the bot itself, from other bots (unless
   ``ignore_bots=False``) and not starting with the prefix are ignored.
2. The first word after the prefix names the command: a name or an alias of
   a command in the registry (``client.commands`` by default), compared
   case-insensitively unless ``case_insensitive=False``. ``help`` is built in
   while no command of that name is registered. Another word is no command of
   this bot: the message is left alone (logged at DEBUG), since several bots
   may share a prefix; with ``reply_unknown=True`` the author gets "Unknown
   command !nope. Try !help." instead. It is never emitted as ``error``.
3. Checks: a command with ``requires`` runs only in a server (else
   :class:`~service_client.errors.NoPrivateMessage`), for an author whose
   member permissions there (roles, owner, administrator) hold every
   required flag (else :class:`~service_client.errors.MissingPermissions`).
   Then its checks (:mod:`.checks`) run in order; the first that refuses
   ends the invocation with a :class:`~service_client.errors.CheckFailure`.
   Reading roles and permissions may fetch the author's member (see
   :attr:`Message.member`).
4. The text after the command's name is read for the parameters of
   ``execute`` after the context (see :mod:`.parsing`): one word for each
   positional parameter (quotes group words), every word left for
   ``*name``, the rest of the line as typed for the first keyword-only
   parameter; each is converted by the parameter's annotation (see
   :mod:`.converters`). A word starting with a double quote that is never
   closed is a :class:`~service_client.errors.CommandSyntaxError`; a missing
   argument or a word too many a
   :class:`~service_client.errors.CommandUsageError`; a text its converter
   refuses a :class:`~service_client.errors.CommandArgumentError`; each with
   the usage line.
5. A command with ``max_concurrency`` runs at most that many times at once
   in one bucket (everyone together by default), else
   :class:`~service_client.errors.MaxConcurrencyReached`; a command with a
   ``cooldown`` runs at most once per that many seconds in one bucket (each
   user by default; see :class:`~service_client.BucketType`), else
   :class:`~service_client.errors.CommandCooldownError` ("try again in 23 h
   12 min"). Cooldowns are timed by the client's clock (see
   :mod:`.cooldowns`).
6. ``execute(ctx, *args, **rest)`` runs. If it raises a
   :class:`~service_client.errors.CommandError` (``raise
   CommandError("count must be between 1 and 100")``), that is the command's
   own refusal: it is reported like the refusals above, with its text for
   the author. Any other exception means the bot failed: the author sees a
   short notice and the exception is a
   :class:`~service_client.errors.CommandInvokeError` (logged with its
   traceback). So is an exception of a converter other than ``ValueError``
   and ``TypeError`` (a failed request, for example).

Every failure of steps 3 to 6 is replied to the author's message in the
channel (``str(error)``; ``reply_errors=False`` turns that off), then emitted
as the client's ``command_error`` event (``error.context`` gives the
message). A :class:`~service_client.errors.CommandInvokeError` (the bot
failed) is also emitted as ``error``; so is a refusal while the client has
an ``error`` listener and no ``command_error`` listener. A refusal nobody
listens to is logged at INFO. :meth:`CommandDispatcher.is_command` tells
other listeners which messages are commands.

Threads: the dispatcher listens to ``message_create``, so commands run on the
client's worker pool, never on the socket reader thread, and the messages of
one channel are handled one after another in arrival order: a slow command
holds up later commands of its own channel only. Inside a command (and a
converter) every blocking client call is allowed (``ctx.reply``,
``client.wait_for``, REST calls). The dispatcher itself is thread-safe.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload

from ..commands import BucketType, Check, Command
from ..errors import CommandError, CommandNotFoundError
from ..events.clock import MonotonicClock
from ..permissions import Permissions
from .checks import run_checks
from .context import CommandContext
from .converters import ConverterFunction, ConverterRegistry, check_registration
from .cooldowns import CommandLimits, CooldownStore
from .extensions import Extensions
from .failures import argument_error, internal_error, reply_unknown, report, syntax_error
from .help import HELP, _HelpMixin
from .parsing import (
    ArgumentReader,
    BoundArguments,
    CommandSignature,
    ConversionFailed,
    MissingArgument,
    TooManyArguments,
    UnclosedQuote,
    compile_signature,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client
    from ..events.clock import Clock
    from ..models.message import Message

__all__ = ["CommandContext", "CommandDispatcher"]

_log = logging.getLogger("service_client.dispatcher")

_F = TypeVar("_F", bound=Callable[..., Any])
_C = TypeVar("_C", bound=ConverterFunction)

#: Compiled signatures kept (one per command seen) before the cache is cleared.
_SIGNATURES_MAX = 512


class CommandDispatcher(_HelpMixin):
    """Runs commands from messages that start with a prefix (see the module docs).

    Creating one registers a ``message_create`` listener on ``client``
    (unless ``listen=False``); :meth:`close` removes it. The first
    dispatcher of a client also serves the client's cog and extension methods
    (``client.add_cog``, ``client.load_extension``, ...) through its
    :attr:`extensions` part (see :mod:`~service_client.dispatcher.extensions`).
    Thread-safe: commands may be added and messages processed from any thread.

    Args:
        client: The client whose messages are read and whose ``error`` event
            receives the failures.
        prefix: What a command message starts with (non-empty str), or a
            sequence of such prefixes (the longest matching one is used).
        commands: The registry to dispatch from, keyed by command name;
            default ``client.commands``, which :meth:`Client.load_commands`
            fills.
        help_command: Answer ``<prefix>help`` with a generated help text while
            no command named ``help`` is registered.
        case_insensitive: Match command words ignoring letter case.
        ignore_bots: Ignore messages of other bots (the bot's own messages are
            always ignored).
        reply_errors: Reply ``str(error)`` to the author when a command fails.
        reply_unknown: Answer a message whose word after the prefix is no
            command ("Unknown command !nope. Try !help."); by default such a
            message is ignored (another bot may own the command). Either way
            it is not emitted as ``error``.
        listen: Register the ``message_create`` listener; with False, call
            :meth:`process` yourself.
        clock: What to time cooldowns with instead of the client's clock: a
            function returning monotonic seconds, or a clock (an object with
            ``now()``, such as a :class:`~service_client.ManualClock`); default
            the client's clock (``client.clock.now()``, read at each
            invocation, so ``set_clock`` and the test world's clock apply;
            the real clock for a stand-in client without ``clock``).
        cooldown_store: Where cooldown expiries are kept too, so that they
            survive a restart (see :class:`~service_client.dispatcher.cooldowns.CooldownStore`);
            None keeps them in memory only.

    Raises:
        TypeError: ``prefix`` is not a str or a sequence of str, ``commands``
            is not a mutable mapping, a flag is not a bool, ``clock`` is
            neither a function nor a clock, or ``cooldown_store`` lacks a
            ``get`` or ``set`` method.
        ValueError: A prefix is empty or holds whitespace.
    """

    def __init__(
        self,
        client: Client,
        *,
        prefix: str | Sequence[str] = "!",
        commands: MutableMapping[str, Command] | None = None,
        help_command: bool = True,
        case_insensitive: bool = True,
        ignore_bots: bool = True,
        reply_errors: bool = True,
        reply_unknown: bool = False,
        listen: bool = True,
        clock: Callable[[], float] | Clock | None = None,
        cooldown_store: CooldownStore | None = None,
    ) -> None:
        self.client = client
        prefixes = _normalise_prefixes(prefix)
        self._main_prefix = prefixes[0]
        self._prefixes = tuple(sorted(prefixes, key=len, reverse=True))
        if commands is None:
            commands = client.commands
        if not isinstance(commands, MutableMapping):
            raise TypeError(f"commands must be a mutable mapping, not {type(commands).__name__}")
        self.commands: MutableMapping[str, Command] = commands
        for flag, value in (
            ("help_command", help_command),
            ("case_insensitive", case_insensitive),
            ("ignore_bots", ignore_bots),
            ("reply_errors", reply_errors),
            ("reply_unknown", reply_unknown),
            ("listen", listen),
        ):
            if not isinstance(value, bool):
                raise TypeError(f"{flag} must be a bool, not {type(value).__name__}")
        self.help_command = help_command
        self.case_insensitive = case_insensitive
        self.ignore_bots = ignore_bots
        self.reply_errors = reply_errors
        self.reply_unknown = reply_unknown
        self._register_lock = threading.Lock()  # makes add()'s clash check and insert atomic
        seconds = _cooldown_seconds(clock)
        if cooldown_store is not None and not (callable(getattr(cooldown_store, "get", None))
                                               and callable(getattr(cooldown_store, "set", None))):
            raise TypeError("cooldown_store must have get(key) and set(key, until) methods (a CooldownStore), "
                            f"not {type(cooldown_store).__name__}")
        real = MonotonicClock()  # for a stand-in client without a clock (the default was time.monotonic)
        self._limits = CommandLimits(lambda: getattr(client, "clock", None) or real, seconds=seconds,
                                     store=cooldown_store)
        self._signatures_lock = threading.Lock()  # guards _signatures
        self._signatures: dict[Command, CommandSignature] = {}
        self._converters = ConverterRegistry()
        self._listening = False
        if listen:
            client.on("message_create", self._on_message)
            self._listening = True
        #: The cogs and extensions whose commands this dispatcher runs; the first dispatcher of a
        #: client serves the client's ``add_cog``, ``load_extension``... (see :class:`Extensions`).
        self.extensions = Extensions(self)

    # -- configuration ------------------------------------------------------

    @property
    def prefixes(self) -> tuple[str, ...]:
        """The prefixes, longest first."""
        return self._prefixes

    @property
    def prefix(self) -> str:
        """The main prefix (the first one given), used in help and error texts."""
        return self._main_prefix

    def close(self) -> None:
        """Stop listening to ``message_create`` (idempotent); the registry is left as is."""
        if self._listening:
            self._listening = False
            self.client.off("message_create", self._on_message)

    # -- registration ---------------------------------------------------------

    @overload
    def command(self, name: _F, /) -> _F:
        """Bare decorator form: registers the function under its own name and returns it."""

    @overload
    def command(
        self,
        name: str | None = None,
        *,
        aliases: str | Iterable[str] | None = (),
        description: str | None = None,
        requires: Permissions | str | int | Iterable[Permissions | str | int] | None = None,
        cooldown: float | None = None,
        checks: Check | Callable[[CommandContext], object] | Iterable[Check | Callable[[CommandContext], object]]
        | None = None,
        hidden: bool = False,
        cooldown_per: BucketType | str = BucketType.USER,
        max_concurrency: int | None = None,
        concurrency_per: BucketType | str = BucketType.DEFAULT,
    ) -> Callable[[_F], _F]:
        """Decorator factory form: ``@dispatcher.command("name", ...)`` returns the decorator."""

    def command(
        self,
        name: Any = None,
        *,
        aliases: str | Iterable[str] | None = (),
        description: str | None = None,
        requires: Permissions | str | int | Iterable[Permissions | str | int] | None = None,
        cooldown: float | None = None,
        checks: Check | Callable[[CommandContext], object] | Iterable[Check | Callable[[CommandContext], object]]
        | None = None,
        hidden: bool = False,
        cooldown_per: BucketType | str = BucketType.USER,
        max_concurrency: int | None = None,
        concurrency_per: BucketType | str = BucketType.DEFAULT,
    ) -> Any:
        """Decorator: register a function as a command, ``execute(ctx, *args)``.

        Both ``@commands.command()`` (with or without options) and the bare
        ``@commands.command`` register the function under its own name; either
        way the function is returned unchanged. Check decorators
        (:func:`~service_client.has_role`, ...) go below it, and run in the
        order written, after those of ``checks=``.

        Args:
            name: The command's name; default the function's name. (With the
                bare form this is the decorated function itself.)
            aliases: Other names (one str or an iterable of str).
            description: One line for the help; default the first line of the
                function's docstring.
            requires: Permissions the author must hold in the server (see
                :class:`Command`).
            cooldown: Seconds between two runs in one bucket (see :class:`Command`).
            cooldown_per: Who shares the cooldown: a :class:`~service_client.BucketType`
                (default ``USER``: each user their own).
            checks: Conditions on running it: :class:`~service_client.Check`
                objects or predicates ``predicate(ctx) -> bool`` (see
                :mod:`~service_client.dispatcher.checks`).
            hidden: Leave it out of the help (its list, and ``help <name>``).
            max_concurrency: At most this many runs at once in one bucket; None for no limit.
            concurrency_per: Who shares that limit (default ``DEFAULT``: everyone).

        Returns:
            A decorator that registers the function and returns it unchanged
            (the bare form: the function, already registered).

        Raises:
            TypeError, ValueError: As :class:`Command` and :meth:`add`, when
                the decorator is applied.
        """

        def decorator(fn: _F) -> _F:
            """Register ``fn`` as a command and return it unchanged."""
            text = description
            if text is None:
                doc = (getattr(fn, "__doc__", None) or "").strip()
                text = doc.splitlines()[0].strip() if doc else ""
            self.add(
                Command(
                    name if name is not None else getattr(fn, "__name__", ""),
                    fn,
                    aliases=aliases,
                    description=text,
                    requires=requires,
                    cooldown=cooldown,
                    checks=checks,
                    hidden=hidden,
                    cooldown_per=cooldown_per,
                    max_concurrency=max_concurrency,
                    concurrency_per=concurrency_per,
                )
            )
            return fn

        if callable(name) and not isinstance(name, str):  # bare @command: name is the function
            fn, name = name, None
            return decorator(fn)
        return decorator

    def add(self, command: Command) -> Command:
        """Add a command to the registry.

        Args:
            command: The command.

        Returns:
            ``command``.

        Raises:
            TypeError: ``command`` is not a :class:`Command`, or its
                ``execute`` cannot be called from a message: it does not take
                the context as its first positional parameter, a parameter's
                annotation cannot be resolved or has no converter (register
                converters before the commands that use them), or a
                keyword-only parameter after the first has no default.
            ValueError: Its name or an alias is already the name or an alias
                of another registered command (letter case ignored when the
                dispatcher is case-insensitive).
        """
        if not isinstance(command, Command):
            raise TypeError(f"command must be a Command, not {type(command).__name__}")
        self._signature(command)  # a command that could never run is refused here, not at its first use
        words = {self._fold(w) for w in (command.name, *command.aliases)}
        with self._register_lock:
            for other in list(self.commands.values()):
                if not isinstance(other, Command) or other.name == command.name and other is command:
                    continue
                taken = words & {self._fold(w) for w in (other.name, *other.aliases)}
                if taken:
                    raise ValueError(
                        f"command {command.name!r}: {', '.join(sorted(taken))!s} is already "
                        f"used by command {other.name!r}"
                    )
            self.commands[command.name] = command
        return command

    def remove(self, command: str | Command) -> Command | None:
        """Remove a command from the registry.

        Args:
            command: A name or alias (found as :meth:`get` finds it), or a
                :class:`Command`, removed only while that very object is
                registered under its name.

        Returns:
            The removed command, or None when there was none.

        Raises:
            TypeError: ``command`` is neither a str nor a :class:`Command`.
        """
        if not isinstance(command, (str, Command)):
            raise TypeError(f"command must be a name or a Command, not {type(command).__name__}")
        with self._register_lock:
            found = command if isinstance(command, Command) else self.get(command)
            if found is None or self.commands.get(found.name) is not found:
                return None
            del self.commands[found.name]
        with self._signatures_lock:
            self._signatures.pop(found, None)
        return found

    def converter(
        self, type_: Any, *, label: str | None = None, expected: str | None = None
    ) -> Callable[[_C], _C]:
        """Decorator: convert the arguments of parameters annotated ``type_`` with a function.

        The function is called ``convert(ctx, argument)`` with the
        :class:`CommandContext` and the text typed (one word, or the rest of
        the line for a keyword-only parameter), on the worker thread that runs
        the command; it may block (a REST request). It returns the value, or
        refuses the text by raising
        :class:`~service_client.errors.BadArgumentError` (its message is shown
        to the author), :class:`ValueError` or :class:`TypeError`: the author
        then gets a :class:`~service_client.errors.CommandArgumentError`
        reply. Any other exception is a
        :class:`~service_client.errors.CommandInvokeError`. ::

            @commands.converter(Color, expected="a color such as #ff8800")
            def to_color(ctx, argument):
                if not re.fullmatch(r"#[0-9a-fA-F]{6}", argument):
                    raise BadArgumentError("write # then six hex digits")
                return Color(int(argument[1:], 16))

        Also usable as a call: ``commands.converter(Color)(to_color)``. A
        converter registered for ``int``, ``Member`` or another built-in type
        replaces the built-in one. Register converters before the commands
        that use them (:meth:`add` checks every annotation).

        Args:
            type_: The annotation it converts: a class, or a ``typing.NewType``.
            label: Shown in the usage line: ``<when: label>``; default the
                type's name in lower case.
            expected: What it accepts, in words, for the error reply
                ("expected <expected>, got ..."); default the label.

        Returns:
            A decorator that registers the function and returns it unchanged.

        Raises:
            TypeError: ``type_`` is not a class nor a NewType; ``label`` or
                ``expected`` is not a str; the decorated object is not callable.
            ValueError: ``label`` or ``expected`` is empty.
        """
        check_registration(type_, label=label, expected=expected)

        def register(convert: _C) -> _C:
            """Register ``convert`` for ``type_`` and return it unchanged."""
            self._converters.register(type_, convert, label=label, expected=expected)
            with self._signatures_lock:
                self._signatures.clear()  # compiled commands pick the converter up
            return convert

        return register

    def get(self, word: str) -> Command | None:
        """The registered command whose name or alias is ``word`` (no prefix), or None."""
        exact = self.commands.get(word)
        if isinstance(exact, Command):
            return exact
        folded = self._fold(word)
        found: Command | None = None
        for command in list(self.commands.values()):
            if not isinstance(command, Command):
                continue
            if self._fold(command.name) == folded:
                return command
            if found is None and any(self._fold(a) == folded for a in command.aliases):
                found = command
        return found

    # -- dispatch ---------------------------------------------------------------

    def is_command(self, message: Message) -> bool:
        """Whether this dispatcher takes ``message`` as one of its commands (or its help).

        True exactly when :meth:`process` returns True for it: an author that is
        not ignored, a prefix, then a word naming a registered command or the
        built-in help, whether the command then runs or is refused (a check, a
        bad argument, a cooldown). False for a word that names no command.

        The answer is read from the message and the registry alone, never from
        whether the dispatcher has handled the message yet, so it is the same
        before, while and after the dispatcher's own ``message_create`` listener
        runs: another ``message_create`` listener (a relay of direct messages
        that must not relay ``!remind``) may ask it, on any thread and in any
        order, without racing the dispatcher. It changes only when commands are
        added to or removed from the registry in between. No request, no
        blocking, thread-safe.

        Args:
            message: A received message.

        Returns:
            True for a command message of this dispatcher, else False.
        """
        found = self._command_word(message)
        if found is None:
            return False
        word = found[1].split(None, 1)[0]
        return self.get(word) is not None or (self.help_command and self._fold(word) == HELP)

    def process(self, message: Message) -> bool:
        """Run the command a message carries, on the calling thread.

        The listener registered at construction calls this for every
        ``message_create``. Failures are never raised: each is replied to the
        author (unless ``reply_errors`` is False) and emitted as
        ``command_error``, and as ``error`` (a
        :class:`~service_client.errors.CommandInvokeError`; a refusal only
        while the client has an ``error`` listener and no ``command_error``
        listener; else it is logged at INFO). A word that names no command is
        not a failure: it is ignored, or answered when ``reply_unknown`` is
        True. Checks and converting the arguments may block on REST requests.

        Args:
            message: A received message.

        Returns:
            True when the message invoked one of this dispatcher's commands
            (or the help), whether the command ran or was refused; False when
            it was ignored, an unknown command word included (see
            :meth:`is_command`, which tells the same without running anything).
        """
        found = self._command_word(message)
        if found is None:
            return False
        prefix, rest = found
        ctx = CommandContext(self, message, None, prefix=prefix, invoked_with=rest.split(None, 1)[0])
        try:
            self._invoke(ctx, rest)
        except CommandNotFoundError as unknown:
            reply_unknown(ctx, unknown, reply=self.reply_unknown)
            return False
        except CommandError as error:
            report(self.client, ctx, error, reply=self.reply_errors)
        return True

    def _command_word(self, message: Message) -> tuple[str, str] | None:
        """``(prefix, text after it)`` when ``message`` may be a command of this bot, else None."""
        author = message.author
        if author is None:
            return None
        me = self.client.user
        if me is not None and author.id == me.id:
            return None
        if self.ignore_bots and author.bot:
            return None
        content = message.content
        prefix = next((p for p in self._prefixes if content.startswith(p)), None)
        if prefix is None:
            return None
        rest = content[len(prefix):]
        if not rest or rest[0].isspace():
            return None  # "!" alone or "! text" is not a command
        return prefix, rest

    def _invoke(self, ctx: CommandContext, rest: str) -> None:
        parts = rest.split(None, 1)
        word, text = parts[0], parts[1] if len(parts) > 1 else ""
        ctx.invoked_with = word
        command = self.get(word)
        if command is None:
            if self.help_command and self._fold(word) == HELP:
                try:
                    ctx.args = ArgumentReader(text).read_all()
                except UnclosedQuote as exc:
                    raise syntax_error(ctx, exc) from None
                help_text = self.help_text(ctx.args[0] if ctx.args else None)
                self._call(ctx, HELP, word, lambda: ctx.reply(help_text))
                return
            raise CommandNotFoundError(
                f"Unknown command {ctx.prefix}{word}."
                + (f" Try {self.prefix}{HELP}." if self.help_command else ""),
                name=word,
                context=ctx,
            )
        ctx.command = command
        run_checks(ctx, command)
        bound = self._bind(ctx, command, text)
        with self._limits.hold(ctx, command):
            self._call(ctx, command.name, word, lambda: command.execute(ctx, *bound.args, **bound.kwargs))

    @staticmethod
    def _call(ctx: CommandContext, name: str, word: str, run: Callable[[], object]) -> None:
        try:
            run()
        except CommandError as exc:  # the command refuses, in words for the author
            if exc.command_name is None:
                exc.command_name = name
            if exc.context is None:
                exc.context = ctx
            raise
        except Exception as exc:
            raise internal_error(ctx, name, word, exc) from exc

    def _bind(self, ctx: CommandContext, command: Command, text: str) -> BoundArguments:
        """Read and convert the arguments of ``command`` from ``text``; sets ``ctx.args``."""
        try:
            bound = self._signature(command).bind(ctx, text)
        except (UnclosedQuote, MissingArgument, TooManyArguments, ConversionFailed) as exc:
            cause = exc.__cause__ if isinstance(exc, ConversionFailed) else None
            raise argument_error(ctx, command.name, text, exc, self.usage(command)) from cause
        except Exception as exc:  # a converter's request failed, its code is broken...
            raise internal_error(ctx, command.name, ctx.invoked_with, exc) from exc
        ctx.args = bound.texts
        return bound

    def _signature(self, command: Command) -> CommandSignature:
        """The compiled parameters of ``command`` (cached per command).

        Raises:
            TypeError: ``command.execute`` cannot be called from a message (the reason).
        """
        with self._signatures_lock:
            cached = self._signatures.get(command)
        if cached is not None:
            return cached
        try:
            compiled = compile_signature(command.execute, self._converters)
        except TypeError as exc:  # not cached: the next use says it again
            raise TypeError(f"command {command.name!r} cannot be called from a message: {exc}") from exc
        with self._signatures_lock:
            if len(self._signatures) >= _SIGNATURES_MAX:
                self._signatures.clear()
            self._signatures[command] = compiled
        return compiled

    def _on_message(self, message: Message) -> None:
        """The ``message_create`` listener (worker pool)."""
        self.process(message)

    # -- internals -------------------------------------------------------------------

    def _fold(self, word: str) -> str:
        return word.casefold() if self.case_insensitive else word

    def __repr__(self) -> str:
        return f"<CommandDispatcher prefix={self.prefix!r} commands={len(self.commands)}>"


def _normalise_prefixes(prefix: object) -> tuple[str, ...]:
    if isinstance(prefix, str):
        given: list[object] = [prefix]
    elif isinstance(prefix, Sequence) and not isinstance(prefix, (bytes, bytearray)):
        given = list(prefix)
        if not given:
            raise ValueError("prefix must not be an empty sequence")
    else:
        raise TypeError(f"prefix must be a str or a sequence of str, not {type(prefix).__name__}")
    for item in given:
        if not isinstance(item, str):
            raise TypeError(f"every prefix must be a str, not {type(item).__name__}")
        if not item or item != item.strip() or any(ch.isspace() for ch in item):
            raise ValueError(f"a prefix must be non-empty text without whitespace, got {item!r}")
    return tuple(given)  # type: ignore[arg-type]


def _cooldown_seconds(clock: object) -> Callable[[], float] | None:
    """The ``clock`` argument of :class:`CommandDispatcher` as a function returning seconds (None: the client's).

    Raises:
        TypeError: ``clock`` is neither callable nor an object with a ``now()`` method.
    """
    if clock is None or callable(clock):
        return cast("Callable[[], float] | None", clock)
    now = getattr(clock, "now", None)
    if callable(now):
        return cast("Callable[[], float]", now)
    raise TypeError(f"clock must be a function returning seconds or a clock with now(), not {type(clock).__name__}")
