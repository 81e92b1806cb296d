"""``EmbedBuilder``: a fluent builder of the embed payload.

The payload's keys: ``title``, ``description``, ``url`` (str); ``timestamp``
(ISO-8601 str); ``color`` (int); ``footer`` (``{text, iconUrl?}``); ``image``
and ``thumbnail`` (``{url}``); ``author`` (``{name, url?, iconUrl?}``);
``fields`` (``[{name, value, inline?}]``). No size limit is known to be
enforced by the service, and the builder enforces none.
The messages guide (``docs/guides/messages.rst``) shows embeds in a send.
"""

from __future__ import annotations

import copy
import re
from datetime import datetime, timezone
from typing import Any

__all__ = ["EmbedBuilder", "parse_color"]

_HEX = re.compile(r"#?([0-9A-Fa-f]{6})")


def parse_color(value: int | str) -> int:
    """An embed colour as the int the wire payload carries.

    Args:
        value: An int in 0..0xFFFFFF, or ``"#rrggbb"`` (the ``#`` optional).

    Returns:
        The colour as an int.

    Raises:
        ValueError: An invalid hex string or an int out of range.
        TypeError: Any other type.
    """
    if isinstance(value, bool):
        raise TypeError("color must be an int or a '#rrggbb' string")
    if isinstance(value, int):
        if not 0 <= value <= 0xFFFFFF:
            raise ValueError(f"color must be in 0..0xFFFFFF, got {value}")
        return value
    if isinstance(value, str):
        match = _HEX.fullmatch(value.strip())
        if match is None:
            raise ValueError(f"color must be '#rrggbb', got {value!r}")
        return int(match.group(1), 16)
    raise TypeError(f"color must be an int or a '#rrggbb' string, got {type(value).__name__}")


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    return value


def _opt_text(value: Any, name: str) -> str | None:
    return None if value is None else _text(value, name)


class EmbedBuilder:
    """Builds one embed; every setter returns ``self``, so calls chain.

    ``to_dict()`` gives the wire payload (keys listed in this module's
    docstring) with only the keys
    that were set. Setting a value to None removes the key. Not thread-safe
    (build it in one thread, then send it).

    Example::

        embed = EmbedBuilder().set_title("Status").set_color("#3366ff").add_field("Up", "yes")
        channel.send(embed)
    """

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any] | None = None) -> None:
        """Start empty, or from an existing embed payload (deep-copied).

        Raises:
            TypeError: ``data`` is not a dict.
        """
        if data is not None and not isinstance(data, dict):
            raise TypeError(f"data must be a dict, got {type(data).__name__}")
        self._data: dict[str, Any] = copy.deepcopy(data) if data else {}

    def _set(self, key: str, value: Any) -> EmbedBuilder:
        if value is None:
            self._data.pop(key, None)
        else:
            self._data[key] = value
        return self

    def set_title(self, title: str | None) -> EmbedBuilder:
        """Set the title (None removes it). Raises TypeError for a non-str."""
        return self._set("title", _opt_text(title, "title"))

    def set_description(self, description: str | None) -> EmbedBuilder:
        """Set the description (None removes it). Raises TypeError for a non-str."""
        return self._set("description", _opt_text(description, "description"))

    def set_url(self, url: str | None) -> EmbedBuilder:
        """Set the title link (None removes it). Raises TypeError for a non-str."""
        return self._set("url", _opt_text(url, "url"))

    def set_color(self, color: int | str | None) -> EmbedBuilder:
        """Set the colour from an int or ``"#rrggbb"`` (None removes it).

        Raises:
            ValueError: An invalid hex string or an out-of-range int.
            TypeError: Another type.
        """
        return self._set("color", None if color is None else parse_color(color))

    set_colour = set_color

    def set_timestamp(self, timestamp: datetime | str | int | float | None = None) -> EmbedBuilder:
        """Set the timestamp (sent as an ISO-8601 string); no argument means now.

        Args:
            timestamp: A datetime (naive ones are taken as UTC), an ISO string
                (sent as is), epoch milliseconds, or None for now.

        Raises:
            TypeError: Another type.
        """
        if timestamp is None:
            moment = datetime.now(timezone.utc)
        elif isinstance(timestamp, datetime):
            moment = timestamp if timestamp.tzinfo else timestamp.replace(tzinfo=timezone.utc)
        elif isinstance(timestamp, str):
            return self._set("timestamp", timestamp)
        elif isinstance(timestamp, (int, float)) and not isinstance(timestamp, bool):
            moment = datetime.fromtimestamp(timestamp / 1000.0, tz=timezone.utc)
        else:
            raise TypeError("timestamp must be a datetime, ISO string or epoch ms")
        text = moment.astimezone(timezone.utc).isoformat(timespec="milliseconds")
        return self._set("timestamp", text.replace("+00:00", "Z"))

    def set_footer(self, text: str | None, *, icon_url: str | None = None) -> EmbedBuilder:
        """Set the footer ``{text, iconUrl?}`` (``text`` None removes it)."""
        if text is None:
            return self._set("footer", None)
        footer: dict[str, Any] = {"text": _text(text, "text")}
        if icon_url is not None:
            footer["iconUrl"] = _text(icon_url, "icon_url")
        return self._set("footer", footer)

    def set_image(self, url: str | None) -> EmbedBuilder:
        """Set the image ``{url}`` (None removes it)."""
        return self._set("image", None if url is None else {"url": _text(url, "url")})

    def set_thumbnail(self, url: str | None) -> EmbedBuilder:
        """Set the thumbnail ``{url}`` (None removes it)."""
        return self._set("thumbnail", None if url is None else {"url": _text(url, "url")})

    def set_author(
        self, name: str | None, *, url: str | None = None, icon_url: str | None = None
    ) -> EmbedBuilder:
        """Set the author ``{name, url?, iconUrl?}`` (``name`` None removes it)."""
        if name is None:
            return self._set("author", None)
        author: dict[str, Any] = {"name": _text(name, "name")}
        if url is not None:
            author["url"] = _text(url, "url")
        if icon_url is not None:
            author["iconUrl"] = _text(icon_url, "icon_url")
        return self._set("author", author)

    def add_field(self, name: str, value: str, *, inline: bool = False) -> EmbedBuilder:
        """Append a field ``{name, value, inline}``.

        Raises:
            TypeError: ``name``/``value`` not str or ``inline`` not bool.
        """
        if not isinstance(inline, bool):
            raise TypeError("inline must be a bool")
        field = {"name": _text(name, "name"), "value": _text(value, "value"), "inline": inline}
        self._data.setdefault("fields", []).append(field)
        return self

    def clear_fields(self) -> EmbedBuilder:
        """Remove every field."""
        self._data.pop("fields", None)
        return self

    def to_dict(self) -> dict[str, Any]:
        """The wire payload (a deep copy; later setter calls do not change it)."""
        return copy.deepcopy(self._data)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EmbedBuilder):
            return NotImplemented
        return self._data == other._data

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<EmbedBuilder title={self._data.get('title')!r} fields={len(self._data.get('fields', ()))}>"
