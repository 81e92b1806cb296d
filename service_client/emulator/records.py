"""The shapes of the records the emulator hands to Python callers, as :class:`typing.TypedDict`.

:class:`~service_client.emulator.Emulator` returns plain dicts; these types say which keys they
hold, so a test author's editor and type checker know them (``emu.messages(cid)[0]["content"]``).
They describe the wire records the service sends, with its camelCase keys. Ids are 18-digit
decimal strings that increase over time (one counter for every kind of entity); times are
ISO-8601 UTC text with milliseconds (``"2024-05-01T12:00:00.000Z"``) unless said otherwise.

Import them from ``service_client.emulator``.
"""

from __future__ import annotations

from typing import Any, TypedDict

__all__ = ["CreatedUser", "EmitRecord", "MemberRecord", "MessageRecord", "RequestRecord", "RoleRecord", "ServerRecord",
           "UserRecord"]


class UserRecord(TypedDict):
    """A user: ``Emulator.user()``, ``create_user()["user"]``, a message's ``author``.

    Attributes:
        publicId: The user's id.
        name: The user's name.
        tag: A 4-digit discriminator (``"0001"``).
        image: The avatar URL, or None.
        isBot: True for a bot account.
        status: ``"online"``, ``"idle"``, ``"dnd"``, ``"invisible"`` (seen only by the user
            itself; others see ``"offline"``) or ``"offline"``. A user with no chosen status
            is ``"online"`` while one of its sockets is connected.
        createdAt: When the user was created.
    """

    publicId: str
    name: str
    tag: str
    image: str | None
    isBot: bool
    status: str
    createdAt: str


class CreatedUser(TypedDict):
    """What ``Emulator.create_user()`` returns.

    Attributes:
        user: The new :class:`UserRecord`.
        token: Its token, the text a client logs in with (keep it out of logs).
    """

    user: UserRecord
    token: str


class RoleRecord(TypedDict):
    """A role of a server: an entry of :class:`MemberRecord` ``roles``, ``create_role()["role"]``.

    Attributes:
        publicId: The role's id.
        name: Its name (``"@everyone"`` for the server's default role).
        color: ``"#rrggbb"``, or None.
        hoist: Whether members with it are listed apart.
        serverPublicId: Its server.
        position: Its rank, 0 for ``@everyone``, higher ranks higher.
        permissions: The permission bits as a decimal string (``"448"``).
    """

    publicId: str
    name: str
    color: str | None
    hoist: bool
    serverPublicId: str
    position: int
    permissions: str


class ServerRecord(TypedDict):
    """A server as ``Emulator.server()`` describes it.

    Attributes:
        publicId: The server's id.
        name: Its name.
        imageUrl: Its icon's URL, or None.
        memberCount: How many members it has.
        ownerId: Its owner's user id.
        createdAt: When it was created.
        roles: Its roles, ``@everyone`` first, then by position (:class:`RoleRecord`).
    """

    publicId: str
    name: str
    imageUrl: str | None
    memberCount: int
    ownerId: str
    createdAt: str
    roles: list[RoleRecord]


class MemberRecord(TypedDict):
    """A member of a server: ``Emulator.member()``, ``add_member()["member"]``.

    Attributes:
        publicId: The membership's own id (not the user's).
        userId: The member's user id.
        user: The member's :class:`UserRecord`.
        serverPublicId: The server.
        roles: Its roles, ``@everyone`` first, then by position (:class:`RoleRecord`).
        joinedAt: When it joined.
        nickname: Its nickname in the server, or None.
        isOwner: Whether it owns the server.
    """

    publicId: str
    userId: str
    user: UserRecord
    serverPublicId: str
    roles: list[RoleRecord]
    joinedAt: str
    nickname: str | None
    isOwner: bool


class _MessageRecordKeys(TypedDict):
    publicId: str
    content: str
    author: UserRecord | None
    channelPublicId: str
    serverPublicId: str | None
    createdAt: str
    embeds: list[dict[str, Any]]
    fileUrl: str | None
    replyToId: str | None
    editedAt: str | None
    pinned: bool


class MessageRecord(_MessageRecordKeys, total=False):
    """A stored message: ``Emulator.messages()``, ``post_message()["message"]``, ``pins()``.

    Attributes:
        publicId: The message's id (ids increase with time: a later message has a larger one).
        content: The text, escaped as the service sends it (``&`` ``<`` ``>`` as ``&amp;``
            ``&lt;`` ``&gt;``); ``Emulator.messages(cid, decoded=True)`` gives it as typed.
        author: The author as it was when the message was posted, or None.
        channelPublicId: The channel (or DM).
        serverPublicId: The channel's server; None in a DM.
        createdAt: When it was posted.
        embeds: Its embeds (``title``, ``description``, ``fields``...), possibly empty.
        fileUrl: Always None (the emulator stores no files).
        replyToId: The id of the message it answers, or None.
        editedAt: When it was last edited, or None.
        pinned: Whether it is pinned.
        webhookId: Present only on a message posted through a webhook: the webhook's id.
    """

    webhookId: str


class RequestRecord(TypedDict):
    """One REST request the emulator received: an entry of ``Emulator.requests()``.

    Attributes:
        method: The HTTP method (``"GET"``).
        path: The raw path below ``/api/v2`` (``"/servers/123/members"``); a webhook token in it
            reads ``***``.
        query: The raw query string (``"limit=50"``), ``""`` when none.
        status: The answer's status; 0 for a connection reset by a fault; None while in flight.
        startedAt: When it arrived, epoch milliseconds (a float).
        endedAt: When it was answered, epoch milliseconds; None while in flight.
        headers: The request headers, names lower-cased, ``authorization`` reading ``[REDACTED]``.
        body: The parsed JSON body with secrets redacted (possibly cut, see
            ``Emulator.configure(journal_body_bytes=)``); None when empty or not JSON.
        userId: The id of the user whose valid token came with it, else None.
    """

    method: str
    path: str
    query: str
    status: int | None
    startedAt: float
    endedAt: float | None
    headers: dict[str, str]
    body: Any
    userId: str | None


class EmitRecord(TypedDict):
    """One socket event a client emitted to the emulator: an entry of ``Emulator.emits()``.

    Attributes:
        event: The event name (``"message:send"``).
        payload: Its first argument as received (possibly cut, see
            ``Emulator.configure(journal_body_bytes=)``).
        userId: The id of the emitting socket's user, or None before it authenticated.
        at: When it arrived, epoch milliseconds (a float).
    """

    event: str
    payload: Any
    userId: str | None
    at: float
