"""What the client sends: the ``message:send`` payload of a send, from its many argument forms.

Pure: no I/O. :func:`build_message_payload` checks every argument before anything is sent,
so a refused send loses nothing; :func:`check_message` is the check of the message rules
(the ``_message_rules`` module) every send, edit and webhook post makes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._message_rules import RULES, message_problem
from .._validate import check_id
from ..errors import EmptyMessageError
from .embed import EmbedBuilder

__all__ = ["build_message_payload", "check_message", "embed_payloads"]


def check_message(content: str, embeds: Sequence[Mapping[str, Any]], action: str) -> None:
    """Raise when a message breaks a rule of the message rules; nothing is sent then.

    Args:
        content: The text, as typed ("" for none).
        embeds: The embed payloads.
        action: The call, for the message (``"send_message"``, ``"edit"``, ``"execute"``).

    Raises:
        EmptyMessageError: ``content`` is empty and there is no embed:
            ``"<action> requires non-empty content or at least one embed."`` (a
            ``ServiceAuthError`` and a :class:`ValueError`).
        ValueError: ``"<action>: <rule> (<what is wrong>)"`` for any other rule, for example
            ``send_message: a message needs content that is not only whitespace, or at least
            one embed (the content '   ' is only whitespace and there is no embed)``; or content
            with a lone surrogate, which UTF-8 cannot encode (the index is named).
    """
    if not content and not embeds:
        raise EmptyMessageError(f"{action} requires non-empty content or at least one embed.")
    try:
        content.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate: no wire can carry it
        raise ValueError(f"{action}: content must be text that UTF-8 can encode "
                         f"(a lone surrogate at index {exc.start})") from None
    found = message_problem(content, embeds)
    if found is not None:
        key, detail = found
        raise ValueError(f"{action}: {RULES[key]} ({detail})")


def embed_payloads(embeds: Any) -> list[dict[str, Any]]:
    """The embed payloads of an ``embeds`` argument (None gives ``[]``).

    Raises:
        TypeError: ``embeds`` is not a sequence of :class:`EmbedBuilder` or mappings (a single
            embed, a str...), or one item is neither (the message names its index).
    """
    if embeds is None:
        return []
    if isinstance(embeds, (EmbedBuilder, Mapping, str, bytes)) or not isinstance(embeds, Sequence):
        raise TypeError(f"embeds must be a list of EmbedBuilder or mappings, got {type(embeds).__name__}")
    out: list[dict[str, Any]] = []
    for index, embed in enumerate(embeds):
        if isinstance(embed, EmbedBuilder):
            out.append(embed.to_dict())
        elif isinstance(embed, Mapping):
            out.append(dict(embed))
        else:
            raise TypeError(
                f"embeds[{index}] must be an EmbedBuilder or a mapping, got {type(embed).__name__}"
            )
    return out


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
        EmptyMessageError: No content and no embed: ``"send_message requires non-empty
            content or at least one embed."`` (a ServiceAuthError and a ValueError).
        ValueError: ``channel_id`` or ``nonce`` is empty; or the message breaks another rule
            of the message rules module, ``_message_rules`` (only whitespace and no embed;
            content over 4000 characters; more than 10 embeds; an embed over its limits):
            the text starts ``send_message:`` and names the rule.
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
    embed_list = embed_payloads(embeds)
    if reply_to_id is not None:
        check_id(reply_to_id, "reply_to_id")
    check_message(content, embed_list, "send_message")
    payload: dict[str, Any] = {"channelPublicId": channel_id, "content": content, "embeds": embed_list}
    if reply_to_id is not None:
        payload["replyToId"] = reply_to_id
    payload["nonce"] = nonce
    return payload
