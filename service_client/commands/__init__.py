"""What a command is: the :class:`Command` record, its :class:`Check` conditions, and command files.

This package describes commands and runs none of them; it sits low in the
layers so that :meth:`Client.load_commands <service_client.Client.load_commands>`
can fill ``client.commands`` with its records. :mod:`service_client.dispatcher`,
higher up, runs those records from chat messages (a
:class:`~service_client.CommandDispatcher` reads ``client.commands``) and holds
the built-in checks that read a message (:func:`~service_client.has_role`, ...).

- :mod:`.record`: :class:`Command` and :class:`Check`;
- :mod:`.files`: :func:`load_commands`, a directory of command files into records;
- :mod:`.cog`: :class:`Cog`, a class grouping commands, listeners and repeating tasks (added to a
  client by :mod:`service_client.dispatcher.extensions`).
"""

from __future__ import annotations

from .cog import Cog, CogTask
from .files import load_commands
from .record import BucketType, Check, Command

__all__ = ["BucketType", "Check", "Cog", "CogTask", "Command", "load_commands"]
