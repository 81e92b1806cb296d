"""Reading socket event payloads: the wire keys, and the checks that reject a malformed payload."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models._base import read_id

__all__ = ["MalformedPayload"]

# Wire keys: the publicId spellings and the id/serverId/channelId fallbacks are accepted.
_SERVER_KEYS = ("serverPublicId", "serverId")
_CHANNEL_KEYS = ("channelPublicId", "channelId")
_USER_KEYS = ("userPublicId", "userId")
_MESSAGE_KEYS = ("messagePublicId", "messageId")


class MalformedPayload(ValueError):
    """A payload that does not have the shape its event requires."""


def _obj(value: Any, what: str = "payload") -> dict[str, Any]:
    if not isinstance(value, dict):
        raise MalformedPayload(f"{what} must be an object, got {type(value).__name__}")
    return value


def _need_id(data: Mapping[str, Any], keys: tuple[str, ...], what: str) -> str:
    value = read_id(data, *keys)
    if value is None:
        raise MalformedPayload(f"missing {what}")
    return value
