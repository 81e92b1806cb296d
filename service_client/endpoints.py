"""The service's catalog: every REST endpoint and every socket event, declared once.

The client and the emulator both read the service's surface from here, so the
two cannot drift apart:

- every REST endpoint is an :class:`Endpoint` constant named for what it does
  (:data:`PIN_MESSAGE`): its method, its path template below the base URL
  (``/chat/{channel_id}/pin/{message_id}``), the path parameter that scopes its
  rate-limit bucket, the permission the service checks where there is one,
  and a one-line description. The client builds a request from one with
  ``Route(endpoints.PIN_MESSAGE, channel_id=..., message_id=...)`` (``Route``
  percent-encodes the values and computes the bucket key); the emulator
  registers a handler for each;
- every socket event is a constant holding its wire name, named from the
  client's side: ``EMIT_*`` for what the client emits
  (:data:`EMIT_MESSAGE_SEND` is ``"message:send"``), ``ON_*`` for what the
  service sends (:data:`ON_MESSAGE_NEW` is ``"message:new"``). Each is
  described in :data:`SOCKET_EVENTS` (direction, the record it carries,
  whether it is acknowledged). The constants are plain ``str``, so a table
  keyed by them costs nothing per event.

:data:`ENDPOINTS` and :data:`SOCKET_EVENTS` list everything in declaration
order; the documentation page of the service's surface (``docs/endpoints.rst``)
is generated from them by ``python -m service_client.events._codegen``.

Example::

    >>> from service_client import endpoints
    >>> endpoints.PIN_MESSAGE.method, endpoints.PIN_MESSAGE.path
    ('POST', '/chat/{channel_id}/pin/{message_id}')
    >>> endpoints.PIN_MESSAGE.permission.name, endpoints.PIN_MESSAGE.major
    ('PIN_MESSAGE', 'channel_id')

Pure data: no I/O, no import of anything but the permission bits.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal, TypedDict

if sys.version_info >= (3, 11):
    from typing import NotRequired
else:  # pragma: no cover - Python 3.10
    from typing_extensions import NotRequired

from .permissions import Permissions

__all__ = [
    "CLIENT_TO_SERVICE",
    "ENDPOINTS",
    "SERVICE_TO_CLIENT",
    "SOCKET_EVENTS",
    "Direction",
    "Endpoint",
    "FleetKey",
    "FleetRoute",
    "SocketEvent",
]

#: A ``{name}`` placeholder of a path template.
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
#: The HTTP methods the service uses.
_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE"})

#: Who sends a socket event: the client (it emits) or the service (the client listens).
Direction = Literal["client_to_service", "service_to_client"]
#: A socket event the client emits and the service receives.
CLIENT_TO_SERVICE: Final = "client_to_service"
#: A socket event the service sends and the client receives.
SERVICE_TO_CLIENT: Final = "service_to_client"


class Endpoint:
    """One REST endpoint of the service. Immutable; compared by identity.

    Attributes:
        name: The constant's name in this module (``"PIN_MESSAGE"``).
        method: The upper-case HTTP method.
        path: The path template below the base URL, starting with ``/``; each
            variable segment is a ``{name}`` placeholder
            (``"/chat/{channel_id}/pin/{message_id}"``).
        params: The placeholders' names, in path order.
        major: The placeholder whose value scopes the rate-limit bucket (the
            second path segment: ``"channel_id"`` for ``/chat/{channel_id}/...``),
            or None when the bucket holds no parameter (``/servers``,
            ``/channels/dm/{user_id}``: every DM open shares ``GET:channels/dm``).
        permission: The permission the service checks (on the server the
            request is about), or None when it checks none beyond membership
            or visibility.
        description: What it does, one line.
        takes: Its query parameters and JSON body (reStructuredText), ``""``
            for none.
        answer: What it answers (reStructuredText): the body, ``204``, and the
            socket events it causes.
        authorized: False when the request goes without ``Authorization``
            (webhook execution, whose token is in the path).
        body: The JSON object body it takes, as a :class:`typing.TypedDict` of
            this module (:class:`CreateRoleBody`), or None when it reads no
            body. The emulator validates requests with it (a field of the wrong
            type is a 400 naming the field) and the emulator's fuzz test
            generates bodies from it.
        query: The names of the query parameters it reads, ``()`` for none.
    """

    __slots__ = ("answer", "authorized", "body", "description", "major", "method", "name", "params", "path",
                 "permission", "query", "takes")

    name: str
    method: str
    path: str
    params: tuple[str, ...]
    major: str | None
    permission: Permissions | None
    description: str
    takes: str
    answer: str
    authorized: bool
    body: type | None
    query: tuple[str, ...]

    def __init__(self, method: str, path: str, description: str, *, permission: Permissions | None,
                 body: type | None, major: str | None = None, query: tuple[str, ...] = (), takes: str = "",
                 answer: str = "", authorized: bool = True) -> None:
        """Declare an endpoint; its :attr:`name` is set when the module has loaded.

        ``permission`` and ``body`` have no default: every entry says which
        permission the service checks and which body it reads, None for none.

        Raises:
            ValueError: An unknown method, a path not starting with ``/``, or a
                ``major`` that is not a placeholder of the path.
        """
        if method not in _METHODS:
            raise ValueError(f"method must be one of {sorted(_METHODS)}, got {method!r}")
        if not path.startswith("/"):
            raise ValueError(f"path must start with '/', got {path!r}")
        params = tuple(_PLACEHOLDER.findall(path))
        if major is not None and major not in params:
            raise ValueError(f"major {major!r} is not a placeholder of {path!r}")
        values = {"name": "", "method": method, "path": path, "params": params, "major": major,
                  "permission": permission, "description": description, "takes": takes, "answer": answer,
                  "authorized": authorized, "body": body, "query": tuple(query)}
        for key, value in values.items():
            object.__setattr__(self, key, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Endpoint is immutable")

    def __repr__(self) -> str:
        return f"<Endpoint {self.name} {self.method} {self.path}>"


#: Where the events fleet finds a socket event's ordering key (its partition) in its payload:
#: ``"channel"`` (``channelPublicId``, or the bare channel id; else its server, else its own id),
#: ``"message"`` (a message's channel, from the payload or from the ``message:new`` that announced
#: it; else its server, else the message id), ``"server"`` (``serverPublicId``, else ``publicId``)
#: or ``"user"`` (``userPublicId``, else ``publicId``).
FleetKey = Literal["channel", "message", "server", "user"]
_FLEET_KEYS = frozenset({"channel", "message", "server", "user"})


class FleetRoute:
    """How the events fleet routes one socket event the service sends. Immutable.

    The socket's process (``EventPublisher``) publishes each event to the
    partition of its ordering key; the workers run one key's events in order.

    Attributes:
        key: Where its ordering key is (see :data:`FleetKey`); None when it is not published.
        state: It changes what every worker caches (servers, channels, roles, members, users,
            presence): published to its partition and to the shared-state stream too.
        droppable: Dropped first when the publisher's buffer is full (typing, presence...).
        excluded: None when published; else why it never leaves the socket's process.
    """

    __slots__ = ("droppable", "excluded", "key", "state")

    key: FleetKey | None
    state: bool
    droppable: bool
    excluded: str | None

    def __init__(self, key: FleetKey | None, *, state: bool = False, droppable: bool = False,
                 excluded: str | None = None) -> None:
        """Declare a routing: a ``key``, or ``excluded`` with its reason (exactly one of them).

        Raises:
            ValueError: ``key`` is not a :data:`FleetKey`; or both or neither of ``key`` and
                ``excluded`` are given; or an excluded event is marked ``state`` or ``droppable``.
        """
        if (key is None) == (excluded is None):
            raise ValueError("a FleetRoute has either a key or an excluded reason")
        if key is not None and key not in _FLEET_KEYS:
            raise ValueError(f"key must be one of {sorted(_FLEET_KEYS)}, got {key!r}")
        if excluded is not None and (not excluded.strip() or state or droppable):
            raise ValueError("an excluded event has a reason and is neither state nor droppable")
        for name, value in (("key", key), ("state", state), ("droppable", droppable), ("excluded", excluded)):
            object.__setattr__(self, name, value)

    @property
    def published(self) -> bool:
        """True when the socket's process publishes the event to the workers."""
        return self.excluded is None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("FleetRoute is immutable")

    def __repr__(self) -> str:
        if self.excluded is not None:
            return f"<FleetRoute excluded: {self.excluded}>"
        return f"<FleetRoute key={self.key} state={self.state} droppable={self.droppable}>"


class SocketEvent:
    """One socket event of the service, in one direction. Immutable.

    Attributes:
        name: The constant's name in this module (``"ON_MESSAGE_NEW"``).
        event: The wire name (``"message:new"``), the constant's value.
        direction: :data:`CLIENT_TO_SERVICE` or :data:`SERVICE_TO_CLIENT`.
        record: The payload it carries (reStructuredText).
        description: What it means, one line.
        ack: True when the service acknowledges it (an emit that waits for
            ``{}`` or ``{"error": key}``).
        fleet: For an event the service sends, how the events fleet routes it (a
            :class:`FleetRoute`); None for an event the client emits.
    """

    __slots__ = ("ack", "description", "direction", "event", "fleet", "name", "record")

    name: str
    event: str
    direction: Direction
    record: str
    description: str
    ack: bool
    fleet: FleetRoute | None

    def __init__(self, event: str, direction: Direction, record: str, description: str, *, ack: bool = False,
                 fleet: FleetRoute | None = None) -> None:
        """Declare an event; its :attr:`name` is set when the module has loaded."""
        values = {"name": "", "event": event, "direction": direction, "record": record,
                  "description": description, "ack": ack, "fleet": fleet}
        for key, value in values.items():
            object.__setattr__(self, key, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("SocketEvent is immutable")

    def __repr__(self) -> str:
        return f"<SocketEvent {self.name} {self.event!r}>"


_SOCKET_EVENTS: list[SocketEvent] = []


def _emit(event: str, record: str, description: str, *, ack: bool = False) -> str:
    """Declare an event the client emits; returns its wire name."""
    _SOCKET_EVENTS.append(SocketEvent(event, CLIENT_TO_SERVICE, record, description, ack=ack))
    return event


def _on(event: str, record: str, description: str, fleet: FleetRoute | None = None) -> str:
    """Declare an event the service sends, with its fleet routing; returns its wire name."""
    _SOCKET_EVENTS.append(SocketEvent(event, SERVICE_TO_CLIENT, record, description, fleet=fleet))
    return event


# -- REST request bodies -------------------------------------------------------------------------
# Each is the JSON object an endpoint reads, as a TypedDict: the JSON type of each field (checked
# by the emulator) and, in ``Annotated``, its :class:`Kind` (what the value must be beyond its
# type, checked by the service; the emulator's fuzz test draws bad values from it).


@dataclass(frozen=True)
class Kind:
    """What a body field's value must be beyond its JSON type.

    Attributes:
        name: A short key (``"color"``); the emulator's fuzz test maps it to values the service
            refuses.
        meaning: One line for readers.
    """

    name: str
    meaning: str


Text = Annotated[str, Kind("str", "a non-blank string")]
NullableText = Annotated[str | None, Kind("str?", "a string, or null (clears)")]
Flag = Annotated[bool, Kind("bool", "true or false")]
Count = Annotated[int | None, Kind("int?", "a non-negative integer, or null (no limit)")]
Position = Annotated[int, Kind("int?", "a non-negative integer")]
IdList = Annotated[list[str], Kind("strlist", "a list of ids")]
MessageIdList = Annotated[list[str], Kind("ids100", "1 to 100 message ids of the channel")]
Embeds = Annotated[list[dict[str, Any]] | None, Kind("objlist", "a list of embed objects, or null (none)")]
PermissionBits = Annotated[str | int, Kind("perm", 'known permission bits, a decimal string ("8") or an integer')]
Color = Annotated[str | None, Kind("color", '"#rrggbb", or null (clears)')]
Timestamp = Annotated[str | None, Kind("iso?", "an ISO-8601 time with its zone, or null")]
Status = Annotated[Literal["online", "idle", "dnd", "invisible"], Kind("status", "a status")]
ChannelType = Annotated[Literal["TEXT", "VOICE"], Kind("ctype", "a creatable channel type")]
OverrideType = Annotated[Literal["ROLE", "MEMBER"], Kind("otype", "what an override targets")]
EmojiName = Annotated[str, Kind("emojiname", "2 to 32 of [A-Za-z0-9_]")]
Content = Annotated[str | None, Kind("content", "message text within the service's limits, or null (none)")]


class SetStatusBody(TypedDict):
    """``PATCH /users/settings``."""

    status: Status


class CreateServerBody(TypedDict):
    """``POST /servers``."""

    name: Text
    iconUrl: NotRequired[NullableText]


class EditServerBody(TypedDict):
    """``PATCH /servers/{server_id}``."""

    name: NotRequired[Text]
    imageUrl: NotRequired[NullableText]


class NotificationsBody(TypedDict):
    """``PUT /servers/{server_id}/notifications``."""

    muted: NotRequired[Flag]
    muteUntil: NotRequired[Timestamp]
    mentionsOnly: NotRequired[Flag]


class EditMemberBody(TypedDict):
    """``PATCH /servers/{server_id}/members/{user_id}``: ``roles`` replaces the set."""

    roles: NotRequired[IdList]
    nickname: NotRequired[NullableText]


class CreateRoleBody(TypedDict):
    """``POST /servers/{server_id}/roles``."""

    name: Text
    color: NotRequired[Color]
    hoist: NotRequired[Flag]
    permissions: NotRequired[PermissionBits]


class EditRoleBody(TypedDict):
    """``PATCH /servers/{server_id}/roles/{role_id}``."""

    name: NotRequired[Text]
    color: NotRequired[Color]
    hoist: NotRequired[Flag]
    permissions: NotRequired[PermissionBits]
    position: NotRequired[Position]


class CategoryBody(TypedDict):
    """``POST /servers/{server_id}/categories`` (``name`` required there)."""

    name: Text
    isPrivate: NotRequired[Flag]


class EditCategoryBody(TypedDict):
    """``PATCH /servers/{server_id}/categories/{category_id}``."""

    name: NotRequired[Text]
    isPrivate: NotRequired[Flag]


class CreateChannelBody(TypedDict):
    """``POST /servers/{server_id}/channels`` (``type`` defaults to ``"TEXT"``)."""

    name: Text
    type: NotRequired[ChannelType]
    categoryId: NotRequired[NullableText]
    isPrivate: NotRequired[Flag]


class EditChannelBody(TypedDict):
    """``PATCH /channels/{channel_id}``."""

    name: NotRequired[Text]
    description: NotRequired[NullableText]


class OverrideBody(TypedDict):
    """``POST /channels/{channel_id}/overrides`` (``allow`` and ``deny`` default to none)."""

    targetId: Text
    type: OverrideType
    allow: NotRequired[PermissionBits]
    deny: NotRequired[PermissionBits]


class BulkDeleteBody(TypedDict):
    """``POST /channels/{channel_id}/messages/bulk-delete``."""

    messageIds: MessageIdList


class CreateInviteBody(TypedDict):
    """``POST /servers/{server_id}/invites`` (0 or absent: no limit)."""

    channelPublicId: NotRequired[NullableText]
    maxAge: NotRequired[Count]
    maxUses: NotRequired[Count]


class CreateEmojiBody(TypedDict):
    """``POST /servers/{server_id}/emojis``."""

    name: EmojiName
    imageUrl: Text
    isAnimated: NotRequired[Flag]


class CreateWebhookBody(TypedDict):
    """``POST /channels/{channel_id}/webhooks``."""

    name: Text
    avatarUrl: NotRequired[NullableText]


class EditWebhookBody(TypedDict):
    """``PATCH /channels/{channel_id}/webhooks/{webhook_id}``."""

    name: NotRequired[Text]
    avatarUrl: NotRequired[NullableText]


class ExecuteWebhookBody(TypedDict):
    """``POST /webhooks/{webhook_id}/{token}``."""

    content: NotRequired[Content]
    username: NotRequired[NullableText]
    avatarUrl: NotRequired[NullableText]
    embeds: NotRequired[Embeds]

#: Fleet routings: ordered by the channel, a message's channel, the server or the user.
_BY_CHANNEL = FleetRoute("channel")
_BY_MESSAGE = FleetRoute("message")
_BY_SERVER = FleetRoute("server")
_SERVER_STATE = FleetRoute("server", state=True)
_TYPING = FleetRoute("channel", droppable=True)


_P = Permissions

# -- REST: the bot, users ------------------------------------------------------------------------

GET_ME = Endpoint("GET", "/auth/me", "The bot's own user (read at login).", answer='``{"user": User}``',
    permission=None, body=None)
SET_STATUS = Endpoint(
    "PATCH", "/users/settings", "Set the bot's status.", takes="``{status}``: online, idle, dnd or invisible",
    answer="204 and ``presence:update``; any other key 400", permission=None, body=SetStatusBody)
GET_USER = Endpoint("GET", "/users/{user_id}", "One user.", major="user_id", answer="bare User",
    permission=None, body=None)
GET_PROFILE = Endpoint(
    "GET", "/users/{user_id}/profile", "A user's profile.", major="user_id",
    answer="bare User plus ``banner, bannerColor, bio, followersCount, followingCount, mutualFriendsCount``",
    permission=None, body=None)
GET_MUTUAL_SERVERS = Endpoint(
    "GET", "/users/{user_id}/mutual-servers", "The servers the bot shares with a user.", major="user_id",
    answer='``{"mutualServers": [{publicId, name, imageUrl}]}``', permission=None, body=None)

# -- REST: servers -------------------------------------------------------------------------------

LIST_SERVERS = Endpoint("GET", "/servers", "The servers the bot is a member of (read at login).",
                        answer='``{"servers": [Server]}``', permission=None, body=None)
CREATE_SERVER = Endpoint("POST", "/servers", "Create a server (refused to bots).", takes="``{name, iconUrl?}``",
                         answer='201 ``{"server"}``; bots get 403', permission=None, body=CreateServerBody)
GET_SERVER = Endpoint("GET", "/servers/{server_id}", "One server.", major="server_id", answer="bare Server",
    permission=None, body=None)
EDIT_SERVER = Endpoint(
    "PATCH", "/servers/{server_id}", "Rename a server or change its icon.", major="server_id",
    permission=_P.MANAGE_SERVER, takes="``{name?, imageUrl?}`` (null clears)", answer="204; ``server:updated``",
    body=EditServerBody)
DELETE_SERVER = Endpoint("DELETE", "/servers/{server_id}", "Delete a server (its owner only).", major="server_id",
                         answer="204; ``server:deleted``", permission=None, body=None)
LEAVE_SERVER = Endpoint(
    "POST", "/servers/{server_id}/leave", "Leave a server.", major="server_id",
    answer="204; ``server:you_left`` to the leaver, ``server:member_remove`` (the owner cannot leave: 400)",
    permission=None, body=None)
BOOST_SERVER = Endpoint("POST", "/servers/{server_id}/boost", "Boost a server.", major="server_id",
                        answer="204 (membership checked, no other effect)", permission=None, body=None)
MARK_SERVER_READ = Endpoint("POST", "/servers/{server_id}/read", "Mark a server read.", major="server_id",
                            answer="204 (membership checked, no other effect)", permission=None, body=None)
GET_VANITY = Endpoint("GET", "/servers/{server_id}/vanity", "A server's vanity invite code.", major="server_id",
                      answer='``{"vanityCode": str | null}``', permission=None, body=None)
GET_SERVER_STATS = Endpoint("GET", "/servers/{server_id}/stats", "A server's counts.", major="server_id",
                            answer="bare ``{memberCount, channelCount, roleCount}``", permission=None, body=None)
SET_NOTIFICATIONS = Endpoint(
    "PUT", "/servers/{server_id}/notifications", "The bot's own notification settings for a server.",
    major="server_id", takes="``{muted?, muteUntil? (ISO or null), mentionsOnly?}``", answer="204",
    permission=None, body=NotificationsBody)
GET_AUDIT_LOG = Endpoint(
    "GET", "/servers/{server_id}/audit-logs", "A server's audit log.", major="server_id",
    permission=_P.VIEW_AUDIT_LOG, takes="``?limit=&action=``", answer='``{"logs": [AuditEntry]}``, newest first',
    body=None, query=("limit", "action"))
LIST_BANS = Endpoint("GET", "/servers/{server_id}/bans", "A server's bans.", major="server_id",
                     permission=_P.BAN_MEMBERS, answer='``{"bans": [Ban]}``', body=None)

# -- REST: members -------------------------------------------------------------------------------

LIST_MEMBERS = Endpoint(
    "GET", "/servers/{server_id}/members", "A server's members, or those whose name matches ``search``.",
    major="server_id", permission=_P.VIEW_MEMBERS, takes="``?search=``",
    answer='bare ``[Member]``; with ``search``: ``{"members": [MemberSearchResult]}``', body=None, query=("search",))
GET_MEMBER = Endpoint("GET", "/servers/{server_id}/members/{user_id}", "One member, by user id.",
                      major="server_id", answer="bare Member; 404 if not a member", permission=None, body=None)
EDIT_MEMBER = Endpoint(
    "PATCH", "/servers/{server_id}/members/{user_id}", "Set a member's roles or nickname.", major="server_id",
    permission=_P.MANAGE_ROLES, takes="``{roles?, nickname?}`` (``roles`` replaces the set)",
    answer="204; ``server:member_update``", body=EditMemberBody)

# -- REST: roles ---------------------------------------------------------------------------------

LIST_ROLES = Endpoint("GET", "/servers/{server_id}/roles", "A server's roles.", major="server_id",
                      answer='``{"roles": [Role]}``', permission=None, body=None)
CREATE_ROLE = Endpoint(
    "POST", "/servers/{server_id}/roles", "Create a role.", major="server_id", permission=_P.MANAGE_ROLES,
    takes='``{name, color?, hoist?, permissions?: "<decimal>"}``', answer='201 ``{"role"}``; ``server:role_create``',
    body=CreateRoleBody)
EDIT_ROLE = Endpoint(
    "PATCH", "/servers/{server_id}/roles/{role_id}", "Change a role.", major="server_id", permission=_P.MANAGE_ROLES,
    takes="any of ``{name, color (null clears), hoist, permissions, position}``",
    answer='``{"role"}``; ``server:role_update``', body=EditRoleBody)
DELETE_ROLE = Endpoint("DELETE", "/servers/{server_id}/roles/{role_id}", "Delete a role.", major="server_id",
                       permission=_P.MANAGE_ROLES, answer="204; ``server:role_delete``", body=None)

# -- REST: channels and categories ---------------------------------------------------------------

LIST_CATEGORIES = Endpoint(
    "GET", "/servers/{server_id}/categories", "A server's categories and channels (the only channel listing).",
    major="server_id", answer="``{categories, uncategorizedChannels}``: the channels the caller may view",
    permission=None, body=None)
CREATE_CATEGORY = Endpoint(
    "POST", "/servers/{server_id}/categories", "Create a category.", major="server_id",
    permission=_P.MANAGE_CHANNELS, takes="``{name, isPrivate?}``",
    answer='201 ``{"category"}``; ``server:categories_updated``', body=CategoryBody)
EDIT_CATEGORY = Endpoint(
    "PATCH", "/servers/{server_id}/categories/{category_id}", "Rename a category or change its privacy.",
    major="server_id", permission=_P.MANAGE_CHANNELS, takes="``{name?, isPrivate?}``",
    answer="204; ``server:categories_updated``", body=EditCategoryBody)
DELETE_CATEGORY = Endpoint(
    "DELETE", "/servers/{server_id}/categories/{category_id}", "Delete a category.", major="server_id",
    permission=_P.MANAGE_CHANNELS, answer="204; its channels become uncategorised", body=None)
SYNC_CATEGORY = Endpoint(
    "POST", "/servers/{server_id}/categories/{category_id}/sync", "Copy a category's overrides to its channels.",
    major="server_id", permission=_P.MANAGE_CHANNELS, answer="204: its overrides and ``isPrivate`` copied", body=None)
LIST_CATEGORY_OVERRIDES = Endpoint(
    "GET", "/servers/{server_id}/categories/{category_id}/overrides", "A category's permission overrides.",
    major="server_id", answer='``{"overrides": [Override]}`` (MANAGE_CHANNELS, or may view it)',
    permission=None, body=None)
CREATE_CHANNEL = Endpoint(
    "POST", "/servers/{server_id}/channels", "Create a channel.", major="server_id", permission=_P.MANAGE_CHANNELS,
    takes='``{name, type: "TEXT"|"VOICE", categoryId?, isPrivate?}``',
    answer='201 ``{"channel"}``; ``server:channels_updated``', body=CreateChannelBody)
GET_CHANNEL = Endpoint("GET", "/channels/{channel_id}", "One channel or DM.", major="channel_id",
                       answer="bare Channel (``serverPublicId`` null for a DM)", permission=None, body=None)
EDIT_CHANNEL = Endpoint(
    "PATCH", "/channels/{channel_id}", "Rename a channel or change its description.", major="channel_id",
    permission=_P.MANAGE_CHANNELS, takes="``{name?, description?}`` (null clears)",
    answer="204; ``server:channels_updated``", body=EditChannelBody)
DELETE_CHANNEL = Endpoint("DELETE", "/channels/{channel_id}", "Delete a channel.", major="channel_id",
                          permission=_P.MANAGE_CHANNELS, answer="204; ``server:channels_updated``", body=None)
OPEN_DM = Endpoint(
    "GET", "/channels/dm/{user_id}", "Open the DM with a user, or get the open one.",
    answer="bare DM record; the first call opens it (``dm:new`` to the other user)", permission=None, body=None)
DUPLICATE_CHANNEL = Endpoint(
    "POST", "/channels/{channel_id}/duplicate", "Copy a channel (settings and overrides, no messages).",
    major="channel_id", permission=_P.MANAGE_CHANNELS, answer='201 ``{"channel"}``', body=None)
SYNC_CHANNEL = Endpoint(
    "POST", "/channels/{channel_id}/sync", "Copy the category's overrides onto a channel.", major="channel_id",
    permission=_P.MANAGE_CHANNELS, answer="204; 400 without a category", body=None)

# -- REST: permission overrides ------------------------------------------------------------------

LIST_CHANNEL_OVERRIDES = Endpoint(
    "GET", "/channels/{channel_id}/overrides", "A channel's permission overrides (a category id works too).",
    major="channel_id", answer='``{"overrides": [Override]}`` (MANAGE_CHANNELS, or may view it)',
    permission=None, body=None)
SET_OVERRIDE = Endpoint(
    "POST", "/channels/{channel_id}/overrides", "Create or replace one permission override of a channel or category.",
    major="channel_id", permission=_P.MANAGE_CHANNELS,
    takes='``{targetId, type: "ROLE"|"MEMBER", allow: "<decimal>", deny: "<decimal>"}``',
    answer="204; ``server:channels_updated`` or ``server:categories_updated``", body=OverrideBody)
DELETE_OVERRIDE = Endpoint(
    "DELETE", "/channels/{channel_id}/overrides/{override_id}", "Delete one permission override.",
    major="channel_id", permission=_P.MANAGE_CHANNELS, answer="204", body=None)

# -- REST: messages ------------------------------------------------------------------------------

GET_HISTORY = Endpoint(
    "GET", "/chat/{channel_id}", "A channel's messages, newest ``limit`` before ``before``.", major="channel_id",
    takes="``?limit=&before=`` (limit 1 to 100, default 50)", answer='``{"messages": [Message]}``, chronological',
    permission=None, body=None, query=("limit", "before"))
SEARCH_MESSAGES = Endpoint(
    "GET", "/chat/{channel_id}/search", "Search a channel's messages.", major="channel_id",
    takes="``?q=&limit=&before=&after=`` (``before`` / ``after``: message ids of this channel)",
    answer='``{"messages": [Message]}``, newest first',
    permission=None, body=None, query=("q", "limit", "before", "after"))
LIST_PINS = Endpoint("GET", "/chat/{channel_id}/pins", "A channel's pinned messages.", major="channel_id",
                     answer='``{"pins": [Message]}``, most recently pinned first', permission=None, body=None)
PIN_MESSAGE = Endpoint("POST", "/chat/{channel_id}/pin/{message_id}", "Pin a message.", major="channel_id",
                       permission=_P.PIN_MESSAGE, answer="204; ``message:pinned``", body=None)
UNPIN_MESSAGE = Endpoint("DELETE", "/chat/{channel_id}/pin/{message_id}", "Unpin a message.", major="channel_id",
                         permission=_P.PIN_MESSAGE, answer="204; ``message:pinned``", body=None)
GET_REACTION_DETAILS = Endpoint(
    "GET", "/chat/{channel_id}/reactions/{message_id}/details", "Who reacted to a message, by emoji.",
    major="channel_id", takes="``?emoji=`` (does not filter)",
    answer='``{"reactions": [ReactionDetail]}``, every emoji group', permission=None, body=None, query=("emoji",))
BULK_DELETE_MESSAGES = Endpoint(
    "POST", "/channels/{channel_id}/messages/bulk-delete", "Delete up to 100 messages of a channel.",
    major="channel_id", permission=_P.MANAGE_MESSAGES, takes="``{messageIds}`` (1 to 100)",
    answer="204; one ``message:deleted`` per message", body=BulkDeleteBody)

# -- REST: invites -------------------------------------------------------------------------------

LIST_INVITES = Endpoint(
    "GET", "/servers/{server_id}/invites", "A server's invites (``all=true``), else the caller's own.",
    major="server_id", permission=_P.MANAGE_INVITES, takes="``?all=true``",
    answer='``{"invites": [ServerInvite]}``; without ``all=true``: ``{"invite": ServerInvite | null}``',
    body=None, query=("all",))
CREATE_INVITE = Endpoint(
    "POST", "/servers/{server_id}/invites", "Create an invite to a channel.", major="server_id",
    takes="``{channelPublicId, maxAge? (seconds), maxUses?}`` (0 or absent: no limit)", answer='201 ``{"invite"}``',
    permission=None, body=CreateInviteBody)
GET_INVITE = Endpoint("GET", "/invites/{code}", "Resolve an invite code.", major="code",
                      answer="resolved invite; 404 unknown or expired", permission=None, body=None)
DELETE_INVITE = Endpoint("DELETE", "/invites/{code}", "Revoke an invite.", major="code",
                         permission=_P.MANAGE_INVITES, answer="204", body=None)

# -- REST: custom emojis -------------------------------------------------------------------------

LIST_EMOJIS = Endpoint("GET", "/servers/{server_id}/emojis", "A server's custom emojis.", major="server_id",
                       answer='``{"emojis": [Emoji]}``', permission=None, body=None)
CREATE_EMOJI = Endpoint(
    "POST", "/servers/{server_id}/emojis", "Add a custom emoji.", major="server_id", permission=_P.MANAGE_SERVER,
    takes="``{name (2 to 32 of [A-Za-z0-9_]), imageUrl, isAnimated?}``", answer='201 ``{"emoji"}``; 409 name taken',
    body=CreateEmojiBody)
DELETE_EMOJI = Endpoint("DELETE", "/servers/{server_id}/emojis/{emoji_id}", "Delete a custom emoji.",
                        major="server_id", permission=_P.MANAGE_SERVER, answer="204", body=None)

# -- REST: webhooks ------------------------------------------------------------------------------

LIST_WEBHOOKS = Endpoint("GET", "/channels/{channel_id}/webhooks", "A channel's webhooks.", major="channel_id",
                         permission=_P.MANAGE_CHANNELS, answer='``{"webhooks": [Webhook]}`` without tokens', body=None)
CREATE_WEBHOOK = Endpoint(
    "POST", "/channels/{channel_id}/webhooks", "Create a webhook.", major="channel_id", permission=_P.MANAGE_CHANNELS,
    takes="``{name, avatarUrl?}``", answer='201 ``{"webhook"}`` with its ``token`` (the only answer that has it)',
    body=CreateWebhookBody)
EDIT_WEBHOOK = Endpoint(
    "PATCH", "/channels/{channel_id}/webhooks/{webhook_id}", "Rename a webhook or change its avatar.",
    major="channel_id", permission=_P.MANAGE_CHANNELS, takes="``{name?, avatarUrl?}`` (null clears)", answer="204",
    body=EditWebhookBody)
DELETE_WEBHOOK = Endpoint(
    "DELETE", "/channels/{channel_id}/webhooks/{webhook_id}", "Delete a webhook.", major="channel_id",
    permission=_P.MANAGE_CHANNELS, answer="204; its token stops working", body=None)
EXECUTE_WEBHOOK = Endpoint(
    "POST", "/webhooks/{webhook_id}/{token}", "Post a message through a webhook.", major="webhook_id",
    takes="``{content?, username?, avatarUrl?, embeds?}``",
    answer='``{"id"}``; ``message:new`` from the webhook\'s pseudo-user; 404 unknown webhook or wrong token',
    authorized=False, permission=None, body=ExecuteWebhookBody)

# -- socket: the client emits ----------------------------------------------------------------------

EMIT_MESSAGE_SEND: Final = _emit(
    "message:send", '``{channelPublicId, content, embeds, replyToId?, nonce}``',
    "Send a message; it comes back as ``message:new`` with the same ``nonce`` (a refused send: nothing).")
EMIT_MESSAGE_EDIT: Final = _emit("message:edit", "``{messagePublicId, content, embeds}``", "Edit a message.")
EMIT_MESSAGE_DELETE: Final = _emit("message:delete", "``{messagePublicId}``", "Delete a message.")
EMIT_MESSAGE_REACT: Final = _emit("message:react", "``{messagePublicId, emoji}``",
                                  "Toggle the bot's reaction on a message.")
EMIT_MESSAGE_REACTION_CLEAR: Final = _emit("message:reaction_clear", "``{messagePublicId}``",
                                           "Clear every reaction of a message.")
EMIT_TYPING_START: Final = _emit("typing:start", "the channel id, a bare JSON string", "Start typing in a channel.")
EMIT_TYPING_STOP: Final = _emit("typing:stop", "the channel id, a bare JSON string", "Stop typing in a channel.")
EMIT_PRESENCE_UPDATE: Final = _emit("presence:update", '``{status}``: online, idle, dnd or invisible',
                                    "Set the bot's status.")
EMIT_ACTIVITY_UPDATE: Final = _emit(
    "activity:update", '``{type, name, details?, startedAt}``, or ``{type: "none", name: ""}`` to clear',
    "Set or clear the bot's activity.")
EMIT_SERVER_KICK: Final = _emit("server:kick", "``{serverPublicId, userPublicId}``", "Kick a member.", ack=True)
EMIT_SERVER_BAN: Final = _emit(
    "server:ban", "``{serverPublicId, userPublicId, reason?, deleteHistory?: none|1d|7d|14d|30d}``",
    "Ban a member.", ack=True)
EMIT_SERVER_UNBAN: Final = _emit("server:unban", "``{serverPublicId, userPublicId}``", "Lift a ban.", ack=True)
EMIT_VOICE_JOIN: Final = _emit("voice:join", "``{channelPublicId}``",
                               "Join a voice channel; answered by ``voice:livekit-token``.")
EMIT_VOICE_LEAVE: Final = _emit("voice:leave", "no argument", "Leave voice.")
EMIT_VOICE_STATE: Final = _emit(
    "voice:state", "a partial of ``muted, deafened, speaking, isStreaming, isCameraOn`` (bool) and "
    "``cameraStreamId, screenStreamId, cameraTrackId, screenTrackId`` (str)", "Change the bot's voice state.")

# -- socket: the service sends ---------------------------------------------------------------------

ON_MESSAGE_NEW: Final = _on("message:new", "Message, with ``nonce`` when it answers a ``message:send``",
                            "A message was posted.",
    fleet=_BY_CHANNEL)
ON_MESSAGE_UPDATED: Final = _on("message:updated", "the full Message with ``editedAt``", "A message was edited.",
    fleet=_BY_MESSAGE)
ON_MESSAGE_DELETED: Final = _on(
    "message:deleted", "``{publicId, messagePublicId, channelPublicId, serverPublicId}``", "A message was deleted.",
    fleet=_BY_MESSAGE)
ON_MESSAGE_REACTION: Final = _on(
    "message:reaction", "``{messagePublicId, reactions: [{publicId, emoji, userPublicId, userName, "
    "messagePublicId}]}``: the full current list", "A message's reactions changed.",
    fleet=_BY_MESSAGE)
ON_MESSAGE_REACTION_CLEAR: Final = _on("message:reaction_clear", "``{messagePublicId}``",
                                       "Every reaction of a message was cleared.",
    fleet=_BY_MESSAGE)
ON_MESSAGE_PINNED: Final = _on("message:pinned", "``{messagePublicId, channelPublicId, pinned}``",
                               "A message was pinned or unpinned.",
    fleet=_BY_MESSAGE)
ON_SERVER_JOINED: Final = _on("server:joined", "bare Server", "The bot joined a server.",
    fleet=_SERVER_STATE)
ON_SERVER_UPDATED: Final = _on("server:updated", "``{serverPublicId, name?, imageUrl?}`` (null clears)",
                               "A server was renamed or its icon changed.",
    fleet=_SERVER_STATE)
ON_SERVER_DELETED: Final = _on("server:deleted", "``{serverPublicId}``", "A server was deleted.",
    fleet=_SERVER_STATE)
ON_SERVER_YOU_REMOVED: Final = _on("server:you_removed", "``{serverPublicId}``", "The bot was kicked or banned.",
    fleet=_SERVER_STATE)
ON_SERVER_YOU_LEFT: Final = _on("server:you_left", "``{serverPublicId}``", "The bot left a server.",
    fleet=_SERVER_STATE)
ON_SERVER_MEMBER_ADD: Final = _on("server:member_add", "``{serverPublicId, member}`` (nested or flat)",
                                  "A member joined.",
    fleet=_SERVER_STATE)
ON_SERVER_MEMBER_REMOVE: Final = _on("server:member_remove", "``{serverPublicId, memberPublicId}`` (a user id)",
                                     "A member left.",
    fleet=_SERVER_STATE)
ON_SERVER_MEMBER_REMOVED: Final = _on(
    "server:member_removed", "``{serverPublicId, memberPublicId, reason: kicked|banned}``",
    "A member was kicked or banned.",
    fleet=_SERVER_STATE)
ON_SERVER_MEMBER_UPDATE: Final = _on("server:member_update", "``{serverPublicId, memberPublicId}``: ids only",
                                     "A member's roles or nickname changed.",
    fleet=_SERVER_STATE)
ON_SERVER_BAN_REVOKED: Final = _on("server:ban_revoked", "``{serverPublicId, userPublicId}``", "A ban was lifted.",
    fleet=_BY_SERVER)
ON_SERVER_CHANNELS_UPDATED: Final = _on("server:channels_updated", "``{serverPublicId}``",
                                        "A server's channels changed.",
    fleet=_SERVER_STATE)
ON_SERVER_CATEGORIES_UPDATED: Final = _on("server:categories_updated", "``{serverPublicId}``",
                                          "A server's categories changed.",
    fleet=_SERVER_STATE)
ON_SERVER_ROLE_CREATE: Final = _on("server:role_create", "``{serverPublicId, role: Role}``", "A role was created.",
    fleet=_SERVER_STATE)
ON_SERVER_ROLE_UPDATE: Final = _on("server:role_update", "``{serverPublicId, role: Role}``", "A role changed.",
    fleet=_SERVER_STATE)
ON_SERVER_ROLE_DELETE: Final = _on("server:role_delete", "``{serverPublicId, rolePublicId}``", "A role was deleted.",
    fleet=_SERVER_STATE)
ON_SERVER_ROLES_ORDER_UPDATE: Final = _on(
    "server:roles_order_update", "``{serverPublicId, roles: [{publicId, position}]}``", "Roles were reordered.",
    fleet=_SERVER_STATE)
ON_USER_UPDATE: Final = _on("user:update", "``{userPublicId, name?, tag?, image?}``", "A user changed.",
    fleet=FleetRoute("user", state=True))
ON_PRESENCE_UPDATE: Final = _on("presence:update", "``{userPublicId, status}``", "A user's status changed.",
    fleet=FleetRoute("user", state=True, droppable=True))
ON_TYPING_START: Final = _on("typing:start", "``{channelPublicId, userPublicId, userName}``",
                             "A user started typing.",
    fleet=_TYPING)
ON_TYPING_STOP: Final = _on("typing:stop", "``{channelPublicId, userPublicId, userName}``",
                            "A user stopped typing.",
    fleet=_TYPING)
ON_ACTIVITY_UPDATE: Final = _on("activity:update", "``{userPublicId, activity: {type, name, details?, "
                                "startedAt} | null}``", "A user's activity changed.",
    fleet=FleetRoute("user", droppable=True))
ON_DM_NEW: Final = _on("dm:new", "the DM record from the recipient's side", "A user opened a DM with the bot.",
    fleet=_BY_CHANNEL)
ON_VOICE_STATE_UPDATE: Final = _on("voice:state-update", "``{channelPublicId, users: [VoiceUser], startedAt?}``",
                                   "A voice channel's occupants (a snapshot).",
    fleet=_BY_CHANNEL)
ON_VOICE_USER_JOINED: Final = _on("voice:user-joined", "``{channelPublicId, user, users}``",
                                  "A user joined a voice channel.",
    fleet=_BY_CHANNEL)
ON_VOICE_USER_LEFT: Final = _on("voice:user-left", "``{channelPublicId, userPublicId, users}``",
                                "A user left a voice channel.",
    fleet=_BY_CHANNEL)
ON_VOICE_USER_STATE: Final = _on("voice:user-state", "``{channelPublicId, userPublicId, ...voice:state fields}``",
                                 "A user's voice state changed.",
    fleet=_BY_CHANNEL)
ON_VOICE_INCOMING_CALL: Final = _on(
    "voice:incoming-call", "``{channelPublicId, fromUser: {userPublicId, userName, userImage}}``",
    "A user calls the bot.",
    fleet=_BY_CHANNEL)
ON_VOICE_CALL_CANCELLED: Final = _on("voice:call-cancelled", "``{channelPublicId}``", "A call was cancelled.",
    fleet=_BY_CHANNEL)
ON_VOICE_LIVEKIT_TOKEN: Final = _on(
    "voice:livekit-token", "``{channelPublicId, token, url, e2eeKey}``, to the joiner only",
    "The media server's credentials: completes a ``voice:join``.",
    fleet=FleetRoute(None, excluded="the socket process's own voice credentials: they complete its voice:join"))


def _name_everything() -> tuple[tuple[Endpoint, ...], tuple[SocketEvent, ...]]:
    """Give each declaration the name of its constant; the declarations in order."""
    found: list[Endpoint] = []
    events: dict[tuple[str, str], str] = {}
    for name, value in globals().items():
        if isinstance(value, Endpoint):
            object.__setattr__(value, "name", name)
            found.append(value)
        elif name.startswith(("EMIT_", "ON_")) and isinstance(value, str):
            events[CLIENT_TO_SERVICE if name.startswith("EMIT_") else SERVICE_TO_CLIENT, value] = name
    for spec in _SOCKET_EVENTS:
        object.__setattr__(spec, "name", events.get((spec.direction, spec.event), ""))
    return tuple(found), tuple(_SOCKET_EVENTS)


#: Every REST endpoint, in declaration order.
ENDPOINTS: tuple[Endpoint, ...]
#: Every socket event, both directions, in declaration order.
SOCKET_EVENTS: tuple[SocketEvent, ...]
ENDPOINTS, SOCKET_EVENTS = _name_everything()
