"""Client operations the :class:`Client` delegates to.

``create_dm``, ``fetch_invite``, ``search_messages`` and the ``message:send``
payload builder of ``send_message``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from ..errors import ServiceAuthError
from ..models.dm_channel import DMChannel
from ..models.embed import EmbedBuilder
from ..models.invite import Invite
from ..models.message import Message
from .base import check_id, route

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client

__all__ = ["build_message_payload", "create_dm", "fetch_invite", "invite_code", "search_messages"]

#: The error text of an empty send (no content and no embed).
EMPTY_SEND = "send_message requires non-empty content or at least one embed."


def create_dm(client: Client, user_id: str) -> DMChannel:
    """Open (or get) the DM with a user: ``GET /channels/dm/{user_id}``.

    The recipient is upserted into ``client.users`` and the DM into
    ``client.channels.cache``.

    Args:
        client: The client.
        user_id: The other user's public id.

    Returns:
        The :class:`DMChannel` (type ``"DM"``, ``server_id`` None).

    Raises:
        TypeError, ValueError: ``user_id`` is not a non-empty str (before any request).
        ServiceAPIError: 404 unknown user, 403 refused.
    """
    check_id(user_id, "user_id")
    data = client._request(route("GET", "/channels/dm/{user_id}", user_id=user_id))
    if isinstance(data, dict) and isinstance(data.get("channel"), dict):
        data = data["channel"]
    if not isinstance(data, dict):
        raise TypeError(f"DM record must be a JSON object, got {type(data).__name__}")
    recipient_data = data.get("recipient")
    recipient = client.users._upsert(recipient_data) if isinstance(recipient_data, dict) else None
    channel = DMChannel(client, data, recipient=recipient)
    client.channels.cache[channel.id] = channel
    return channel


def invite_code(code_or_link: str) -> str:
    """The invite code of a code or a link whose path ends in ``/invite/CODE``.

    Raises:
        TypeError: Not a str.
        ValueError: Empty, or a link without ``/invite/<code>``.
    """
    if not isinstance(code_or_link, str):
        raise TypeError(f"code must be a str, got {type(code_or_link).__name__}")
    text = code_or_link.strip()
    if not text:
        raise ValueError("code must not be empty")
    if "/" not in text:
        return text
    path = urlsplit(text).path if "://" in text else text.split("?", 1)[0].split("#", 1)[0]
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[-2] == "invite":
        return unquote(parts[-1])
    raise ValueError(f"code must be an invite code or a link ending in /invite/<code>, got {code_or_link!r}")


def fetch_invite(client: Client, code_or_link: str) -> Invite:
    """Resolve an invite read-only: ``GET /invites/{code}`` (a bot cannot accept invites).

    Args:
        client: The client.
        code_or_link: The code, or a full link ``{site_url}/invite/CODE``.

    Returns:
        The :class:`Invite` with its partial ``guild`` and ``uses``.

    Raises:
        TypeError, ValueError: Not a code or invite link (before any request).
        ServiceAPIError: 404 unknown or expired code.
    """
    code = invite_code(code_or_link)
    data = client._request(route("GET", "/invites/{code}", code=code))
    if isinstance(data, dict) and isinstance(data.get("invite"), dict) and "code" not in data:
        data = data["invite"]
    return Invite(client, data)


def search_messages(
    client: Client,
    channel_id: str,
    query: str,
    *,
    limit: int | None = None,
    before: str | Message | None = None,
    after: str | Message | None = None,
) -> list[Message]:
    """Keyword search in one channel: ``GET /chat/{channel_id}/search?q=&limit=&before=&after=``.

    ``limit``, ``before`` and ``after`` are omitted from the query when None. Message authors
    are not added to ``client.users``.

    Args:
        client: The client.
        channel_id: The channel's public id.
        query: The search text (non-empty).
        limit: Most results wanted (>= 1), or None for the service default (25 on the
            emulator, which caps it at 100).
        before: Only messages posted before this message (a :class:`Message` or its id).
        after: Only messages posted after this message (a :class:`Message` or its id).

    Returns:
        The matching messages (content decoded), newest first as the service orders them;
        ``[]`` when none (also when ``before`` / ``after`` is not a message of this channel,
        on the emulator).

    Raises:
        TypeError, ValueError: Bad arguments (before any request).
        ServiceAPIError: 403/404 for an inaccessible channel.
    """
    check_id(channel_id, "channel_id")
    if not isinstance(query, str):
        raise TypeError(f"query must be a str, got {type(query).__name__}")
    if not query.strip():
        raise ValueError("query must not be empty")
    if limit is not None:
        if not isinstance(limit, int) or isinstance(limit, bool):
            raise TypeError(f"limit must be an int or None, got {type(limit).__name__}")
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
    params: dict[str, Any] = {"q": query}
    if limit is not None:
        params["limit"] = limit
    for name, bound in (("before", before), ("after", after)):
        if bound is not None:
            params[name] = check_id(bound.id if isinstance(bound, Message) else bound, name)
    data = client._request(route("GET", "/chat/{channel_id}/search", channel_id=channel_id), params=params)
    items = data.get("messages") if isinstance(data, dict) else data
    out: list[Message] = []
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict):
            try:
                out.append(Message(client, item))
            except ValueError:
                continue
    return out


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
