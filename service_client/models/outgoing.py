"""What the client sends: the ``message:send`` payload of a send, from its many argument forms.

Pure: no I/O. :func:`build_message_payload` checks every argument before anything is sent,
so a refused send loses nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._validate import check_id
from ..errors import ServiceAuthError
from .embed import EmbedBuilder

__all__ = ["EMPTY_SEND", "build_message_payload"]

#: The error text of an empty send (no content and no embed).
EMPTY_SEND = "send_message requires non-empty content or at least one embed."


def _embed_payload(embed: Any, index: int) -> dict[str, Any]:
    if isinstance(embed, EmbedBuilder):
        return embed.to_dict()
    if isinstance(embed, Mapping):
        return dict(embed)
    raise TypeError(
        f"embeds[{index}] must be an EmbedBuilder or a mapping, got {type(embed).__name__}"
    )


def build_message_payload(
    channel_id: str,
    options: str | EmbedBuilder | Mapping[str, Any] | None = None,
    *,
    content: str | None = None,
    embeds: Sequence[EmbedBuilder | Mapping[str, Any]] | None = None,
    reply_to_id: str | None = None,
    nonce: str,
) -> dict[str, Any]:
    """The ``message:send`` socket payload of a ``send_message`` call.

    ``options`` may be a str (content), an
    :class:`EmbedBuilder` (one embed), or a mapping with ``content``,
    ``embeds``, ``replyToId``/``reply_to_id``; keywords given explicitly win
    over the mapping's keys.

    Args:
        channel_id: The channel's public id.
        options: As above, or None.
        content: The text.
        embeds: EmbedBuilders or plain embed mappings (sent unchanged).
        reply_to_id: The message replied to (omitted when None).
        nonce: The fresh nonce (uuid4 hex).

    Returns:
        ``{"channelPublicId", "content", "embeds", "nonce"}`` plus
        ``"replyToId"`` when given.

    Raises:
        TypeError: An argument of the wrong type (the message names it).
        ValueError: ``channel_id`` or ``nonce`` is empty.
        ServiceAuthError: "send_message requires non-empty content or at
            least one embed." when there is neither.
    """
    check_id(channel_id, "channel_id")
    check_id(nonce, "nonce")
    opt_content: Any = None
    opt_embeds: Any = None
    opt_reply: Any = None
    if options is None:
        pass
    elif isinstance(options, str):
        opt_content = options
    elif isinstance(options, EmbedBuilder):
        opt_embeds = [options]
    elif isinstance(options, Mapping):
        opt_content = options.get("content")
        opt_embeds = options.get("embeds")
        opt_reply = options.get("replyToId", options.get("reply_to_id"))
    else:
        raise TypeError(
            f"options must be a str, an EmbedBuilder or a mapping, got {type(options).__name__}"
        )
    if content is None:
        content = opt_content
    if embeds is None:
        embeds = opt_embeds
    if reply_to_id is None:
        reply_to_id = opt_reply
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise TypeError(f"content must be a str, got {type(content).__name__}")
    if embeds is None:
        embeds = []
    if isinstance(embeds, (EmbedBuilder, Mapping, str, bytes)) or not isinstance(embeds, Sequence):
        raise TypeError(f"embeds must be a list of EmbedBuilder or mappings, got {type(embeds).__name__}")
    embed_list = [_embed_payload(e, i) for i, e in enumerate(embeds)]
    if reply_to_id is not None:
        check_id(reply_to_id, "reply_to_id")
    if not content and not embed_list:
        raise ServiceAuthError(EMPTY_SEND)
    payload: dict[str, Any] = {"channelPublicId": channel_id, "content": content, "embeds": embed_list}
    if reply_to_id is not None:
        payload["replyToId"] = reply_to_id
    payload["nonce"] = nonce
    return payload
