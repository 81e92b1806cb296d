"""Runs commands from chat messages: the :class:`CommandDispatcher`, its context and its checks.

:mod:`service_client.commands` says what a command is (the
:class:`~service_client.Command` record, its :class:`~service_client.Check`
conditions, command files) and runs nothing, low in the layers so that
``Client.load_commands`` can use it. This package, higher up, runs those
records: it reads ``client.commands`` (or another registry), matches each
message to a record and calls its ``execute``.

- :mod:`.core`: :class:`CommandDispatcher`: prefixes, registration, lookup, the order of a run;
- :mod:`.checks`: the built-in checks (:func:`has_role`, :func:`guild_only`, ...) and running them;
- :mod:`.cooldowns`: the per-user cooldowns;
- :mod:`.failures`: the errors of a failed run, and how they are replied and emitted;
- :mod:`.context`: :class:`CommandContext`, what a command receives;
- :mod:`.parsing`: how the text after a command's name becomes its arguments;
- :mod:`.converters`: from text to the type a parameter is annotated with; :class:`Converter`;
- :mod:`.help`: usage lines and the help text;
- :mod:`.extensions`: :class:`Extensions`, the cogs and extensions (``load_extension``) of a
  dispatcher, which the client's cog methods call.
"""

from __future__ import annotations

from .checks import check, dm_only, guild_only, has_any_role, has_permissions, has_role, in_channel
from .context import CommandContext
from .converters import Converter
from .core import CommandDispatcher
from .extensions import Extensions

__all__ = [
    "CommandContext",
    "CommandDispatcher",
    "Converter",
    "Extensions",
    "check",
    "dm_only",
    "guild_only",
    "has_any_role",
    "has_permissions",
    "has_role",
    "in_channel",
]
