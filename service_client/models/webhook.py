"""``Webhook``: a channel webhook and its execution."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import endpoints
from .._defaults import MISSING
from .._secret import REDACTED_WEBHOOK_TOKEN, Secret
from .._validate import check_id
from ..rest.route import Route
from ._base import Model, as_dict, read_id, read_str
from ._port import StateLike, state_of
from .embed import EmbedBuilder
from .outgoing import check_message, embed_payloads

if TYPE_CHECKING:  # pragma: no cover
    from .channel import Channel

__all__ = ["Webhook"]

#: Longest webhook name and per-message ``username`` the client sends, characters.
MAX_WEBHOOK_NAME = 80


class Webhook(Model):
    """A webhook of a server channel: anyone holding its token may post there.

    Wire keys: ``publicId`` (also ``id``), ``name``, ``avatarUrl`` (also
    ``avatar``), ``channelPublicId`` (also ``channelId``), ``serverPublicId``
    and ``token`` (present only in the answer that created the webhook).

    The token is a secret like the bot token: it is held in :attr:`token` (a
    ``Secret``), never in :attr:`raw`, and it
    shows as ``***`` wherever it would appear: its repr, request paths, errors,
    logs and the emulator's request journal. A Webhook with a token refuses to
    be pickled.

    Building a Webhook tells the client that its id is a webhook: messages it
    posts then keep their own author (never cached in ``client.users``), even
    from a service that does not mark webhook messages.

    Attributes:
        id: The webhook's public id (also the id of its messages' author).
        name: Its name.
        avatar_url: Its avatar URL, or None.
        channel_id: The channel it posts to, or None when unknown.
        server_id: The server of that channel, or None when unknown.
    """

    __slots__ = ("id", "name", "avatar_url", "channel_id", "server_id", "_token")

    _REPR = ("id", "name", "channel_id")
    _HTML = ("id", "name", "channel_id", "server_id", "avatar_url")

    _WIRE = (
        ("publicId", "id"),
        ("name", "name"),
        ("avatarUrl", "avatar_url"),
        ("channelPublicId", "channel_id"),
        ("serverPublicId", "server_id"),
    )

    id: str
    name: str
    avatar_url: str | None
    channel_id: str | None
    server_id: str | None
    _token: Secret | None

    def __init__(self, state: StateLike, data: Mapping[str, Any], *, channel_id: str | None = None) -> None:
        """Build from a webhook record; a ``token`` key is moved into :attr:`token`.

        Args:
            state: The connection state of the client this model belongs to (the client
                itself is accepted too).
            data: The webhook record.
            channel_id: The channel, when the record does not carry it.

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record has no id.
        """
        data = dict(as_dict(data, "webhook"))
        token = data.pop("token", None)
        self._state = state_of(state)
        self._token = Secret(token, shown=REDACTED_WEBHOOK_TOKEN) if isinstance(token, str) and token else None
        self._parse(data, channel_id)
        self._state.note_webhook(self.id)

    def _parse(self, data: dict[str, Any], channel_id: str | None = None) -> None:
        ident = read_id(data, "publicId", "id", "webhookPublicId")
        if ident is None:
            raise ValueError("webhook record has no publicId")
        self.id = ident
        self.name = read_str(data, "name") or ""
        avatar = data.get("avatarUrl", data.get("avatar"))
        self.avatar_url = avatar if isinstance(avatar, str) else None
        self.channel_id = read_id(data, "channelPublicId", "channelId") or channel_id
        self.server_id = read_id(data, "serverPublicId", "serverId")
        self._split(data)

    @classmethod
    def from_token(cls, state: StateLike, webhook_id: str, token: str, *, channel_id: str | None = None) -> Webhook:
        """A webhook known only by its id and token (say, read from a bot's settings), ready to :meth:`execute`.

        No request is made. Its ``name`` is ``""`` until fetched through
        :meth:`Channel.webhooks`.

        Args:
            client: The client whose REST session sends the executions (it
                need not be logged in: execution sends no ``Authorization``).
            webhook_id: The webhook's public id.
            token: The webhook's token (kept as a secret).
            channel_id: The webhook's channel, when known.

        Raises:
            TypeError: An id or the token is not a str.
            ValueError: An id or the token is empty.
        """
        check_id(webhook_id, "webhook_id")
        if not isinstance(token, str):
            raise TypeError(f"token must be a str, got {type(token).__name__}")
        if not token:
            raise ValueError("token must not be empty")
        record: dict[str, Any] = {"publicId": webhook_id}
        if channel_id is not None:
            record["channelPublicId"] = check_id(channel_id, "channel_id")
        webhook = cls(state, record)
        webhook._token = Secret(token, shown=REDACTED_WEBHOOK_TOKEN)
        return webhook

    @property
    def token(self) -> Secret | None:
        """The webhook token as a ``Secret`` (``token.get()`` gives the
        text; its repr is ``***``), or None when the record did not carry it (listings never do)."""
        return self._token

    @property
    def channel(self) -> Channel | None:
        """The cached channel of this webhook, or None."""
        if self.channel_id is None:
            return None
        return self._state.channels.cache.get(self.channel_id)

    def edit(self, *, name: str = MISSING, avatar_url: str | None = MISSING) -> Webhook:
        """Change this webhook (``PATCH /channels/{chid}/webhooks/{wid}``; needs MANAGE_CHANNELS).

        Blocks until the service answered (204). Only the given keywords are
        sent; ``avatar_url=None`` clears the avatar. Like ``Channel.edit`` and
        ``Role.edit``, this object is left as it was and a new one is returned
        (the library caches no webhook).

        Args:
            name: The new name (1 to 80 characters, not only spaces).
            avatar_url: The new avatar URL, or None to clear it.

        Returns:
            A new :class:`Webhook` with the change applied; it holds the same
            token (a ``Secret``) when this one does.

        Raises:
            TypeError: A value of the wrong type (before any request).
            ValueError: Nothing to change, an empty or over-long ``name`` (80
                characters at most), or no channel id (before any request).
            ServiceAPIError: 403 without MANAGE_CHANNELS, 404 unknown webhook.
        """
        body: dict[str, Any] = {}
        if name is not MISSING:
            body["name"] = _check_name(name, "name")
        if avatar_url is not MISSING:
            if avatar_url is not None and not isinstance(avatar_url, str):
                raise TypeError(f"avatar_url must be a str or None, got {type(avatar_url).__name__}")
            body["avatarUrl"] = avatar_url
        if not body:
            raise ValueError("edit needs name or avatar_url")
        channel_id = self._require_channel()
        self._state.request(
            Route(endpoints.EDIT_WEBHOOK, channel_id=channel_id,
                  webhook_id=self.id),
            json=body,
        )
        merged = self.raw
        merged.update(body)
        updated = Webhook(self._state, merged, channel_id=channel_id)
        token = self._token.get() if self._token is not None else None
        if token:
            updated._token = Secret(token, shown=REDACTED_WEBHOOK_TOKEN)
        return updated

    def delete(self) -> None:
        """Delete this webhook (``DELETE /channels/{chid}/webhooks/{wid}``); its token stops working.

        Blocks until the service answered.

        Raises:
            ValueError: No channel id (before any request).
            ServiceAPIError: 403 without MANAGE_CHANNELS, 404 unknown webhook.
        """
        channel_id = self._require_channel()
        self._state.request(
            Route(endpoints.DELETE_WEBHOOK, channel_id=channel_id,
                  webhook_id=self.id)
        )

    def execute(
        self,
        content: str | None = None,
        *,
        username: str | None = None,
        avatar_url: str | None = None,
        embeds: Sequence[EmbedBuilder | Mapping[str, Any]] | None = None,
    ) -> str | None:
        """Post a message through this webhook (``POST /webhooks/{wid}/{token}``). Blocks.

        Sends **no** ``Authorization`` header (the token in the path is the
        credential), so it works before ``login`` too; it still goes through the
        REST session: the FIFO queue, the rate-limit bucket ``POST:webhooks/<id>``,
        retries and the usual errors, with the token shown as ``***`` in every
        path, error and log line. The message's author is the webhook's
        pseudo-user (its id is this webhook's id, ``bot`` True); it reaches
        ``message_create`` listeners like any other message.

        Args:
            content: The text (sent as ``content``); None or ``""`` with embeds.
            username: Author name for this message only (1 to 80 characters,
                not only spaces). Each message keeps its own name: a message's
                ``author`` is a :class:`User` of its own, not cached in
                ``client.users``.
            avatar_url: Author avatar URL for this message only.
            embeds: :class:`EmbedBuilder` objects or plain embed mappings.

        Returns:
            The id of the created message (``{"id": ...}`` in the answer), or
            None when the answer carries none.

        Raises:
            TypeError: An argument of the wrong type (before any request).
            ValueError: No token (a listed webhook carries none; use the
                created one or :meth:`from_token`), a bad ``username``, or the
                message breaks a message rule: only whitespace and no embed, or
                over the message limits, the text starting ``execute:`` and
                naming the rule (before any request).
            EmptyMessageError: No content and no embed (``"execute requires
                non-empty content or at least one embed."``; also a ValueError).
            ServiceAPIError: 404 unknown webhook or wrong token, 400 refused
                content; ``RateLimitError`` for a 429 after retries.
            ServiceTimeoutError: The last attempt timed out.
            ServiceError: Network failure after the last retry, or the client
                was destroyed.
        """

        token = self._token
        if token is None:
            raise ValueError("this webhook has no token: only the answer that created it carries one")
        if content is not None and not isinstance(content, str):
            raise TypeError(f"content must be a str or None, got {type(content).__name__}")
        payload = embed_payloads(embeds)
        check_message(content or "", payload, "execute")
        body: dict[str, Any] = {}
        if content:
            body["content"] = content
        if payload:
            body["embeds"] = payload
        if username is not None:
            body["username"] = _check_name(username, "username")
        if avatar_url is not None:
            if not isinstance(avatar_url, str):
                raise TypeError(f"avatar_url must be a str or None, got {type(avatar_url).__name__}")
            body["avatarUrl"] = avatar_url
        data = self._state.request(
            Route(endpoints.EXECUTE_WEBHOOK, webhook_id=self.id, token=token),
            json=body,
            authorized=False,
        )
        message_id = read_id(data, "id", "publicId", "messagePublicId") if isinstance(data, dict) else None
        if message_id is None and isinstance(data, dict) and isinstance(data.get("message"), dict):
            message_id = read_id(data["message"], "publicId", "id")
        return message_id

    def _require_channel(self) -> str:
        if self.channel_id is None:
            raise ValueError("webhook has no channel id")
        return self.channel_id

    def __reduce__(self) -> Any:
        raise TypeError("a Webhook cannot be pickled (it holds a client and possibly a token)")


def _check_name(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{what} must not be empty")
    if len(value) > MAX_WEBHOOK_NAME:
        raise ValueError(f"{what} must be at most {MAX_WEBHOOK_NAME} characters, got {len(value)}")
    return value
