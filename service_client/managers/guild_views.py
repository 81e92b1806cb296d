"""The old home of ``guild.channels`` and ``guild.categories`` (:class:`GuildChannels`,
:class:`GuildCategories`), now :mod:`service_client.models.snapshots`.

Kept for one release; import from the new place.
"""

from __future__ import annotations

from ..models.snapshots import GuildCategories, GuildChannels

__all__ = ["GuildCategories", "GuildChannels"]
