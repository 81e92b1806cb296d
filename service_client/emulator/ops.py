"""State changes with their socket fan-out, shared by the REST routes and the control plane.

Every change sends the events the service sends for it, to the rooms it sends them to (the
author's own sockets included). Every method is a coroutine that must run on the emulator's
event loop; ``Emulator`` (``emulator.py``) wraps them for other threads.

Layout: ``ops_checks.py`` (field limits and validators), then the layers of
:class:`Operations`: ``ops_members.py`` (users, servers, members, moderation),
``ops_content.py`` (roles, channels, messages, invites) and ``ops_extras.py`` (emojis,
webhooks, notification settings, overwrites, categories, raw emits).
"""

from __future__ import annotations

from .ops_checks import MAX_NAME_CHARS, Conflict
from .ops_extras import ExtraOps

__all__ = ["MAX_NAME_CHARS", "Conflict", "Operations"]


class Operations(ExtraOps):
    """Mutations of the emulator's state plus the socket events they cause.

    Not thread-safe: call on the emulator's loop.
    """
