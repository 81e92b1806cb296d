"""The built-in command checks, and how a :class:`~service_client.CommandDispatcher` runs checks.

A :class:`~service_client.Check` (the record, in :mod:`service_client.commands`) is
a condition on running a command. The checks here read the invocation: where the
message was written and the author's member (roles, permissions)::

    @commands.command(hidden=True)
    @guild_only()
    @has_any_role("Staff", "Moderator")
    @in_channel("modmail")
    def close(ctx): ...

Each one is also usable in ``checks=`` (``commands.command(checks=[has_role("Staff")])``
or ``Command(..., checks=[...])``). A refusal is a
:class:`~service_client.errors.CheckFailure` subclass whose text tells the author why;
the dispatcher replies it and emits it as ``command_error`` (see
:mod:`service_client.dispatcher.core`). The checks that need a server
(:func:`has_role`, :func:`has_any_role`, :func:`has_permissions`, :func:`guild_only`)
refuse a direct message with :class:`~service_client.errors.NoPrivateMessage`.

Every built-in check is picklable (its predicate is a :func:`functools.partial` of a
module function), so a :class:`~service_client.Command` carrying them pickles too.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..commands import Check, Command
from ..errors import (
    CheckFailure,
    CommandError,
    CommandInvokeError,
    MissingPermissions,
    MissingRole,
    NoPrivateMessage,
    PrivateMessageOnly,
    WrongChannel,
)
from ..permissions import Permissions
from .context import CommandContext

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client
    from ..models.member import Member

__all__ = [
    "check",
    "dm_only",
    "guild_only",
    "has_any_role",
    "has_permissions",
    "has_role",
    "in_channel",
    "run_checks",
]

_log = logging.getLogger("service_client.dispatcher")


def check(
    predicate: Callable[[CommandContext], object], *, description: str | None = None, message: str | None = None
) -> Check:
    """A check of your own: ``predicate(ctx)`` says whether the command may run.

    ::

        def is_owner(ctx: CommandContext) -> bool:
            return ctx.guild is not None and ctx.guild.owner_id == ctx.author.id

        @commands.command()
        @check(is_owner, message="Only the server's owner can do that.")
        def shutdown(ctx): ...

    Args:
        predicate: Called with the :class:`~service_client.CommandContext` before the
            arguments are read, on the worker thread that runs the command (it may block).
            True lets the command run; False refuses it with a
            :class:`~service_client.errors.CheckFailure` whose text is ``message``. It may
            raise a :class:`~service_client.errors.CheckFailure` with its own text; any
            other exception is a failure of the bot (a
            :class:`~service_client.errors.CommandInvokeError`, logged).
        description: A few words for the help line; None shows nothing.
        message: The refusal's text; None gives ``"You cannot use !name."``.

    Returns:
        The :class:`~service_client.Check`: a decorator for the command function, or an
        item of ``checks=``.

    Raises:
        TypeError: ``predicate`` is not callable, or ``description`` or ``message`` is not a str.
        ValueError: ``description`` or ``message`` is empty.
    """
    return Check(predicate, description=description, message=message)


def guild_only() -> Check:
    """The command runs only in a server; a direct message gets :class:`~service_client.errors.NoPrivateMessage`.

    Returns:
        The :class:`~service_client.Check` (a decorator, or an item of ``checks=``).
    """
    return Check(_guild_only, description="in servers only")


def dm_only() -> Check:
    """The command runs only in direct messages; in a server, :class:`~service_client.errors.PrivateMessageOnly`.

    Returns:
        The :class:`~service_client.Check` (a decorator, or an item of ``checks=``).
    """
    return Check(_dm_only, description="in direct messages only")


def has_role(role: str) -> Check:
    """The author must hold this role in the message's server.

    Args:
        role: The role's id, or its name (compared exactly, letter case included). A text
            that is the id of a role of the server matches that role only, never a role
            named so (checking a name may fetch the server's roles once).

    Returns:
        The :class:`~service_client.Check`. It refuses with
        :class:`~service_client.errors.MissingRole` ("You need the Staff role to use
        !close."), and in a direct message with
        :class:`~service_client.errors.NoPrivateMessage`. Reading the roles may fetch the
        author's member (see :attr:`Message.member <service_client.Message.member>`).

    Raises:
        TypeError: ``role`` is not a str.
        ValueError: ``role`` is empty.
    """
    roles = _texts("role", (role,))
    return Check(functools.partial(_has_roles, roles, _Listed()), description=f"role {role}")


def has_any_role(*roles: str) -> Check:
    """The author must hold at least one of these roles in the message's server.

    Args:
        *roles: Role ids or names (names compared exactly; a text that is a role's id
            matches that role only, as in :func:`has_role`), at least one.

    Returns:
        The :class:`~service_client.Check`; it refuses as :func:`has_role` does.

    Raises:
        TypeError: A role is not a str.
        ValueError: No role, or an empty one.
    """
    given = _texts("role", roles)
    return Check(functools.partial(_has_roles, given, _Listed()), description=f"a role of {', '.join(given)}")


def has_permissions(*permissions: Permissions | str | int, **flags: bool) -> Check:
    """The author must hold these server permissions (roles, owner, administrator), as ``requires=`` asks.

    ``has_permissions(Permissions.KICK_MEMBERS)``, ``has_permissions("KICK_MEMBERS")``
    and ``has_permissions(kick_members=True)`` are the same check.

    Args:
        *permissions: :class:`~service_client.Permissions` flags, permission names
            (case-insensitive) or int bitfields.
        **flags: Permission names in lower case, each ``True``.

    Returns:
        The :class:`~service_client.Check`. It refuses with
        :class:`~service_client.errors.MissingPermissions` (``.missing``: the flags the
        author lacks), and in a direct message with
        :class:`~service_client.errors.NoPrivateMessage`.

    Raises:
        TypeError: A permission is not a flag, name or int, or a flag's value is not True.
        ValueError: No permission given, an unknown name, or a negative int.
    """
    required = Permissions(0)
    for item in permissions:
        required |= Permissions.resolve(item)
    for name, value in flags.items():
        if value is not True:
            raise TypeError(f"has_permissions({name}=...) takes True, not {value!r}")
        required |= Permissions.resolve(name)
    if not required:
        raise ValueError("has_permissions needs at least one permission")
    return Check(functools.partial(_has_permissions, required), description=f"needs {_names(required)}")


def in_channel(*channels: str) -> Check:
    """The command runs only in these channels.

    Args:
        *channels: Channel ids or names (a text that is a known channel's id matches that
            channel only; a name may start with ``#``; names are compared
            ignoring letter case), at least one.

    Returns:
        The :class:`~service_client.Check`. It refuses with
        :class:`~service_client.errors.WrongChannel` ("!close can only be used in
        #modmail."). A channel named rather than given by id is looked up in the cache,
        else fetched once (a REST request on the worker thread).

    Raises:
        TypeError: A channel is not a str.
        ValueError: No channel, or an empty one.
    """
    given = _texts("channel", channels)
    return Check(functools.partial(_in_channels, given), description=f"in {_channels_text(given)}")


def run_checks(ctx: CommandContext, command: Command) -> None:
    """Run the command's ``requires`` then its checks, in order; return when all let it run.

    Raises:
        CommandError: The first refusal (a :class:`~service_client.errors.CheckFailure`
            usually), with ``command_name`` and ``context`` filled in.
        CommandInvokeError: A check raised something else (logged with its traceback), or
            the author's member could not be read.
    """
    if command.requires:
        _run(ctx, command, functools.partial(_has_permissions, command.requires), None)
    for item in command.checks:
        _run(ctx, command, item.predicate, item)


def _run(ctx: CommandContext, command: Command, predicate: Callable[[CommandContext], object],
         item: Check | None) -> None:
    try:
        allowed = predicate(ctx)
    except CommandError as exc:
        if exc.command_name is None:
            exc.command_name = command.name
        if exc.context is None:
            exc.context = ctx
        raise
    except Exception as exc:
        _log.error("a check of command %r raised", command.name, exc_info=exc)
        raise CommandInvokeError(
            f"Sorry, {_label(ctx)} failed: it could not be checked.",
            original=exc,
            command_name=command.name,
            context=ctx,
        ) from exc
    if not allowed:
        text = item.refusal(_label(ctx)) if item is not None else f"You cannot use {_label(ctx)}."
        raise CheckFailure(text, command_name=command.name, context=ctx)


# -- the predicates (module functions, so that the checks pickle) ------------------------------


def _guild_only(ctx: CommandContext) -> bool:
    _require_server(ctx)
    return True


def _dm_only(ctx: CommandContext) -> bool:
    if ctx.message.server_id is not None:
        raise PrivateMessageOnly(f"{_label(ctx)} can only be used in direct messages.")
    return True


class _Listed(dict[str, object]):
    """Server id -> the role manager a role check filled with the server's roles; pickled empty
    (it holds live managers)."""

    def __reduce__(self) -> tuple[type[_Listed], tuple[()]]:
        return (_Listed, ())


def _has_roles(roles: tuple[str, ...], listed: _Listed, ctx: CommandContext) -> bool:
    member = _member(ctx)
    if member is not None:
        if not set(roles).isdisjoint(member.role_ids):
            return True
        named = set(roles).intersection(role.name for role in member.roles.values())
        if any(not _is_role_id(ctx, text, listed) for text in named):
            return True
    names = _role_names(ctx, roles)
    needed = f"the {names[0]} role" if len(names) == 1 else f"one of the roles {', '.join(names)}"
    raise MissingRole(f"You need {needed} to use {_label(ctx)}.", roles=roles)


def _is_role_id(ctx: CommandContext, text: str, listed: _Listed) -> bool:
    """Whether ``text`` is the id of a role of the message's server: then it is matched as an
    id only, so a role *named* like another role's id cannot stand in for it.

    Looked up in the server's role cache; when not found there, the server's roles are
    fetched once per server and check (``listed`` remembers the role manager it filled;
    role events keep that cache current afterwards). A failed fetch counts as an id: the
    check refuses rather than guess.
    """
    guild = ctx.message.guild
    if guild is None:
        return False
    if text in guild.roles.cache:
        return True
    if listed.get(guild.id) is not guild.roles:
        try:
            guild.roles.fetch_all()
        except Exception:  # noqa: BLE001 - refused below, with the reason logged
            _log.warning("could not fetch the roles of server %s to check a role name", guild.id, exc_info=True)
            return True
        listed[guild.id] = guild.roles
    return text in guild.roles.cache


def _has_permissions(required: Permissions, ctx: CommandContext) -> bool:
    member = _member(ctx)
    held = member.permissions if member is not None else Permissions(0)
    missing = Permissions(int(required) & ~int(held))
    if missing:
        raise MissingPermissions(f"You need the {_names(missing)} permission to use {_label(ctx)}.",
                                 missing=missing)
    return True


def _in_channels(channels: tuple[str, ...], ctx: CommandContext) -> bool:
    message = ctx.message
    if message.channel_id in channels:
        return True
    if message.server_id is not None:
        channel = message.channel
        if channel is None:
            channel = ctx.client.channels.fetch(message.channel_id)
        # A text that is the id of a known channel is matched as an id only: a channel *named*
        # like another channel's id does not stand in for it.
        known = ctx.client.channels.cache
        wanted = {c.removeprefix("#").casefold() for c in channels if c not in known}
        if channel.name.casefold() in wanted:
            return True
    raise WrongChannel(f"{_label(ctx)} can only be used in {_channels_text(channels, ctx)}.", channels=channels)


# -- helpers ------------------------------------------------------------------------------------


def _names(flags: Permissions) -> str:
    """``KICK_MEMBERS and BAN_MEMBERS``: the names of the flags set."""
    names = [flag.name for flag in Permissions if flag & flags and flag.name]
    return " and ".join(names) if names else f"{int(flags)}"


def _label(ctx: CommandContext) -> str:
    return f"{ctx.prefix}{ctx.invoked_with}"


def _require_server(ctx: CommandContext) -> None:
    if ctx.message.server_id is None:
        raise NoPrivateMessage(f"{_label(ctx)} can only be used in a server.")


def _member(ctx: CommandContext) -> Member | None:
    """The author's member in the message's server (None once they left).

    Raises:
        NoPrivateMessage: The message is a direct message.
        CommandInvokeError: The member could not be read (logged).
    """
    _require_server(ctx)
    try:
        return ctx.message.member
    except Exception as exc:  # noqa: BLE001 - any failure to read them is reported
        _log.warning("could not read the member of the author of %s", _label(ctx), exc_info=True)
        raise CommandInvokeError(
            f"Sorry, {_label(ctx)} failed: your permissions could not be checked.", original=exc
        ) from exc


def _role_names(ctx: CommandContext, roles: tuple[str, ...]) -> list[str]:
    """The roles as the author knows them: by name where ``roles`` gives the id of a role.

    The server's roles are fetched once (one request, on a refusal only) when a role is
    neither the id nor the name of a cached role; a failed fetch leaves the texts as given.
    """
    guild = ctx.message.guild
    if guild is None:
        return list(roles)
    cached = guild.roles.cache
    known = {role.name for role in cached.values()}
    if any(r not in cached and r not in known for r in roles):
        try:
            guild.roles.fetch_all()
        except Exception:  # noqa: BLE001 - only the refusal's wording depends on it
            _log.debug("could not fetch the roles of server %s", guild.id, exc_info=True)
        cached = guild.roles.cache
    return [cached[r].name if r in cached else r for r in roles]


def _channels_text(channels: tuple[str, ...], ctx: CommandContext | None = None, *,
                   client: Client | None = None) -> str:
    """``#modmail or #support``: a channel given by id shows its cached name, else its mention ``<#id>``."""
    if ctx is not None:
        client = ctx.client
    cache = client.channels.cache if client is not None else {}
    shown = []
    for given in channels:
        cached = cache.get(given)
        name = getattr(cached, "name", None)
        if isinstance(name, str) and name:
            shown.append("#" + name)
        elif given.isdigit() and len(given) >= 15:  # an id the bot knows no name of: a mention shows as the name
            shown.append(f"<#{given}>")
        else:
            shown.append("#" + given.removeprefix("#"))
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]


def describe_check(check: Check, client: Client) -> str | None:
    """The words of ``check`` for the help line, as ``client`` knows them now (a channel's name
    for a channel given by id), or None when the check has no description."""
    predicate = check.predicate
    if isinstance(predicate, functools.partial) and predicate.func is _in_channels and predicate.args:
        return f"in {_channels_text(predicate.args[0], client=client)}"
    return check.description


def _texts(kind: str, given: tuple[object, ...]) -> tuple[str, ...]:
    if not given:
        raise ValueError(f"give at least one {kind}")
    for item in given:
        if not isinstance(item, str):
            raise TypeError(f"a {kind} must be a str (an id or a name), not {type(item).__name__}")
        if not item.strip():
            raise ValueError(f"a {kind} must not be empty")
    return tuple(given)  # type: ignore[arg-type]
