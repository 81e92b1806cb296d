"""Kick, ban and unban: socket emits the service acknowledges (``server:kick``, ``server:ban``,
``server:unban``), and the ``reason`` every moderation call takes.

Each carries its ``reason`` in its payload (``server:ban`` documents it; kick and unban carry
it the same way, and a service that has no use for it ignores the key). A REST change (a
member's roles) carries it in the ``X-Audit-Log-Reason`` header.

Shared by :class:`Guild` and :class:`Member`, which pass the
target as a user id. Arguments are checked here, before anything is sent; the ack is read
into :class:`GatewayError` codes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from .. import _defaults, endpoints
from .._validate import check_id
from ..errors import GatewayError, GatewayTimeoutError, ServiceTimeoutError

if TYPE_CHECKING:  # pragma: no cover
    from ._port import State

__all__ = ["AUDIT_REASON_HEADER", "DELETE_HISTORY", "ban", "check_reason", "kick",
           "reason_headers", "unban"]

#: The ``delete_history`` values ``ban`` accepts: how far back the banned user's
#: messages in the server are deleted (``"none"`` keeps them).
DELETE_HISTORY = ("none", "1d", "7d", "14d", "30d")
#: The header a REST change (member roles) carries its reason in.
AUDIT_REASON_HEADER = "X-Audit-Log-Reason"

KICK = endpoints.EMIT_SERVER_KICK
BAN = endpoints.EMIT_SERVER_BAN
UNBAN = endpoints.EMIT_SERVER_UNBAN


def _server_id(server_id: Any) -> str:
    return check_id(server_id, "server_id")


def _acked(state: State, event: str, payload: dict[str, Any]) -> None:
    """Emit ``event`` with ``payload``, wait (10 s at most) for the ack and read it.

    Raises:
        ServiceAuthError: The socket is not connected (nothing is sent).
        GatewayError: The ack carries ``{"error": key}``; ``code`` is the key.
        GatewayTimeoutError: No ack within 10 s (``code`` ``"TIMEOUT"``).
        ServiceError: The socket dropped or the client was destroyed before the ack came.
    """
    try:
        args = state.call(event, payload, timeout=_defaults.ACK_TIMEOUT_S)
    except ServiceTimeoutError as exc:
        raise GatewayTimeoutError(event=event, timeout=_defaults.ACK_TIMEOUT_S) from exc
    answer = args[0] if args else None
    if isinstance(answer, dict):
        error = answer.get("error")
        if error is not None:
            raise GatewayError(error if isinstance(error, str) and error else repr(error), event=event)


def check_reason(reason: Any) -> str | None:
    """``reason`` when it is None or a str with text; the one check of every ``reason=``.

    Raises:
        TypeError: ``reason`` is neither a str nor None.
        ValueError: ``reason`` is empty or only whitespace. (Its length is the service's to
            judge: the emulator refuses more than 512 characters.)
    """
    if reason is None:
        return None
    if not isinstance(reason, str):
        raise TypeError(f"reason must be a str or None, got {type(reason).__name__}")
    if not reason.strip():
        raise ValueError("reason must not be empty or only whitespace (pass None for no reason)")
    return reason


def reason_headers(reason: str | None) -> dict[str, str] | None:
    """The header a REST change carries its ``reason`` in (``X-Audit-Log-Reason``, the text
    percent-encoded as UTF-8), or None without a reason. Checked as :func:`check_reason`."""
    checked = check_reason(reason)
    return None if checked is None else {AUDIT_REASON_HEADER: quote(checked, safe=" ")}


def _payload(server_id: Any, user_id: Any, reason: str | None) -> dict[str, Any]:
    payload: dict[str, Any] = {"serverPublicId": _server_id(server_id), "userPublicId": check_id(user_id, "user")}
    checked = check_reason(reason)
    if checked is not None:
        payload["reason"] = checked
    return payload


def kick(state: State, server_id: str, user_id: str, *, reason: str | None = None) -> None:
    """Kick ``user`` out of server ``server_id``; see :meth:`Guild.kick <Guild.kick>`."""
    _acked(state, KICK, _payload(server_id, user_id, reason))


def ban(state: State, server_id: str, user_id: str, *, reason: str | None = None,
        delete_history: str | None = None) -> None:
    """Ban ``user`` from server ``server_id``; see :meth:`Guild.ban <Guild.ban>`."""
    payload = _payload(server_id, user_id, reason)
    if delete_history is not None:
        if not isinstance(delete_history, str):
            raise TypeError(
                f"delete_history must be one of {', '.join(map(repr, DELETE_HISTORY))} or None, "
                f"got {type(delete_history).__name__}"
            )
        if delete_history not in DELETE_HISTORY:
            raise ValueError(
                f"delete_history must be one of {', '.join(map(repr, DELETE_HISTORY))} or None, "
                f"got {delete_history!r}"
            )
        payload["deleteHistory"] = delete_history
    _acked(state, BAN, payload)


def unban(state: State, server_id: str, user_id: str, *, reason: str | None = None) -> None:
    """Lift the ban of ``user`` in server ``server_id``; see :meth:`Guild.unban <Guild.unban>`."""
    _acked(state, UNBAN, _payload(server_id, user_id, reason))
