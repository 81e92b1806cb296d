"""Commands run from chat messages: the :class:`CommandDispatcher` and its :class:`CommandContext`.

- :mod:`.core`: :class:`CommandDispatcher`: prefixes, parsing, checks, cooldowns, errors;
- :mod:`.context`: :class:`CommandContext`, what a command receives;
- :mod:`.help`: usage lines and the help text.
"""

from __future__ import annotations

from .context import CommandContext
from .core import CommandDispatcher

__all__ = ["CommandContext", "CommandDispatcher"]
