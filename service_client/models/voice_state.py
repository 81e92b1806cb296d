"""``VoiceState``: one user's presence in a voice channel, as cached in ``client.voice_states``."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ._base import Model, as_dict, parse_time, read_id, read_int, read_str
from ._port import StateLike, state_of

if TYPE_CHECKING:  # pragma: no cover
    from .channel import Channel

__all__ = ["VoiceState"]

#: The wire keys a ``voice:user-state`` event may change (the keys a ``voice:state`` emit may send);
#: only these are merged into an existing state.
STATE_KEYS = (
    "muted",
    "deafened",
    "speaking",
    "isStreaming",
    "isCameraOn",
    "cameraStreamId",
    "screenStreamId",
    "cameraTrackId",
    "screenTrackId",
)


class VoiceState(Model):
    """A voice user record (as in the service's voice events) plus its channel.

    Wire keys: ``userPublicId`` -> ``user_id``, ``userName`` -> ``user_name``,
    ``userTag`` -> ``user_tag``, ``userImage`` -> ``user_image``,
    ``socketId`` -> ``socket_id``, ``muted``, ``deafened``, ``speaking``,
    ``joinedAt`` (epoch ms) -> ``joined_at_ms`` (and ``joined_at`` as a UTC
    datetime), ``isStreaming`` -> ``is_streaming``, ``isCameraOn`` ->
    ``is_camera_on``, ``cameraStreamId``, ``screenStreamId``,
    ``cameraTrackId``, ``screenTrackId`` in snake_case; the channel comes
    from the event envelope (``channelPublicId``).
    """

    __slots__ = (
        "user_id",
        "channel_id",
        "user_name",
        "user_tag",
        "user_image",
        "socket_id",
        "muted",
        "deafened",
        "speaking",
        "joined_at_ms",
        "is_streaming",
        "is_camera_on",
        "camera_stream_id",
        "screen_stream_id",
        "camera_track_id",
        "screen_track_id",
    )

    user_id: str
    channel_id: str | None
    user_name: str | None
    user_tag: str | None
    user_image: str | None
    socket_id: str | None
    muted: bool
    deafened: bool
    speaking: bool
    joined_at_ms: int | None
    is_streaming: bool
    is_camera_on: bool
    camera_stream_id: str | None
    screen_stream_id: str | None
    camera_track_id: str | None
    screen_track_id: str | None

    def __init__(
        self, state: StateLike, data: Mapping[str, Any], *, channel_id: str | None = None
    ) -> None:
        """Build from a voice user record.

        Args:
            state: The connection state of the client this model belongs to (the client
                itself is accepted too).
            data: The voice user record.
            channel_id: The channel from the event envelope (overrides the record).

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record has no ``userPublicId``.
        """
        self._state = state_of(state)
        self._parse(as_dict(data, "voice user"), channel_id)

    def _parse(self, data: dict[str, Any], channel_id: str | None) -> None:
        uid = read_id(data, "userPublicId", "userId", "publicId")
        if uid is None:
            raise ValueError("voice user record has no userPublicId")
        self.user_id = uid
        self.channel_id = channel_id or read_id(data, "channelPublicId", "channelId")
        self.user_name = read_str(data, "userName")
        self.user_tag = read_str(data, "userTag")
        self.user_image = read_str(data, "userImage")
        self.socket_id = read_str(data, "socketId")
        self.muted = data.get("muted") is True
        self.deafened = data.get("deafened") is True
        self.speaking = data.get("speaking") is True
        joined = data.get("joinedAt")
        self.joined_at_ms = read_int(data, "joinedAt") if joined is not None else None
        self.is_streaming = data.get("isStreaming") is True
        self.is_camera_on = data.get("isCameraOn") is True
        self.camera_stream_id = read_str(data, "cameraStreamId")
        self.screen_stream_id = read_str(data, "screenStreamId")
        self.camera_track_id = read_str(data, "cameraTrackId")
        self.screen_track_id = read_str(data, "screenTrackId")
        self._split(data)

    def _merge(self, patch: Mapping[str, Any]) -> None:
        """Merge the fields of a ``voice:user-state`` into this entry."""
        merged = dict(self.raw)
        for key in STATE_KEYS:
            if key in patch:
                merged[key] = patch[key]
        self._parse(merged, self.channel_id)

    @property
    def id(self) -> str:
        """Alias of :attr:`user_id` (the cache key)."""
        return self.user_id

    @property
    def joined_at(self) -> datetime | None:
        """When the user joined the channel (UTC), or None."""
        return parse_time(self.joined_at_ms)

    @property
    def channel(self) -> Channel | None:
        """The cached voice channel, or None."""
        if self.channel_id is None:
            return None
        return self._state.channels.cache.get(self.channel_id)

    _REPR = ("user_id", "user_name", "channel_id", "muted", "deafened")
    _HTML = ("user_id", "user_name", "channel_id", "muted", "deafened", "speaking", "joined_at")
