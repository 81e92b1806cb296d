"""Per-user command cooldowns of a :class:`~service_client.CommandDispatcher`.

A command with ``cooldown=N`` runs at most once per N seconds for each user: the
dispatcher takes a turn here after the checks and the arguments passed, just
before the command runs, so a refused or mistyped invocation costs no turn.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ..commands import Command
from ..errors import CommandCooldownError
from .context import CommandContext
from .help import _seconds

__all__ = ["Cooldowns"]

#: Cooldown entries kept before expired ones are swept.
_SWEEP_AT = 1024


class Cooldowns:
    """When each (command, user) pair may run again; thread-safe.

    Args:
        clock: Monotonic seconds (tests inject a fake).
    """

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._lock = threading.Lock()  # guards _until
        self._until: dict[tuple[str, str], float] = {}

    def take(self, ctx: CommandContext, command: Command) -> None:
        """Take the author's turn of ``command`` (nothing to do without a cooldown).

        Raises:
            CommandCooldownError: The author's last turn was less than the cooldown ago;
                ``retry_after`` says how long is left.
        """
        if not command.cooldown:
            return
        author = ctx.message.author
        assert author is not None  # the dispatcher ignores messages without an author
        key = (command.name, author.id)
        now = self._clock()
        with self._lock:
            until = self._until.get(key)
            if until is not None and until > now:
                wait = until - now
            else:
                if len(self._until) >= _SWEEP_AT:
                    for stale in [k for k, t in self._until.items() if t <= now]:
                        del self._until[stale]
                self._until[key] = now + command.cooldown
                return
        raise CommandCooldownError(
            f"{ctx.prefix}{ctx.invoked_with} is on cooldown: try again in {_seconds(wait)}.",
            retry_after=wait,
            command_name=command.name,
            context=ctx,
        )
