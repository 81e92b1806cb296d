"""Commands run from chat messages: the :class:`CommandDispatcher` and its :class:`CommandContext`.

- :mod:`.core`: :class:`CommandDispatcher`: prefixes, lookup, checks, cooldowns, errors;
- :mod:`.context`: :class:`CommandContext`, what a command receives;
- :mod:`.parsing`: how the text after a command's name becomes its arguments;
- :mod:`.converters`: from text to the type a parameter is annotated with; :class:`Converter`;
- :mod:`.help`: usage lines and the help text.
"""

from __future__ import annotations

from .context import CommandContext
from .converters import Converter
from .core import CommandDispatcher

__all__ = ["CommandContext", "CommandDispatcher", "Converter"]
