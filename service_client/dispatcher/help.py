"""The generated help of :class:`~service_client.dispatcher.CommandDispatcher`: usage lines and help text.

A part of the dispatcher kept in its own module: the usage line of a command,
read from the parameters of its ``execute``, and the text the built-in
``help`` command answers with.
"""

from __future__ import annotations

import math
from collections.abc import MutableMapping
from typing import TYPE_CHECKING

from ..commands import BucketType, Command
from .checks import _names, describe_check
from .parsing import CommandSignature

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client

#: The name of the built-in help command.
HELP = "help"


class _HelpMixin:
    """Usage lines and help text of a :class:`~service_client.dispatcher.CommandDispatcher`."""

    # Set by CommandDispatcher.__init__.
    client: Client
    commands: MutableMapping[str, Command]
    help_command: bool
    _prefixes: tuple[str, ...]

    @property
    def prefix(self) -> str:  # pragma: no cover - CommandDispatcher defines it
        """The first command prefix (declared here for the type checker)."""
        raise NotImplementedError

    def get(self, word: str) -> Command | None:  # pragma: no cover - CommandDispatcher defines it
        """The command named or aliased ``word``, or None (declared here for the type checker)."""
        raise NotImplementedError

    def _fold(self, word: str) -> str:  # pragma: no cover - CommandDispatcher defines it
        raise NotImplementedError

    def _signature(self, command: Command) -> CommandSignature:  # pragma: no cover - CommandDispatcher defines it
        raise NotImplementedError

    def usage(self, command: Command | str) -> str:
        """The usage line of a command, from the parameters of its ``execute`` after the context.

        ``<name>`` for a required word, ``[name]`` for an optional one
        (``Optional[X]`` or with a default), ``[name...]`` for ``*name``,
        ``<name...>`` (``[name...]`` with a default) for the rest of the line;
        a typed parameter adds its type, ``<count: integer>``, unless the name
        says it (``<member>`` for ``member: Member``), and choices show as
        ``<mode: on|off>``. E.g. ``"!kick <member> [reason...]"``. Just the
        command when ``execute`` cannot be introspected or cannot be called
        from a message.

        Args:
            command: A :class:`Command`, or the name or alias of a registered one
                (the prefix may be included: ``"warn"`` or ``"!warn"``).

        Returns:
            The usage line.

        Raises:
            TypeError: ``command`` is neither a :class:`Command` nor a str.
            LookupError: No registered command has that name or alias (the message
                lists the known ones).
        """
        if isinstance(command, str):
            word = self._strip_prefix(command)
            found = self.get(word)
            if found is None:
                known = ", ".join(sorted(c.name for c in self.commands.values() if isinstance(c, Command)))
                raise LookupError(f"no command {command!r}; known: {known or 'none'}")
            command = found
        elif not isinstance(command, Command):
            raise TypeError(f"command must be a Command or a command name, got {type(command).__name__}")
        try:
            tokens = self._signature(command).tokens
        except TypeError:  # a command that cannot run from a message: its name alone
            tokens = []
        return " ".join([self.prefix + command.name, *tokens])

    def help_text(self, name: str | None = None) -> str:
        """The text of the built-in help.

        Args:
            name: A command name or alias (the prefix may be included); None
                lists every command.

        Returns:
            Without ``name``: ``"Commands:"`` then one line per command sorted
            by name (usage, aliases, description, required permissions,
            checks, cooldown), hidden commands left out. With ``name``: the
            line of that one command, or an "Unknown command" line (for a
            hidden command too: the help does not tell it exists).
        """
        commands = sorted(
            (c for c in list(self.commands.values()) if isinstance(c, Command) and not c.hidden),
            key=lambda c: c.name,
        )
        if name is not None:
            word = self._strip_prefix(name)
            command = self.get(word)
            if command is None or command.hidden:
                if self.help_command and self._fold(word) == HELP:
                    return f"{self.prefix}{HELP} [command]: list the commands, or describe one."
                return f"Unknown command {self.prefix}{word}. Try {self.prefix}{HELP}."
            return self._help_line(command)
        lines = [self._help_line(c) for c in commands]
        if self.help_command and self.get(HELP) is None:
            lines.append(f"{self.prefix}{HELP} [command]: list the commands, or describe one.")
        return "Commands:\n" + "\n".join(lines) if lines else "No commands."

    def _strip_prefix(self, word: str) -> str:
        """``word`` without the dispatcher's prefixes (``"!warn"`` and ``"warn"`` both give ``"warn"``)."""
        for prefix in self._prefixes:
            word = word.removeprefix(prefix)
        return word

    def _help_line(self, command: Command) -> str:
        line = self.usage(command)
        if command.description:
            line += f": {command.description}"
        notes = []
        if command.aliases:
            notes.append("aliases " + ", ".join(self.prefix + a for a in command.aliases))
        if command.requires:
            notes.append(f"needs {_names(command.requires)}")
        notes += [text for text in (describe_check(check, self.client) for check in command.checks) if text]
        if command.cooldown:
            per = "" if command.cooldown_per is BucketType.USER else f" {PER_WORDS[command.cooldown_per]}"
            notes.append(f"cooldown {duration_text(command.cooldown)}{per}")
        if command.max_concurrency is not None:
            notes.append(f"at most {command.max_concurrency} at a time {PER_WORDS[command.concurrency_per]}")
        return line + (f" ({'; '.join(notes)})" if notes else "")


#: How the help and the refusals say who shares a limit.
PER_WORDS = {
    BucketType.DEFAULT: "for everyone",
    BucketType.USER: "per user",
    BucketType.MEMBER: "per member",
    BucketType.CHANNEL: "per channel",
    BucketType.SERVER: "per server",
}


def duration_text(seconds: float) -> str:
    """A duration in words for a person, never shorter than it is.

    Under 10 s with a tenth (``"9.8 s"``, at least ``"0.1 s"``); then whole seconds (``"42 s"``),
    minutes and seconds (``"12 min 5 s"``), hours and minutes (``"23 h 12 min"``), days and
    hours (``"2 d 3 h"``), each rounded up and leaving out a zero second part (``"1 h"``). A
    value that rounds up to the next unit is said in it (``9.95`` is ``"10 s"``, 23 h 59.5 min
    is ``"1 d"``).

    Args:
        seconds: The duration, seconds (> 0; a cooldown's wait).
    """
    tenths = max(1, math.ceil(seconds * 10 - 1e-9))
    if tenths < 100:
        return f"{tenths / 10:.1f} s"
    whole = math.ceil(seconds - 1e-9)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        minutes, rest = divmod(whole, 60)
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    in_minutes = math.ceil(whole / 60)
    if in_minutes < 24 * 60:
        hours, minutes = divmod(in_minutes, 60)
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(math.ceil(whole / 3600), 24)
    return f"{days} d {hours} h" if hours else f"{days} d"
