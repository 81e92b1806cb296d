"""``DMChannel``: a direct-message channel, as opened by ``client.create_dm`` (``GET /channels/dm/{userId}``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import as_dict
from ._port import StateLike
from .channel import Channel
from .user import User

__all__ = ["DMChannel"]


class DMChannel(Channel):
    """A DM with one user (``GET /channels/dm/{userId}``, ``dm:new``).

    The type is forced to ``"DM"`` and ``server_id`` is None; ``name`` is the
    recipient's name, else ``"DM"``. :meth:`send` works as on any channel.

    Attributes:
        recipient: The other user (a :class:`User`), or None when the record
            has none.
    """

    __slots__ = ("recipient",)

    _HTML = ("id", "name", "type", "recipient")

    recipient: User | None

    def __init__(
        self, state: StateLike, data: Mapping[str, Any], *, recipient: User | None = None
    ) -> None:
        """Build from a DM record.

        Args:
            state: The connection state of the client this model belongs to (the client
                itself is accepted too).
            data: The DM record ``{publicId, type, recipient}``.
            recipient: The recipient when already resolved (e.g. the cached user).

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record has no id.
        """
        data = as_dict(data, "dm channel")
        super().__init__(state, data)
        if recipient is None:
            rec = data.get("recipient")
            recipient = User(self._state, rec) if isinstance(rec, dict) else None
        self.recipient = recipient
        self.type = "DM"
        self.server_id = None
        if not self.name:
            self.name = recipient.username if recipient is not None and recipient.username else "DM"
        self._split(data)  # type, server id and name were changed after Channel parsed them

    def _rebuilt(self, record: dict[str, Any]) -> DMChannel:
        """A new DM channel from ``record``, keeping the recipient."""
        return DMChannel(self._state, record, recipient=self.recipient)
