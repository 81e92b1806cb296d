"""Command files: :func:`load_commands` reads a directory of them into :class:`~service_client.Command` records.

A command directory holds one Python file per command. :func:`load_commands`
imports every ``*.py`` file of the directory (not of its subdirectories, and not
those whose name starts with ``_``), each as its own module, and adds the
command each one defines to a mapping indexed by command name. A command file
either sets a module attribute ``command``::

    from service_client import Command, has_role

    def execute(ctx):
        ctx.reply("Pong!")

    command = Command(name="ping", execute=execute, description="Answer Pong!")

(a :class:`~service_client.Command`, a mapping with ``name`` and ``execute`` keys, or any object
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
import os
import re
import sys
import types
import warnings
from collections.abc import MutableMapping
from typing import TypeVar

from ..errors import CommandLoadWarning
from .record import Command, _to_command

__all__ = ["MODULE_PREFIX", "load_commands"]

_log = logging.getLogger("service_client.commands")

#: Parent name of every module imported by :func:`load_commands`. A plain
#: placeholder package with this name is put in ``sys.modules`` so that the
#: loaded modules can be found again by name (``pickle``, ``typing``).
MODULE_PREFIX = "service_client_commands"

_NOT_IDENTIFIER = re.compile(r"\W")

_M = TypeVar("_M", bound=MutableMapping[str, Command])


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
    see :meth:`~service_client.Command.from_object`), else the module itself when it defines
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
