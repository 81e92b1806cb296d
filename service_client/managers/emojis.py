"""The old home of :class:`EmojiManager`, now :mod:`service_client.models.emoji` beside :class:`Emoji`.

Kept for one release; import from the new place.
"""

from __future__ import annotations

from ..models.emoji import EMOJI_NAME_RE, EmojiManager

__all__ = ["EMOJI_NAME_RE", "EmojiManager"]
