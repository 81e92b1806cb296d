"""Argument converters: from the text a user typed to the value a command's parameter is annotated with.

A part of :class:`~service_client.dispatcher.CommandDispatcher`. Each
parameter of a command after the context is converted by its annotation:

===================================  ================================================================
Annotation                           Accepted text
===================================  ================================================================
none, ``str``, ``Any``               anything, as typed
``int``                              a whole number: ``42``, ``-3``
``float``                            a finite number: ``2.5``, ``1e3``
``bool``                             ``yes``/``no``, ``true``/``false``, ``on``/``off``, ``1``/``0``
:class:`~service_client.User`        ``<@id>``, ``<@!id>``, an id, ``name#tag`` or a username
                                     (``@carol`` is ``carol``)
:class:`~service_client.Member`      the same, or a nickname; a member of the command's server
:class:`~service_client.Role`        ``<@&id>``, an id or a role name of the command's server
:class:`~service_client.Channel`     ``<#id>``, an id, ``#name`` or ``name`` of the command's server
``Literal["on", "off"]``             one of the values (letter case ignored when unambiguous)
an :class:`enum.Enum`                a member's name or its string value
``Optional[X]``, ``X | None``        as ``X``; None when the word is absent or does not convert
``Union[X, Y]``                      as ``X``, else as ``Y``
a registered type                    what its converter accepts (:meth:`CommandDispatcher.converter`)
a class with ``convert(ctx, text)``  what that method accepts (the :class:`Converter` protocol)
===================================  ================================================================

A converter is a callable ``convert(ctx, argument) -> value``. It refuses the
text by raising :class:`~service_client.errors.BadArgumentError` (its message
is shown to the author), :class:`ValueError` or :class:`TypeError`; the
dispatcher then answers with a :class:`~service_client.errors.CommandArgumentError`.
Any other exception is a failure of the bot (a
:class:`~service_client.errors.CommandInvokeError`).
"""

from __future__ import annotations

import enum
import inspect
import math
import re
import threading
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, Union

from ..errors import BadArgumentError, ServiceAPIError
from ..models.channel import Channel
from ..models.guild import Guild
from ..models.member import Member
from ..models.role import Role
from ..models.user import User

if TYPE_CHECKING:  # pragma: no cover
    from .context import CommandContext

__all__ = [
    "CHANNEL_MENTION",
    "ROLE_MENTION",
    "USER_MENTION",
    "ArgumentType",
    "Converter",
    "ConverterFunction",
    "ConverterRegistry",
    "check_registration",
]

_T = TypeVar("_T")
_T_co = TypeVar("_T_co", covariant=True)

#: ``convert(ctx, argument) -> value``: what a registered converter is.
ConverterFunction = Callable[["CommandContext", str], Any]

#: An id as mentions carry it (the service's ids are opaque strings of these characters).
_ID = r"[A-Za-z0-9_-]{1,100}"
_ID_TEXT = re.compile(_ID)
#: A user mention: ``<@id>`` (``<@!id>``, a nickname mention on other services, is accepted too).
USER_MENTION = re.compile(rf"<@!?({_ID})>")
#: A role mention: ``<@&id>``.
ROLE_MENTION = re.compile(rf"<@&({_ID})>")
#: A channel mention: ``<#id>``.
CHANNEL_MENTION = re.compile(rf"<#({_ID})>")

_INTEGER = re.compile(r"[+-]?[0-9]+")
_BOOLEANS = {
    "yes": True, "true": True, "on": True, "1": True,
    "no": False, "false": False, "off": False, "0": False,
}


class Converter(Protocol[_T_co]):
    """What an annotation may be for a type of your own: a class with ``convert(ctx, argument)``.

    Annotate a parameter with such a class and the dispatcher converts its
    text with ``convert``: a classmethod or staticmethod is called on the
    class itself (so the annotation can be the type the command receives,
    which keeps type checkers right); otherwise the class is instantiated
    once, without arguments, when the command is first compiled, and that
    instance's ``convert`` is used from any worker thread (keep it
    stateless). The optional class attributes ``label`` (the usage line's
    ``<name: label>``) and ``expected`` (the error text's "expected ...")
    are strings; by default both are the class name in lower case.

    Example::

        class Duration(datetime.timedelta):
            label = "duration"
            expected = "a duration such as 10m, 2h or 1d"

            @classmethod
            def convert(cls, ctx, argument):
                number, unit = argument[:-1], argument[-1:]
                if not number.isdigit() or unit not in "smhd":
                    raise BadArgumentError("write a number then s, m, h or d")
                return cls(seconds=int(number) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[unit])
    """

    def convert(self, ctx: CommandContext, argument: str) -> _T_co:
        """The value for ``argument`` (the text typed, one word or the rest of the line).

        Raises:
            BadArgumentError: The text is refused; the message is shown to the author.
            ValueError, TypeError: The text is refused (the message is not shown).
        """
        ...  # pragma: no cover - a protocol


class ArgumentType:
    """How the text of one parameter becomes its value (one per annotation).

    Attributes:
        label: What the usage line shows after the parameter's name
            (``integer`` gives ``<count: integer>``); None for text.
        expected: What the parameter accepts, in words, for error replies.
        convert: ``convert(ctx, argument) -> value``; raises ``ValueError``
            or ``TypeError`` (:class:`BadArgumentError` included) to refuse.
        optional: The annotation admits None (``Optional[X]``, ``X | None``).
    """

    __slots__ = ("convert", "expected", "label", "optional")

    def __init__(
        self, label: str | None, expected: str, convert: ConverterFunction, optional: bool = False
    ) -> None:
        self.label = label
        self.expected = expected
        self.convert = convert
        self.optional = optional

    def as_optional(self) -> ArgumentType:
        """The same type, admitting None."""
        return ArgumentType(self.label, self.expected, self.convert, optional=True)

    def __repr__(self) -> str:
        return f"<ArgumentType label={self.label!r} optional={self.optional}>"


def _text(ctx: CommandContext, argument: str) -> str:
    return argument


def _integer(ctx: CommandContext, argument: str) -> int:
    if not _INTEGER.fullmatch(argument):
        raise ValueError(f"not a whole number: {argument!r}")
    return int(argument)


def _number(ctx: CommandContext, argument: str) -> float:
    value = float(argument)  # ValueError for text that is no number
    if "_" in argument or not math.isfinite(value):
        raise ValueError(f"not a finite number: {argument!r}")
    return value


def _boolean(ctx: CommandContext, argument: str) -> bool:
    value = _BOOLEANS.get(argument.casefold())
    if value is None:
        raise ValueError(f"not yes or no: {argument!r}")
    return value


# -- lookups shared by the model converters -------------------------------------------------------


def _mentioned(pattern: re.Pattern[str], argument: str) -> str | None:
    match = pattern.fullmatch(argument)
    return match.group(1) if match else None


def _by_name(
    items: Iterable[_T], argument: str, keys: Sequence[Callable[[_T], str | None]], what: str
) -> _T | None:
    """The one item whose name is ``argument``, trying ``keys`` in order; None when no item has it.

    Raises:
        BadArgumentError: Several items have that name under the first key that matches any.
    """
    candidates = list(items)
    for key in keys:
        found = [item for item in candidates if key(item) == argument]
        if len(found) == 1:
            return found[0]
        if found:
            raise BadArgumentError(f"several {what} are named {argument}: use a mention or an id")
    return None


def _unless_missing(call: Callable[[], _T]) -> _T | None:
    """``call()``, or None when the service answers that the thing is not there (404) or not visible (403)."""
    try:
        return call()
    except ServiceAPIError as exc:
        if exc.status in (403, 404):
            return None
        raise


def _server_of(ctx: CommandContext, what: str) -> str:
    server_id = ctx.server_id
    if server_id is None:
        raise BadArgumentError(f"{what} belong to a server, and this message is a direct message")
    return server_id


def _guild_of(ctx: CommandContext, server_id: str) -> Guild:
    guild = ctx.guild or ctx.client.guilds.get_or_fetch(server_id)
    if guild is None:  # not the author's fault: a failure of the bot
        raise RuntimeError(f"the server {server_id} of the command's message is not known to the bot")
    return guild


_MEMBER_NAMES: tuple[Callable[[Member], str | None], ...] = (
    lambda m: m.user.tag_string if m.user.tag else None,
    lambda m: m.user.username,
    lambda m: m.nickname,
)
_USER_NAMES: tuple[Callable[[User], str | None], ...] = (
    lambda u: u.tag_string if u.tag else None,
    lambda u: u.username,
)


def _searched_member(ctx: CommandContext, server_id: str, name: str) -> Member | None:
    """The member of ``server_id`` named ``name`` exactly, by one member search (and one fetch)."""
    if not name.strip():
        return None
    guild = _guild_of(ctx, server_id)
    results = _unless_missing(lambda: guild.search_members(name))
    match = _by_name(results or (), name, _MEMBER_NAMES, "members")
    if match is None:
        return None
    # A search answers partial members (no join time): fetch the whole one, cached from now on.
    return _unless_missing(lambda: ctx.client.members.fetch(server_id, match.id)) or match


def _typed_name(argument: str) -> str:
    """A name as typed, without the ``@`` a user may put before it: ``@carol`` is ``carol``."""
    return argument[1:] if argument.startswith("@") and len(argument) > 1 else argument


def _seen_user(ctx: CommandContext, name: str) -> User | None:
    """The one cached user with that name (a message author, a member...), else None."""
    try:
        return _by_name(ctx.client.users.cache.values(), name, _USER_NAMES, "users")
    except BadArgumentError:  # several, maybe of other servers: let the server's own search tell
        return None


def _member(ctx: CommandContext, argument: str) -> Member:
    server_id = _server_of(ctx, "members")
    members = ctx.client.members
    mentioned = _mentioned(USER_MENTION, argument)
    user_id = mentioned or argument
    found = members.get(server_id, user_id)
    if found is None and mentioned is None:
        name = _typed_name(argument)
        found = _by_name(members.for_guild(server_id).values(), name, _MEMBER_NAMES, "members")
        seen = _seen_user(ctx, name) if found is None else None
        if seen is not None:  # a user the bot has seen: their member, by id
            user_id = seen.id
            found = members.get(server_id, user_id)
    if found is None and _ID_TEXT.fullmatch(user_id):
        found = _unless_missing(lambda: members.fetch(server_id, user_id))
    if found is None and mentioned is None:
        found = _searched_member(ctx, server_id, _typed_name(argument))
    if found is None:
        raise BadArgumentError(
            "that user is not a member of this server" if mentioned else "no member of this server has that name or id"
        )
    return found


def _user(ctx: CommandContext, argument: str) -> User:
    users = ctx.client.users
    mentioned = _mentioned(USER_MENTION, argument)
    user_id = mentioned or argument
    found = users.cache.get(user_id)
    if found is None and mentioned is None:
        found = _by_name(users.cache.values(), _typed_name(argument), _USER_NAMES, "users")
    if found is None and _ID_TEXT.fullmatch(user_id):
        found = _unless_missing(lambda: users.fetch(user_id))
    if found is None and mentioned is None and ctx.server_id is not None:
        member = _searched_member(ctx, ctx.server_id, _typed_name(argument))
        found = member.user if member is not None else None
    if found is None:
        raise BadArgumentError("no user has that id" if mentioned else "no user has that name or id")
    return found


def _role(ctx: CommandContext, argument: str) -> Role:
    guild = _guild_of(ctx, _server_of(ctx, "roles"))
    mentioned = _mentioned(ROLE_MENTION, argument)

    def lookup() -> Role | None:
        """The role the argument names in the command's server, or None."""
        cache = guild.roles.cache
        found = cache.get(mentioned or argument)
        if found is None and mentioned is None:
            found = _by_name(cache.values(), argument, (lambda r: r.name,), "roles")
        return found

    found = lookup()
    if found is None:  # the role cache fills on demand: one listing, then look again
        _unless_missing(guild.roles.fetch_all)
        found = lookup()
    if found is None:
        raise BadArgumentError("no role of this server has that name or id")
    return found


def _channel(ctx: CommandContext, argument: str) -> Channel:
    channels = ctx.client.channels
    server_id = ctx.server_id
    mentioned = _mentioned(CHANNEL_MENTION, argument)
    channel_id = mentioned or argument
    name = argument[1:] if argument.startswith("#") and len(argument) > 1 else argument

    def lookup() -> Channel | None:
        """The channel the argument names in the command's server, or None."""
        found = channels.cache.get(channel_id)
        if found is not None and server_id is not None and found.server_id != server_id:
            found = None  # a channel of another server
        if found is None and mentioned is None and server_id is not None:
            ours = [c for c in channels.cache.values() if c.server_id == server_id]
            found = _by_name(ours, name, (lambda c: c.name,), "channels")
        return found

    found = lookup()
    if found is None and server_id is not None:  # the channel cache fills on demand
        _unless_missing(lambda: channels.fetch_for_guild(server_id))
        found = lookup()
    elif found is None and _ID_TEXT.fullmatch(channel_id):
        found = _unless_missing(lambda: channels.fetch(channel_id))
    if found is None:
        if server_id is None and mentioned is None:
            raise BadArgumentError("in a direct message, give a channel as a mention or an id")
        raise BadArgumentError("no channel of this server has that name or id")
    return found


_TEXT = ArgumentType(None, "text", _text)
_BUILTINS: dict[Any, ArgumentType] = {
    int: ArgumentType("integer", "a whole number", _integer),
    float: ArgumentType("number", "a number", _number),
    bool: ArgumentType("yes/no", "yes or no (yes/no, true/false, on/off, 1/0)", _boolean),
    User: ArgumentType("user", "a user (a mention, an id or an exact name)", _user),
    Member: ArgumentType("member", "a member of this server (a mention, an id or an exact name)", _member),
    Role: ArgumentType("role", "a role of this server (a mention, an id or an exact name)", _role),
    Channel: ArgumentType("channel", "a channel of this server (a mention, an id or an exact name)", _channel),
}


# -- choices: Literal and Enum ----------------------------------------------------------------------


def _choice_text(value: Any) -> str:
    if isinstance(value, enum.Enum):
        return value.value if isinstance(value.value, str) else value.name
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _choices(values: Sequence[Any], texts: Mapping[str, Any]) -> ArgumentType:
    """A type accepting one of ``values``, typed as a key of ``texts`` (exactly, else ignoring case)."""
    shown = list(dict.fromkeys(_choice_text(v) for v in values))
    folded: dict[str, list[Any]] = {}
    for text, value in texts.items():
        same = folded.setdefault(text.casefold(), [])
        if value not in same:
            same.append(value)

    def convert(ctx: CommandContext, argument: str) -> Any:
        """The choice the argument names (exact, then letter case ignored); raises BadArgumentError."""
        if argument in texts:
            return texts[argument]
        candidates = folded.get(argument.casefold(), [])
        if len(candidates) == 1:
            return candidates[0]
        for value in values:  # 1 for "+1", True for "yes"
            if isinstance(value, (bool, int, float)) and not isinstance(value, enum.Enum):
                kind = _BUILTINS[bool if isinstance(value, bool) else type(value)]
                try:
                    if kind.convert(ctx, argument) == value:
                        return value
                except ValueError:
                    continue
        raise ValueError(f"not one of {shown}: {argument!r}")

    return ArgumentType("|".join(shown), "one of " + ", ".join(shown), convert)


def _literal(annotation: Any) -> ArgumentType:
    values = typing.get_args(annotation)
    if not values:
        raise TypeError("Literal needs at least one value")
    return _choices(values, {_choice_text(v): v for v in values})


def _enumeration(cls: type[enum.Enum]) -> ArgumentType:
    members = list(cls)
    if not members:
        raise TypeError(f"the enum {cls.__name__} has no member to choose from")
    texts: dict[str, Any] = {}
    for member in members:
        texts.setdefault(member.name, member)
        if isinstance(member.value, str):
            texts.setdefault(member.value, member)
    return _choices(members, texts)


def _union(options: Sequence[ArgumentType]) -> ArgumentType:
    def convert(ctx: CommandContext, argument: str) -> Any:
        """The first option that accepts the argument; else raises the last refusal."""
        refusal: Exception | None = None
        for option in options:
            try:
                return option.convert(ctx, argument)
            except (ValueError, TypeError) as exc:
                refusal = exc
        assert refusal is not None  # options is never empty
        raise refusal

    labels = [o.label or "text" for o in options]
    return ArgumentType(" or ".join(labels), " or ".join(o.expected for o in options), convert)


def _protocol(annotation: Any) -> ArgumentType | None:
    """The :class:`Converter` protocol: a class (or an instance) with a callable ``convert``."""
    if not callable(getattr(annotation, "convert", None)):
        return None
    if isinstance(annotation, type):
        static = inspect.getattr_static(annotation, "convert", None)
        owner: Any = annotation
        if not isinstance(static, (classmethod, staticmethod)):
            try:
                owner = annotation()
            except Exception as exc:  # noqa: BLE001 - any failure is the converter class's
                raise TypeError(
                    f"the converter class {annotation.__name__} cannot be instantiated without arguments: {exc}"
                ) from exc
        name = annotation.__name__
    else:
        owner = annotation
        name = type(annotation).__name__
    label = getattr(annotation, "label", None)
    label = label if isinstance(label, str) and label else name.lower()
    expected = getattr(annotation, "expected", None)
    expected = expected if isinstance(expected, str) and expected else label
    return ArgumentType(label, expected, owner.convert)


def _hashable_get(table: Mapping[Any, ArgumentType], key: Any) -> ArgumentType | None:
    try:
        return table.get(key)
    except TypeError:  # an unhashable annotation
        return None


def check_registration(key: Any, *, label: str | None, expected: str | None) -> None:
    """Check the arguments of a converter registration.

    Raises:
        TypeError: ``key`` is not a class (nor a ``typing.NewType``), or
            ``label``/``expected`` is not a str or None.
        ValueError: ``label`` or ``expected`` is empty.
    """
    if not isinstance(key, (type, typing.NewType)):
        raise TypeError(f"a converter is registered for a class or a NewType, not {key!r}")
    for what, value in (("label", label), ("expected", expected)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{what} must be a str or None, not {type(value).__name__}")
        if value is not None and not value.strip():
            raise ValueError(f"{what} must not be empty")


class ConverterRegistry:
    """The converters of one dispatcher: the built-in ones and those registered for user types.

    Thread-safe: registration swaps a new table in; resolution reads the current one.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._custom: dict[Any, ArgumentType] = {}

    def register(
        self, key: Any, convert: ConverterFunction, *, label: str | None = None, expected: str | None = None
    ) -> None:
        """Convert parameters annotated ``key`` with ``convert(ctx, argument)``; replaces an earlier one.

        Raises:
            TypeError: ``key`` is not a class (nor a ``typing.NewType``), ``convert``
                is not callable, or ``label``/``expected`` is not a str or None.
            ValueError: ``label`` or ``expected`` is empty.
        """
        check_registration(key, label=label, expected=expected)
        if not callable(convert):
            raise TypeError(f"the converter must be callable, not {type(convert).__name__}")
        name = str(getattr(key, "__name__", key)).lower()
        kind = ArgumentType(label or name, expected or label or name, convert)
        with self._lock:
            table = dict(self._custom)
            table[key] = kind
            self._custom = table

    def resolve(self, annotation: Any) -> ArgumentType:
        """The :class:`ArgumentType` for a (resolved) annotation.

        Raises:
            TypeError: No converter handles the annotation.
        """
        if annotation is inspect.Parameter.empty or annotation in (str, Any, object):
            return _TEXT
        custom = _hashable_get(self._custom, annotation)
        if custom is not None:
            return custom
        origin = typing.get_origin(annotation)
        if origin is Literal:
            return _literal(annotation)
        if origin is Union or origin is types.UnionType:
            options = [a for a in typing.get_args(annotation) if a is not type(None)]
            kinds = [self.resolve(a) for a in options]
            kind = kinds[0] if len(kinds) == 1 else _union(kinds)
            return kind.as_optional() if len(options) < len(typing.get_args(annotation)) else kind
        builtin = _hashable_get(_BUILTINS, annotation)
        if builtin is not None:
            return builtin
        if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
            return _enumeration(annotation)
        protocol = _protocol(annotation)
        if protocol is not None:
            return protocol
        shown = getattr(annotation, "__name__", None) or repr(annotation)
        raise TypeError(
            f"no converter for {shown}: register one with dispatcher.converter({shown}), give the class a "
            "convert(ctx, argument) method, or annotate the parameter with a supported type"
        )
