"""The old home of :class:`CommandContext`, now :mod:`service_client.dispatcher.context`.

Kept for one release so that ``from service_client.command_context import CommandContext`` keeps working.
"""

from __future__ import annotations

from .dispatcher.context import CommandContext

__all__ = ["CommandContext"]
