"""``AuditLogEntry``: one entry of a server's audit log."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ._base import Model, as_dict, parse_time, read_id, read_str
from ._port import StateLike, state_of
from .user import User

__all__ = ["AuditLogEntry"]


class AuditLogEntry(Model):
    """One recorded action of a server, from ``GET /servers/{sid}/audit-logs``.

    Wire keys: ``publicId`` (also ``id``), ``actionType`` (upper snake case,
    e.g. ``"MEMBER_BAN"``; also ``action``), ``targetType``, ``targetId``,
    ``details`` (an object), ``executor`` (``{publicId, name, tag, image}`` or
    null), ``createdAt``.

    Attributes:
        id: The entry's id.
        action: The action name, e.g. ``"ROLE_CREATE"`` ("" when missing).
        target_type: What was acted on (``"USER"``, ``"ROLE"``...), or None.
        target_id: The id of what was acted on, or None.
        details: Action-specific data (a new dict; ``{}`` when none).
        executor: The :class:`User` who acted, or None.
        server_id: The server.
    """

    __slots__ = ("id", "action", "target_type", "target_id", "executor", "server_id")

    id: str
    action: str
    target_type: str | None
    target_id: str | None
    executor: User | None
    server_id: str | None

    def __init__(self, state: StateLike, data: Mapping[str, Any], *, server_id: str | None = None,
                 executor: User | None = None) -> None:
        """Build from an audit log record.

        Args:
            state: The connection state of the client this model belongs to (the client
                itself is accepted too).
            data: The AuditEntry record.
            server_id: The server the log belongs to.
            executor: The acting user when already resolved (the cached one).

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record has no id.
        """
        data = as_dict(data, "audit log entry")
        ident = read_id(data, "publicId", "id")
        if ident is None:
            raise ValueError("audit log entry has no publicId")
        self._state = state_of(state)
        self.id = ident
        self.action = read_str(data, "actionType") or read_str(data, "action") or ""
        self.target_type = read_str(data, "targetType")
        self.target_id = read_id(data, "targetId")
        raw_executor = data.get("executor")
        if executor is None and isinstance(raw_executor, dict):
            try:
                executor = User(self._state, raw_executor)
            except ValueError:
                executor = None
        self.executor = executor
        self.server_id = read_id(data, "serverPublicId", "serverId") or server_id
        self._split(data)

    @property
    def details(self) -> dict[str, Any]:
        """The action's details (a new dict on each access; ``{}`` when none)."""
        value = self._extra_get("details")
        return dict(value) if isinstance(value, dict) else {}

    @property
    def created_at(self) -> datetime | None:
        """When the action happened (UTC), or None."""
        return parse_time(self._extra_get("createdAt"))

    _REPR = ("id", "action")
    _HTML = ("id", "action", "target_type", "target_id", "executor", "created_at")
