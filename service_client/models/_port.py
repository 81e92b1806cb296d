"""The State port: what models and managers need of a connected client, and nothing more.

Every model (a :class:`~service_client.Message`, a :class:`~service_client.Guild`...) and
every manager holds a :class:`State` in ``_state``, never the client itself. The state
answers REST requests, socket emits, event dispatch, the nonce-keyed send, and reads and
writes of the caches. The library's implementation is
:class:`~service_client.state.ConnectionState`, which a :class:`~service_client.Client`
builds and owns; a test can hand a model a recording fake instead, and so test the model
with no client, no socket and no server.

The caches are typed with the small protocols below (:class:`UserCache`,
:class:`ChannelCache`...): each names exactly what the models call on the corresponding
manager, and the client that owns a state is a :class:`ClientLike`, so this module, like
the models, depends on nothing above them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeAlias

from .._defaults import ACK_TIMEOUT_S
from .collection import ModelList

if TYPE_CHECKING:  # pragma: no cover
    from ..rest.retry import RetryPolicy
    from ..rest.route import Route
    from .category import Category
    from .channel import Channel
    from .collection import Collection
    from .embed import EmbedBuilder
    from .emoji import Emoji
    from .guild import Guild
    from .invite import Invite
    from .member import Member
    from .message import Message
    from .role import Role
    from .user import User
    from .voice_state import VoiceState

__all__ = [
    "ChannelCache",
    "ClientLike",
    "EmojiCache",
    "GuildCache",
    "GuildManagers",
    "InviteCache",
    "MemberCache",
    "RoleCache",
    "State",
    "StateLike",
    "StateOwner",
    "UserCache",
    "VoiceStateCache",
    "state_of",
]


class UserCache(Protocol):
    """The user cache as models see it (``client.users``)."""

    @property
    def cache(self) -> Collection[str, User]:
        """Users by id."""


class GuildCache(Protocol):
    """The server cache as models see it (``client.guilds``)."""

    @property
    def cache(self) -> Collection[str, Guild]:
        """Servers by id."""


class VoiceStateCache(Protocol):
    """The voice states as models see them (``client.voice_states``)."""

    @property
    def cache(self) -> Collection[str, VoiceState]:
        """Voice states by user id."""


class MemberCache(Protocol):
    """The member cache as models see it (``client.members``)."""

    @property
    def cache(self) -> Collection[tuple[str, str], Member]:
        """Members by ``(server id, user id)``."""

    def get(self, server_id: str, user_id: str | None = None) -> Member | None:
        """The cached member of ``user_id`` in ``server_id``, or None (no request)."""

    def for_guild(self, server_id: str) -> Collection[str, Member]:
        """The cached members of one server, keyed by user id (no request)."""

    def fetch(self, server_id: str, user_id: str, *, cache: bool = True) -> Member:
        """``GET /servers/{server_id}/members/{user_id}``."""

    def fetch_all(self, server_id: str, *, cache: bool = True) -> ModelList[Member]:
        """``GET /servers/{server_id}/members``."""

    def edit(
        self, server_id: str, user_id: str, *, roles: list[Any] | None = None, nickname: Any = ...
    ) -> None:
        """``PATCH /servers/{server_id}/members/{user_id}``."""


class ChannelCache(Protocol):
    """The channel cache as models see it (``client.channels``)."""

    @property
    def cache(self) -> Collection[str, Channel]:
        """Channels (and DM channels) by id."""

    @property
    def categories(self) -> Collection[str, Category]:
        """Categories by id."""

    def fetch(self, channel_id: str, *, cache: bool = True) -> Channel:
        """``GET /channels/{channel_id}``."""

    def fetch_for_guild(self, server_id: str, *, cache: bool = True) -> ModelList[Channel]:
        """The channels of one server, from its categories listing."""

    def get_or_list(self, channel_id: str | None, server_id: str | None) -> Channel | None:
        """The cached channel, its server's channels listed first (once) when it is not cached."""

    def fetch_categories(self, server_id: str, *, cache: bool = True) -> ModelList[Category]:
        """The categories of one server, from its categories listing."""

    def create(
        self,
        server_id: str,
        name: str,
        *,
        type: str = "TEXT",  # noqa: A002 - the wire name
        category_id: str | None = None,
        private: bool | None = None,
        cache: bool = True,
    ) -> Channel:
        """``POST /servers/{server_id}/channels``."""


class ServerCache(Protocol):
    """What every per-server manager offers (a :class:`~service_client.managers.BaseManager`)."""

    @property
    def server_id(self) -> str:
        """The server these entries belong to."""

    def resolve(self, id_or_object: Any) -> Any:
        """The cached entry for an id, or the model itself when given one (no request)."""

    def resolve_id(self, id_or_object: Any) -> str | None:
        """The key of an id or model (no request), or None for anything else."""

    def __len__(self) -> int:
        """The number of cached entries."""


class RoleCache(ServerCache, Protocol):
    """A server's roles (``guild.roles``): the public surface of
    :class:`~service_client.managers.RoleManager`, which documents each method."""

    @property
    def cache(self) -> Collection[str, Role]:
        """Roles by id."""

    @property
    def everyone(self) -> Role | None:
        """The cached ``@everyone`` role, or None."""

    def get(self, key: str) -> Role | None:
        """``cache.get(key)``."""

    def fetch_all(self, *, cache: bool = True) -> ModelList[Role]:
        """``GET /servers/{sid}/roles``."""

    def fetch(self, role_id: str, *, cache: bool = True) -> Role:
        """One role, from the server's role listing."""

    def create(
        self,
        name: str,
        *,
        color: str | int | None = None,
        hoist: bool | None = None,
        permissions: Any = None,
        cache: bool = True,
    ) -> Role:
        """``POST /servers/{sid}/roles``."""

    def edit(
        self,
        role_id: str,
        *,
        name: str = ...,
        color: str | int | None = ...,
        hoist: bool = ...,
        permissions: Any = ...,
        cache: bool = True,
    ) -> Role:
        """``PATCH /servers/{sid}/roles/{rid}``."""

    def delete(self, role_id: str) -> None:
        """``DELETE /servers/{sid}/roles/{rid}``."""


class EmojiCache(ServerCache, Protocol):
    """A server's custom emojis (``guild.emojis``): the public surface of
    :class:`~service_client.managers.EmojiManager`, which documents each method."""

    @property
    def cache(self) -> Collection[str, Emoji]:
        """Emojis by id."""

    def get(self, key: str) -> Emoji | None:
        """``cache.get(key)``."""

    def fetch_all(self, *, cache: bool = True) -> ModelList[Emoji]:
        """``GET /servers/{sid}/emojis``."""

    def create(self, name: str, image_url: str, *, animated: bool = False, cache: bool = True) -> Emoji:
        """``POST /servers/{sid}/emojis``."""

    def delete(self, emoji_id: str | Emoji) -> None:
        """``DELETE /servers/{sid}/emojis/{eid}``."""


class InviteCache(ServerCache, Protocol):
    """A server's invites (``guild.invites``): the public surface of
    :class:`~service_client.managers.InviteManager`, which documents each method."""

    @property
    def cache(self) -> Collection[str, Invite]:
        """Invites by code."""

    def get(self, key: str) -> Invite | None:
        """``cache.get(key)``."""

    def fetch_all(self, *, cache: bool = True) -> ModelList[Invite]:
        """``GET /servers/{sid}/invites``."""

    def create(self, channel_id: str, *, max_age: int | None = None, max_uses: int | None = None) -> Invite:
        """``POST /servers/{sid}/invites``."""

    def revoke(self, code: str) -> None:
        """``DELETE /invites/{code}``."""


class GuildManagers(NamedTuple):
    """The managers one server holds, as :meth:`State.guild_managers` builds them."""

    #: ``guild.roles``.
    roles: RoleCache
    #: ``guild.invites``.
    invites: InviteCache
    #: ``guild.emojis``.
    emojis: EmojiCache


class State(Protocol):
    """What a model or manager may ask of the client it belongs to. Thread-safe.

    Implemented by :class:`~service_client.state.ConnectionState`. Every method may be
    called from any thread; none of them runs listeners on the calling thread.
    """

    @property
    def user(self) -> User | None:
        """The bot's own user; None before ``ready``."""

    @property
    def site_url(self) -> str:
        """The service's public web site, without a trailing slash (invite links)."""

    @property
    def client(self) -> ClientLike:
        """The :class:`~service_client.Client` that owns this state (``model.client``)."""

    @property
    def users(self) -> UserCache:
        """The user cache."""

    @property
    def guilds(self) -> GuildCache:
        """The server cache."""

    @property
    def channels(self) -> ChannelCache:
        """The channel and category caches."""

    @property
    def members(self) -> MemberCache:
        """The member cache."""

    @property
    def voice_states(self) -> VoiceStateCache:
        """The voice states."""

    def request(
        self,
        route: Route,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        timeout_ms: int | None = None,
        retry: RetryPolicy | int | None = None,
        authorized: bool = True,
    ) -> Any:
        """Perform one REST request through the session's queue; blocks.

        ``retry`` is the call's :class:`~service_client.RetryPolicy`: None for the
        client's, an int ``n`` for the client's with ``n`` retries. ``timeout_ms`` bounds
        each attempt, milliseconds: None for the session's.

        Returns:
            The parsed JSON answer, or None for 204 and an empty body.

        Raises:
            ServiceAuthError: No token (before login, after destroy); nothing is sent.
            ServiceAPIError / RateLimitError / ServiceTimeoutError / ServiceError: As
                :meth:`Client.api_call <service_client.Client.api_call>`.
        """

    def submit(
        self,
        route: Route,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        timeout_ms: int | None = None,
        retry: RetryPolicy | int | None = None,
    ) -> Future[Any]:
        """Queue one REST request; its Future completes as :meth:`request` would return or raise."""

    def emit(self, event: str, *args: Any) -> None:
        """Emit a socket event, fire-and-forget (returns once written).

        Raises:
            ServiceAuthError: The socket is not connected; nothing is sent.
            ServiceTimeoutError: The write could not be done within 10 s.
        """

    def call(self, event: str, *args: Any, timeout: float = ACK_TIMEOUT_S) -> list[Any]:
        """Emit a socket event and wait for its acknowledgement; the ack's arguments.

        Raises:
            ServiceAuthError: The socket is not connected; nothing is sent.
            ServiceTimeoutError: No acknowledgement within ``timeout`` seconds.
            ServiceError: The socket dropped or the client was destroyed first.
        """

    def dispatch(self, event: str, *args: Any, key: str | None = None) -> None:
        """Hand an event to its listeners on the worker pool, after earlier events of ``key``."""

    def send_message(
        self,
        channel_id: str,
        options: str | EmbedBuilder | Mapping[str, Any] | None = None,
        *,
        content: str | None = None,
        embeds: Sequence[EmbedBuilder | Mapping[str, Any]] | None = None,
        reply_to_id: str | None = None,
    ) -> Message:
        """The nonce-keyed send of :meth:`Client.send_message <service_client.Client.send_message>`."""

    def store_user(self, data: Any, *, cache: bool = True) -> User:
        """A User for a user record: with ``cache``, the cached one updated in place (or newly
        cached); else a new, uncached User.

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record has no id.
        """

    def store_member(self, data: Any, server_id: str | None, *, cache: bool = True) -> Member:
        """A Member for a member record (either shape); with ``cache`` its user is upserted and
        the member cached at ``(server id, user id)``.

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record names no user or no server.
        """

    def build_guild(self, data: Mapping[str, Any]) -> Guild:
        """A new, uncached :class:`~service_client.Guild` for a server record (a partial one
        from an invite, say).

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record has no id.
        """

    def guild_managers(self, server_id: str) -> GuildManagers:
        """New, empty managers for the server ``server_id`` (a :class:`~service_client.Guild`
        holds them as ``roles``, ``invites`` and ``emojis``). The models name them by the
        protocols above; the classes live one layer up, in :mod:`service_client.managers`.
        """

    def note_webhook(self, webhook_id: str) -> None:
        """Remember that ``webhook_id`` is a webhook: its messages' author is not a user."""


class StateOwner(Protocol):
    """Anything that carries a :class:`State`, such as a :class:`~service_client.Client`."""

    @property
    def _connection(self) -> State:
        """The state models built for this owner hold."""


class ClientLike(StateOwner, Protocol):
    """The client that owns a state, as the models see it: what ``model.client`` is typed as.

    At run time it is the :class:`~service_client.Client`, with all of its methods; the
    layers below the client name it by this protocol, never by its class, so a type
    checker knows the members below (the caches as :class:`State` types them, the bot's
    ``user``, ``send_message``), and the others after ``isinstance(model.client, Client)``
    or where the bot's own client is at hand.
    """

    @property
    def user(self) -> User | None:
        """The bot's own user; None before ``ready``."""

    @property
    def users(self) -> UserCache:
        """The user cache."""

    @property
    def guilds(self) -> GuildCache:
        """The server cache."""

    @property
    def channels(self) -> ChannelCache:
        """The channel and category caches."""

    @property
    def members(self) -> MemberCache:
        """The member cache."""

    @property
    def voice_states(self) -> VoiceStateCache:
        """The voice states."""

    def send_message(
        self,
        channel_id: str,
        options: Any = None,
        *,
        content: str | None = None,
        embeds: Any = None,
        reply_to_id: str | None = None,
    ) -> Message:
        """:meth:`Client.send_message <service_client.Client.send_message>`."""


#: What a model's constructor takes: a :class:`State`, or an owner of one (a Client).
StateLike: TypeAlias = "State | StateOwner"


def state_of(owner: StateLike) -> State:
    """The :class:`State` of ``owner``: ``owner`` itself, or the state a Client carries."""
    state = getattr(owner, "_connection", None)
    return owner if state is None else state  # type: ignore[return-value]
