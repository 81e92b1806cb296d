"""The command record: :class:`Command`, what one command is, and :class:`Check`, a condition on running it.

A record only describes a command (its name, ``execute``, aliases, description,
required permissions, cooldown and concurrency limits with their :class:`BucketType`,
checks, whether help lists it); it runs nothing. :mod:`service_client.dispatcher` runs the records from chat messages,
and :mod:`.files` loads them from a directory of command files.
"""

from __future__ import annotations

import enum
import math
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from ..permissions import Permissions

__all__ = ["CHECKS_ATTRIBUTE", "BucketType", "Check", "Command"]

#: Keys of a mapping command that become :class:`Command` fields; every other
#: key goes to :attr:`Command.extra`.
_FIELDS = ("name", "execute", "aliases", "description", "requires", "cooldown", "checks", "hidden",
           "cooldown_per", "max_concurrency", "concurrency_per")


class BucketType(enum.Enum):
    """Who shares a command's cooldown or concurrency limit: discord.py's ``BucketType``.

    A command with ``cooldown=60, cooldown_per=BucketType.CHANNEL`` runs at most once a
    minute in each channel, whoever asks. Anywhere a bucket type is taken, its value
    (``"member"``) or name (``"MEMBER"``) is accepted too.
    """

    #: One bucket for everyone, everywhere.
    DEFAULT = "default"
    #: One per user, in every server and DM together.
    USER = "user"
    #: One per member: a user in one server (a DM counts as a place of its own).
    MEMBER = "member"
    #: One per channel, DM channels included.
    CHANNEL = "channel"
    #: One per server; in a DM, one per user.
    SERVER = "server"
    #: The same as :attr:`SERVER`, by discord.py's name.
    GUILD = "server"

    @classmethod
    def resolve(cls, value: object, *, name: str = "bucket type") -> BucketType:
        """``value`` as a :class:`BucketType`: a member, or its value or name as a str (any case).

        Args:
            value: A :class:`BucketType`, or ``"member"`` / ``"MEMBER"`` (``"guild"`` is ``SERVER``).
            name: The argument's name, for the error messages.

        Returns:
            The member.

        Raises:
            TypeError: ``value`` is neither a BucketType nor a str.
            ValueError: A str that names no bucket type (the message lists them).
        """
        if isinstance(value, cls):
            return value
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a BucketType or its name, not {type(value).__name__}")
        key = value.strip().lower()
        for member in cls:
            if key in (member.value, member.name.lower()):
                return member
        if key == "guild":
            return cls.SERVER
        known = ", ".join(m.value for m in cls)
        raise ValueError(f"{name} must be one of {known}, got {value!r}")

#: The attribute under which the check decorators keep a function's checks, in the order they
#: are written: a list while decorators add to it, a tuple once a :class:`Command` was made of
#: the function (a check decorator then refuses, since the command would not see it).
CHECKS_ATTRIBUTE = "__command_checks__"

_F = TypeVar("_F", bound=Callable[..., Any])


class Check:
    """A condition an invocation must meet for its command to run.

    Made by :func:`~service_client.check` and the built-in checks
    (:func:`~service_client.has_role`, :func:`~service_client.guild_only`, ...).
    Use one as a decorator under the command decorator, or in ``checks=``::

        @commands.command()
        @has_role("Staff")
        def close(ctx): ...

        Command("close", execute, checks=[has_role("Staff")])

    A dispatcher runs a command's checks after ``requires`` and before reading
    its arguments, in the order written (``checks=`` first, then the decorators
    from the top down), on the worker thread that runs the command; the first
    that refuses ends the invocation. Immutable, picklable when its predicate is.

    Args:
        predicate: ``predicate(ctx) -> bool`` with the
            :class:`~service_client.CommandContext`. True lets the command run;
            False refuses it with a :class:`~service_client.errors.CheckFailure`
            whose text is ``message``. It may raise a
            :class:`~service_client.errors.CommandError` (a ``CheckFailure``
            subclass, usually) with its own text; any other exception is a
            failure of the bot (a :class:`~service_client.errors.CommandInvokeError`).
            It may block (a REST request).
        description: A few words for the help line (``"role Staff"``); None shows nothing.
        message: The refusal's text when ``predicate`` returns False; None gives
            ``"You cannot use !name."`` (with ``description`` in brackets when given).

    Raises:
        TypeError: ``predicate`` is not callable, or ``description`` or ``message``
            is neither a str nor None.
        ValueError: ``description`` or ``message`` is an empty str.
    """

    __slots__ = ("description", "message", "predicate")

    predicate: Callable[[Any], object]
    description: str | None
    message: str | None

    def __init__(self, predicate: Callable[[Any], object], *, description: str | None = None,
                 message: str | None = None) -> None:
        if not callable(predicate):
            raise TypeError(f"predicate must be callable, not {type(predicate).__name__}")
        for label, value in (("description", description), ("message", message)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{label} must be a str or None, not {type(value).__name__}")
            if value == "":
                raise ValueError(f"{label} must not be empty (None for no {label})")
        object.__setattr__(self, "predicate", predicate)
        object.__setattr__(self, "description", description)
        object.__setattr__(self, "message", message)

    def __call__(self, fn: _F) -> _F:
        """Decorator: add this check to a command function, returned unchanged.

        Raises:
            TypeError: ``fn`` is not callable, cannot hold attributes (pass the check in
                ``checks=`` instead), or is already a command (write the check decorators
                below the command decorator).
        """
        if not callable(fn):
            raise TypeError(f"a check decorates a command function, not {type(fn).__name__}")
        held = getattr(fn, CHECKS_ATTRIBUTE, None)
        if isinstance(held, tuple):
            raise TypeError(
                f"{getattr(fn, '__name__', fn)!r} is already a command: write the check decorators "
                "below the command decorator"
            )
        checks = held if isinstance(held, list) else []
        checks.insert(0, self)  # decorators apply from the bottom up; keep the order as written
        try:
            setattr(fn, CHECKS_ATTRIBUTE, checks)
        except (AttributeError, TypeError):
            raise TypeError(
                f"cannot attach a check to {type(fn).__name__}: pass it in checks= instead"
            ) from None
        return fn

    def refusal(self, label: str) -> str:
        """The text of the refusal when the predicate returns False, for the command ``label`` (``!close``)."""
        if self.message is not None:
            return self.message
        return f"You cannot use {label}" + (f" ({self.description})" if self.description else "") + "."

    def __setattr__(self, attr: str, value: object) -> None:
        raise AttributeError(f"Check is immutable; cannot set {attr!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_check, (self.predicate, self.description, self.message))

    def __repr__(self) -> str:
        shown = self.description or getattr(self.predicate, "__name__", None) or repr(self.predicate)
        return f"<Check {shown}>"


def _rebuild_check(predicate: Callable[[Any], object], description: str | None, message: str | None) -> Check:
    return Check(predicate, description=description, message=message)


class Command:
    """One bot command: what it is called, what runs it, and who may run it where.

    Immutable (``extra`` is a plain dict owned by the command), compared and
    hashed by identity, picklable when its ``execute`` is; safe to share
    between threads. Loading (:func:`~service_client.load_commands`) never calls
    :attr:`execute`; a :class:`~service_client.dispatcher.CommandDispatcher`
    does, from messages.

    Args:
        name: The command's name, the key it is stored under (non-empty).
        execute: What runs the command.
        aliases: Other names: one str, or an iterable of str (None means none).
        description: One line for help texts; None means "".
        extra: Other data to keep with the command (copied into a new dict).
        requires: Permissions the message author must hold in the server
            for a dispatcher to run the command: a :class:`Permissions` flag
            (several OR-ed together), a permission name
            (``"KICK_MEMBERS"``, case-insensitive), an int bitfield, or an
            iterable of those; None means none.
        cooldown: Seconds between two runs of this command through a
            dispatcher, in one bucket (``cooldown_per``): an int or float >= 0;
            0 or None means no cooldown.
        cooldown_per: Who shares a cooldown: a :class:`BucketType` (or its
            name); default :attr:`BucketType.USER`, each user their own.
        max_concurrency: How many runs of the command may go on at once in one
            bucket (``concurrency_per``): an int >= 1; None means no limit.
        concurrency_per: Who shares that limit; default
            :attr:`BucketType.DEFAULT`, everyone together.
        checks: Conditions on running it through a dispatcher: a :class:`Check`, a
            predicate ``predicate(ctx) -> bool`` (made a :class:`Check`), or an
            iterable of those; None means none. The checks attached to
            ``execute`` by check decorators follow them.
        hidden: Leave the command out of the help: its list of commands, and
            ``!help name``, which answers as for an unknown command.

    Attributes:
        name: The command's name.
        execute: The callable given. A
            :class:`~service_client.dispatcher.CommandDispatcher` calls
            ``execute(ctx, *args)`` with a
            :class:`~service_client.dispatcher.CommandContext` and the
            words after the command name (spaces separate them, balanced quotes
            group them, an apostrophe is text); outside a dispatcher
            the library imposes no signature.
        aliases: Other names a dispatcher accepts for this command, as a
            tuple in the given order without repeats. :func:`load_commands`
            indexes by :attr:`name` only (see :meth:`matches`).
        description: One line for help texts ("" when none).
        extra: Any other keys of a mapping command (empty for other sources).
        requires: The required permissions (``Permissions(0)`` when none).
        cooldown: The cooldown in seconds (0.0 when none).
        cooldown_per: The :class:`BucketType` the cooldown is counted per.
        max_concurrency: The most runs at once in one bucket (None when no limit).
        concurrency_per: The :class:`BucketType` that limit is counted per.
        checks: The checks, a tuple of :class:`Check` in the order they run.
        hidden: Whether the help leaves it out.

    Raises:
        TypeError: ``name`` is not a str, ``execute`` is not callable,
            ``aliases`` is not a str or an iterable of str, ``description``
            is not a str, ``extra`` is not a mapping, ``requires`` holds
            something other than a permission name, flag or int, or
            ``cooldown`` is not a number, ``checks`` holds something not
            callable, ``hidden`` is not a bool, a bucket type is neither a
            :class:`BucketType` nor a str, or ``max_concurrency`` is not an int.
        ValueError: ``name`` or an alias is empty, ``requires`` names an
            unknown permission or holds a negative int, ``cooldown`` is
            negative, NaN or infinite, a bucket type name is unknown, or
            ``max_concurrency`` is below 1.
    """

    __slots__ = ("aliases", "checks", "concurrency_per", "cooldown", "cooldown_per", "description", "execute",
                 "extra", "hidden", "max_concurrency", "name", "requires")

    name: str
    execute: Callable[..., Any]
    aliases: tuple[str, ...]
    description: str
    extra: dict[str, Any]
    requires: Permissions
    cooldown: float
    checks: tuple[Check, ...]
    hidden: bool
    cooldown_per: BucketType
    max_concurrency: int | None
    concurrency_per: BucketType

    def __init__(
        self,
        name: str,
        execute: Callable[..., Any],
        *,
        aliases: str | Iterable[str] | None = (),
        description: str | None = "",
        extra: Mapping[str, Any] | None = None,
        requires: Permissions | str | int | Iterable[Permissions | str | int] | None = None,
        cooldown: float | None = None,
        checks: Check | Callable[[Any], object] | Iterable[Check | Callable[[Any], object]] | None = None,
        hidden: bool = False,
        cooldown_per: BucketType | str = BucketType.USER,
        max_concurrency: int | None = None,
        concurrency_per: BucketType | str = BucketType.DEFAULT,
    ) -> None:
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        if not name:
            raise ValueError("name must not be empty")
        if not callable(execute):
            raise TypeError(f"execute must be callable, not {type(execute).__name__}")
        if description is None:
            description = ""
        if not isinstance(description, str):
            raise TypeError(
                f"description must be a str, not {type(description).__name__}"
            )
        if extra is None:
            extra = {}
        if not isinstance(extra, Mapping):
            raise TypeError(f"extra must be a mapping, not {type(extra).__name__}")
        if not isinstance(hidden, bool):
            raise TypeError(f"hidden must be a bool, not {type(hidden).__name__}")
        cooldown_bucket = BucketType.resolve(cooldown_per, name="cooldown_per")
        concurrency_bucket = BucketType.resolve(concurrency_per, name="concurrency_per")
        if max_concurrency is not None:
            if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int):
                raise TypeError(f"max_concurrency must be an int or None, not {type(max_concurrency).__name__}")
            if max_concurrency < 1:
                raise ValueError(f"max_concurrency must be at least 1 (None for no limit), got {max_concurrency!r}")
        all_checks = _normalise_checks(checks) + _attached_checks(execute)
        set_ = object.__setattr__
        set_(self, "name", name)
        set_(self, "execute", execute)
        set_(self, "aliases", _normalise_aliases(aliases))
        set_(self, "description", description)
        set_(self, "extra", dict(extra))
        set_(self, "requires", _normalise_requires(requires))
        set_(self, "cooldown", _normalise_cooldown(cooldown))
        set_(self, "checks", all_checks)
        set_(self, "hidden", hidden)
        set_(self, "cooldown_per", cooldown_bucket)
        set_(self, "max_concurrency", max_concurrency)
        set_(self, "concurrency_per", concurrency_bucket)

    def __setattr__(self, attr: str, value: object) -> None:
        raise AttributeError(f"Command is immutable; cannot set {attr!r}")

    def __delattr__(self, attr: str) -> None:
        raise AttributeError(f"Command is immutable; cannot delete {attr!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild_command,
            (
                self.name,
                self.execute,
                self.aliases,
                self.description,
                self.extra,
                self.requires,
                self.cooldown,
                self.checks,
                self.hidden,
                self.cooldown_per,
                self.max_concurrency,
                self.concurrency_per,
            ),
        )

    def __repr__(self) -> str:
        more = ""
        if self.requires:
            more += f", requires={self.requires!r}"
        if self.cooldown:
            more += f", cooldown={self.cooldown!r}"
            if self.cooldown_per is not BucketType.USER:
                more += f", cooldown_per={self.cooldown_per}"
        if self.max_concurrency is not None:
            more += f", max_concurrency={self.max_concurrency!r}, concurrency_per={self.concurrency_per}"
        if self.checks:
            more += f", checks={self.checks!r}"
        if self.hidden:
            more += ", hidden=True"
        return (
            f"Command(name={self.name!r}, aliases={self.aliases!r}, "
            f"description={self.description!r}{more})"
        )

    def matches(self, word: str) -> bool:
        """Tell whether ``word`` is this command's name or one of its aliases.

        Args:
            word: A command word as typed, without the bot's prefix; compared
                exactly (case-sensitive).

        Returns:
            True when ``word`` equals :attr:`name` or an entry of :attr:`aliases`.
        """
        return word == self.name or word in self.aliases

    @classmethod
    def from_object(cls, obj: object) -> Command | None:
        """Normalise whatever a command file exposes into a :class:`Command`.

        Args:
            obj: A :class:`Command` (returned as is); a mapping with a ``str``
                ``name`` and a callable ``execute``, optional ``aliases``,
                ``description``, ``requires``, ``cooldown``, ``checks``, ``hidden``,
                ``cooldown_per``, ``max_concurrency`` and ``concurrency_per``, any other keys
                going to :attr:`extra`; or any other object (a module
                included) with a ``str`` attribute ``name`` and a callable
                attribute ``execute``, optional ``aliases``, ``description``,
                ``requires``, ``cooldown``, ``checks``, ``hidden``, ``cooldown_per``,
                ``max_concurrency`` and ``concurrency_per`` attributes.

        Returns:
            The command, or None when ``obj`` is none of the above or one of its
            parts is invalid. Never raises for a bad ``obj``.
        """
        try:
            return _to_command(obj)
        except Exception:  # noqa: BLE001 - a bad object, or attributes that raise
            return None


def _rebuild_command(
    name: str,
    execute: Callable[..., Any],
    aliases: tuple[str, ...],
    description: str,
    extra: dict[str, Any],
    requires: Permissions = Permissions(0),  # noqa: B008 - an immutable flag value
    cooldown: float = 0.0,
    checks: tuple[Check, ...] = (),
    hidden: bool = False,
    cooldown_per: BucketType = BucketType.USER,
    max_concurrency: int | None = None,
    concurrency_per: BucketType = BucketType.DEFAULT,
) -> Command:
    # The checks come back whole: the ones execute holds are in them, so they are not added again.
    command = Command(name, execute, aliases=aliases, description=description, extra=extra,
                      requires=requires, cooldown=cooldown, hidden=hidden, cooldown_per=cooldown_per,
                      max_concurrency=max_concurrency, concurrency_per=concurrency_per)
    object.__setattr__(command, "checks", checks)
    return command


def _normalise_checks(checks: object) -> tuple[Check, ...]:
    if checks is None:
        return ()
    if callable(checks):
        checks = (checks,)
    if isinstance(checks, (str, bytes, Mapping)) or not isinstance(checks, Iterable):
        raise TypeError(
            f"checks must be a check, a predicate or an iterable of those, not {type(checks).__name__}"
        )
    out: list[Check] = []
    for item in checks:
        if isinstance(item, Check):
            out.append(item)
        elif callable(item):
            out.append(Check(item))
        else:
            raise TypeError(f"every check must be a Check or a callable predicate, not {type(item).__name__}")
    return tuple(out)


def _attached_checks(execute: Callable[..., Any]) -> tuple[Check, ...]:
    """The checks the check decorators put on ``execute``; marks it as made into a command."""
    held = getattr(execute, CHECKS_ATTRIBUTE, ())
    attached = tuple(c for c in held if isinstance(c, Check)) if isinstance(held, (list, tuple)) else ()
    try:
        setattr(execute, CHECKS_ATTRIBUTE, attached)  # a check decorator written above now refuses
    except (AttributeError, TypeError):
        pass  # a bound method or a builtin: its checks come from checks= only
    return attached


def _normalise_requires(requires: object) -> Permissions:
    if requires is None:
        return Permissions(0)
    if isinstance(requires, (Permissions, str, int)):
        return Permissions.resolve(requires)
    if isinstance(requires, (bytes, Mapping)) or not isinstance(requires, Iterable):
        raise TypeError(
            "requires must be a permission name, a Permissions flag, an int or an "
            f"iterable of those, not {type(requires).__name__}"
        )
    value = Permissions(0)
    for item in requires:
        value |= Permissions.resolve(item)
    return value


def _normalise_cooldown(cooldown: object) -> float:
    if cooldown is None:
        return 0.0
    if isinstance(cooldown, bool) or not isinstance(cooldown, (int, float)):
        raise TypeError(
            f"cooldown must be a number of seconds, not {type(cooldown).__name__}"
        )
    try:
        seconds = float(cooldown)
    except OverflowError:  # an int too large for a float
        seconds = math.inf
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"cooldown must be a finite number of seconds >= 0, got {cooldown!r}")
    return seconds


def _normalise_aliases(aliases: object) -> tuple[str, ...]:
    if aliases is None:
        return ()
    if isinstance(aliases, str):
        aliases = (aliases,)
    if isinstance(aliases, (bytes, Mapping)) or not isinstance(aliases, Iterable):
        raise TypeError(
            f"aliases must be a str or an iterable of str, not {type(aliases).__name__}"
        )
    result: list[str] = []
    for alias in aliases:
        if not isinstance(alias, str):
            raise TypeError(f"every alias must be a str, not {type(alias).__name__}")
        if not alias:
            raise ValueError("an alias must not be empty")
        if alias not in result:
            result.append(alias)
    return tuple(result)


def _to_command(obj: object) -> Command:
    """Like :meth:`Command.from_object`, but raise with the reason when invalid."""
    if isinstance(obj, Command):
        return obj
    if isinstance(obj, Mapping):
        if "name" not in obj:
            raise ValueError("the mapping has no 'name' key")
        if "execute" not in obj:
            raise ValueError("the mapping has no 'execute' key")
        return Command(
            obj["name"],
            obj["execute"],
            aliases=obj.get("aliases", ()),
            description=obj.get("description", ""),
            extra={k: v for k, v in obj.items() if k not in _FIELDS},
            requires=obj.get("requires"),
            cooldown=obj.get("cooldown"),
            checks=obj.get("checks"),
            hidden=obj.get("hidden", False),
            cooldown_per=obj.get("cooldown_per", BucketType.USER),
            max_concurrency=obj.get("max_concurrency"),
            concurrency_per=obj.get("concurrency_per", BucketType.DEFAULT),
        )
    kind = "module" if isinstance(obj, types.ModuleType) else type(obj).__name__
    if not hasattr(obj, "name"):
        raise ValueError(f"the {kind} has no 'name'")
    if not hasattr(obj, "execute"):
        raise ValueError(f"the {kind} has no 'execute'")
    source: Any = obj
    return Command(
        source.name,
        source.execute,
        aliases=getattr(source, "aliases", ()),
        description=getattr(source, "description", ""),
        requires=getattr(source, "requires", None),
        cooldown=getattr(source, "cooldown", None),
        checks=getattr(source, "checks", None),
        hidden=getattr(source, "hidden", False),
        cooldown_per=getattr(source, "cooldown_per", BucketType.USER),
        max_concurrency=getattr(source, "max_concurrency", None),
        concurrency_per=getattr(source, "concurrency_per", BucketType.DEFAULT),
    )
