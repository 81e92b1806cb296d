"""Command files: the :class:`Command` record and :func:`load_commands`.

A command directory holds one Python file per command. :func:`load_commands`
imports every ``*.py`` file of the directory (not of its subdirectories, and not
those whose name starts with ``_``), each as its own module, and adds the
command each one defines to a mapping indexed by command name. A command file
either sets a module attribute ``command``::

    from service_client.commands import Command

    def execute(ctx):
        ctx.reply("Pong!")

    command = Command(name="ping", execute=execute, description="Answer Pong!")

(a :class:`Command`, a mapping with ``name`` and ``execute`` keys, or any object
with a ``str`` ``name`` and a callable ``execute``), or defines ``name`` and
``execute`` at module level. Loading performs no dispatch: a
:class:`~service_client.dispatcher.CommandDispatcher` runs the loaded commands
from chat messages (it calls ``execute(ctx, *args)``), or the bot calls
``command.execute`` itself. The commands guide (``docs/guides/commands.rst``)
walks through a command directory and its dispatcher.
"""

from __future__ import annotations

import errno
import hashlib
import importlib.util
import logging
import math
import os
import re
import sys
import types
import warnings
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from typing import Any, TypeVar

from .errors import CommandLoadWarning
from .permissions import Permissions

__all__ = ["Command", "load_commands"]

_log = logging.getLogger("service_client.commands")

#: Parent name of every module imported by :func:`load_commands`. A plain
#: placeholder package with this name is put in ``sys.modules`` so that the
#: loaded modules can be found again by name (``pickle``, ``typing``).
MODULE_PREFIX = "service_client_commands"

#: Keys of a mapping command that become :class:`Command` fields; every other
#: key goes to :attr:`Command.extra`.
_FIELDS = ("name", "execute", "aliases", "description", "requires", "cooldown")

_NOT_IDENTIFIER = re.compile(r"\W")

_M = TypeVar("_M", bound=MutableMapping[str, "Command"])


class Command:
    """One bot command, as loaded by :func:`load_commands`.

    Immutable (``extra`` is a plain dict owned by the command), compared and
    hashed by identity, picklable when its ``execute`` is; safe to share
    between threads. Loading never calls :attr:`execute`; a
    :class:`~service_client.dispatcher.CommandDispatcher` does, from messages.

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
        cooldown: Seconds one user must wait between two runs of this
            command through a dispatcher (an int or float >= 0; 0 or None
            means no cooldown).

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
        cooldown: The per-user cooldown in seconds (0.0 when none).

    Raises:
        TypeError: ``name`` is not a str, ``execute`` is not callable,
            ``aliases`` is not a str or an iterable of str, ``description``
            is not a str, ``extra`` is not a mapping, ``requires`` holds
            something other than a permission name, flag or int, or
            ``cooldown`` is not a number.
        ValueError: ``name`` or an alias is empty, ``requires`` names an
            unknown permission or holds a negative int, or ``cooldown`` is
            negative, NaN or infinite.
    """

    __slots__ = ("aliases", "cooldown", "description", "execute", "extra", "name", "requires")

    name: str
    execute: Callable[..., Any]
    aliases: tuple[str, ...]
    description: str
    extra: dict[str, Any]
    requires: Permissions
    cooldown: float

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
        set_ = object.__setattr__
        set_(self, "name", name)
        set_(self, "execute", execute)
        set_(self, "aliases", _normalise_aliases(aliases))
        set_(self, "description", description)
        set_(self, "extra", dict(extra))
        set_(self, "requires", _normalise_requires(requires))
        set_(self, "cooldown", _normalise_cooldown(cooldown))

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
            ),
        )

    def __repr__(self) -> str:
        more = ""
        if self.requires:
            more += f", requires={self.requires!r}"
        if self.cooldown:
            more += f", cooldown={self.cooldown!r}"
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
                ``description``, ``requires`` and ``cooldown``, any other keys
                going to :attr:`extra`; or any other object (a module
                included) with a ``str`` attribute ``name`` and a callable
                attribute ``execute``, optional ``aliases``, ``description``,
                ``requires`` and ``cooldown`` attributes.

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
) -> Command:
    return Command(
        name,
        execute,
        aliases=aliases,
        description=description,
        extra=extra,
        requires=requires,
        cooldown=cooldown,
    )


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
    seconds = float(cooldown)
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
    )


def load_commands(directory: str | os.PathLike[str], commands: _M) -> _M:
    """Load every command file of a directory into ``commands``.

    ``Client.load_commands(directory)`` calls this with ``client.commands``.

    Scans ``directory`` itself, not its subdirectories, for regular files
    named ``*.py`` whose name does not start with ``_``, in sorted file-name
    order. Each file is imported as its own module named
    ``service_client_commands._<hash of its path>_<stem>`` (kept in
    ``sys.modules``; two files with the same name in different directories do
    not clash; loading a file again re-imports it). Its command is the module
    attribute ``command`` when the module has one (a :class:`Command`, a
    mapping or an object with a ``str`` ``name`` and a callable ``execute``;
    see :meth:`Command.from_object`), else the module itself when it defines
    ``name`` and ``execute``. The command is stored as ``commands[name]``.

    Nothing stops on a bad file: a file whose import raises (a
    :class:`SyntaxError` included), whose ``command`` attribute is invalid, or
    that defines no command is skipped with a :class:`CommandLoadWarning`
    naming the file and the reason, attributed to that file; the other files
    still load. A command whose name is already in ``commands`` (loaded by an
    earlier file or an earlier call) replaces the earlier one, with a
    :class:`CommandLoadWarning`. To reload a directory without those warnings,
    clear ``commands`` first. No dispatch happens here: no prefix, no
    cooldown, no call of ``execute`` (that is the job of a
    :class:`~service_client.dispatcher.CommandDispatcher`).

    May be called from any thread; the command files' own code runs in the
    calling thread, with no library lock held. Concurrent loads into one
    mapping are not ordered with each other.

    Args:
        directory: Path of the command directory (relative paths are taken
            from the current working directory).
        commands: The mapping to add to, keyed by command name (the client's
            ``commands`` Collection); it is changed in place.

    Returns:
        ``commands`` itself (the same object), with the loaded commands added.

    Raises:
        TypeError: ``directory`` is not a str or an :class:`os.PathLike` of str,
            or ``commands`` is not a mutable mapping.
        ValueError: ``directory`` is an empty string.
        FileNotFoundError: ``directory`` does not exist.
        NotADirectoryError: ``directory`` exists but is not a directory.
        OSError: The directory cannot be listed (for example PermissionError).
    """
    if not isinstance(directory, (str, os.PathLike)):
        raise TypeError(
            f"directory must be a str or os.PathLike, not {type(directory).__name__}"
        )
    given = os.fspath(directory)
    if not isinstance(given, str):
        raise TypeError(f"directory must be a str path, not {type(given).__name__}")
    if not given:
        raise ValueError("directory must not be empty")
    path = os.path.abspath(given)
    if not isinstance(commands, MutableMapping):
        raise TypeError(
            f"commands must be a mutable mapping, not {type(commands).__name__}"
        )
    if not os.path.exists(path):
        raise FileNotFoundError(errno.ENOENT, "command directory not found", given)
    if not os.path.isdir(path):
        raise NotADirectoryError(
            errno.ENOTDIR, "command directory is not a directory", given
        )

    with os.scandir(path) as entries:
        files = sorted(
            entry.path
            for entry in entries
            if entry.name.endswith(".py")
            and not entry.name.startswith("_")
            and entry.is_file()
        )

    for file_path in files:
        command = _load_file(file_path)
        if command is None:
            continue
        if command.name in commands:
            _warn(
                f"Command file {file_path}: command name {command.name!r} was already "
                "loaded; this file's command replaces the earlier one",
                file_path,
            )
        commands[command.name] = command
        _log.debug("loaded command %r from %s", command.name, file_path)
    return commands


def _module_name(file_path: str) -> str:
    real = os.path.normcase(os.path.realpath(file_path))
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    stem = _NOT_IDENTIFIER.sub("_", os.path.basename(file_path)[: -len(".py")])
    return f"{MODULE_PREFIX}._{digest}_{stem}"


def _ensure_parent_package() -> None:
    if MODULE_PREFIX not in sys.modules:
        parent = types.ModuleType(
            MODULE_PREFIX, "Placeholder parent of the modules loaded by load_commands."
        )
        parent.__path__ = []
        sys.modules.setdefault(MODULE_PREFIX, parent)


def _load_file(file_path: str) -> Command | None:
    """Import one command file and return its command, or warn and return None."""
    name = _module_name(file_path)
    spec = importlib.util.spec_from_file_location(name, file_path)
    if spec is None or spec.loader is None:
        _skip(file_path, "no import loader for this file")
        return None
    module = importlib.util.module_from_spec(spec)
    _ensure_parent_package()
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - any failing file is skipped
        if sys.modules.get(name) is module:
            del sys.modules[name]
        _skip(
            file_path,
            f"import failed: {type(exc).__name__}: {exc}",
            lineno=_error_line(exc, file_path),
        )
        return None

    command = _command_of(module, file_path)
    if command is None and sys.modules.get(name) is module:
        del sys.modules[name]  # nothing of it is used: do not keep it
    return command


def _command_of(module: types.ModuleType, file_path: str) -> Command | None:
    """The command an imported file defines, or warn and return None."""
    if hasattr(module, "command"):
        source: object = module.command
        what = "its 'command' attribute"
    elif hasattr(module, "name") and hasattr(module, "execute"):
        source = module
        what = "its module-level 'name' and 'execute'"
    else:
        _skip(
            file_path,
            "no command: define a 'command' attribute, "
            "or 'name' and 'execute' at module level",
        )
        return None
    try:
        return _to_command(source)
    except Exception as exc:  # noqa: BLE001 - user objects may raise anything
        _skip(file_path, f"{what} is not a valid command: {exc}")
        return None


def _error_line(exc: BaseException, file_path: str) -> int:
    """The line of ``file_path`` where ``exc`` arose, else 1."""
    if isinstance(exc, SyntaxError) and exc.lineno and exc.filename == file_path:
        return exc.lineno
    line = 1
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == file_path and tb.tb_lineno:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _skip(file_path: str, reason: str, *, lineno: int = 1) -> None:
    _warn(f"Skipped command file {file_path}: {reason}", file_path, lineno=lineno)


def _warn(text: str, file_path: str, *, lineno: int = 1) -> None:
    # Attributed to the command file itself, with a fresh registry so that the
    # same problem is reported again on every load (never deduplicated).
    warnings.warn_explicit(
        CommandLoadWarning(text),
        CommandLoadWarning,
        file_path,
        lineno,
        registry={},
    )
