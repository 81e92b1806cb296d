"""The catalog of every event a :class:`~service_client.Client` emits.

One entry per event: its name, its listener arguments with their types, when
it fires and its ordering key. Everything else about events is derived from
this table:

- the typed overloads of ``Client.on``, ``Client.once`` and
  ``Client.wait_for`` (mypy checks a listener's parameters and the result of
  ``wait_for`` against the event's arguments);
- the check that refuses an unknown name such as ``"mesage_create"`` with a
  :class:`ValueError` naming the closest known events;
- the event list in the docstring of ``Client.on`` (``help(Client.on)``);
- the event reference of the documentation (``docs/events.rst``).

The generated parts (the overloads, :data:`EventName` and the documentation
page) are rewritten with ``python -m
service_client.events._codegen`` after the catalog changes; a test fails while
they differ from it.

Events of your own are opted into explicitly: :meth:`Client.register_event
<service_client.Client.register_event>` returns a :data:`CustomEvent` name
that ``on``, ``once``, ``wait_for`` and ``Client.dispatch`` accept.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal, NewType

__all__ = [
    "EVENTS",
    "EVENT_NAMES",
    "OTHER_LIBRARY_NAMES",
    "SHARED_EVENTS",
    "CustomEvent",
    "EventArg",
    "EventName",
    "EventSpec",
    "event_spec",
    "unknown_event_message",
]

#: A name registered with :meth:`Client.register_event
#: <service_client.Client.register_event>` for an event of your own (a plain
#: str at run time). Type checkers accept it wherever an event name goes.
CustomEvent = NewType("CustomEvent", str)


@dataclass(frozen=True)
class EventArg:
    """One argument a listener receives.

    Attributes:
        name: The parameter's name as the documentation shows it.
        type: Its type, as a Python annotation (``"Message"``,
            ``"dict[str, Any]"``); raw payloads are ``dict[str, Any]``.
        doc: What it holds (reStructuredText).
    """

    name: str
    type: str
    doc: str


@dataclass(frozen=True)
class EventSpec:
    """One event of the catalog.

    Attributes:
        name: The name listeners register under (snake_case).
        args: The listener's arguments, in call order (empty: none).
        when: When the event fires and the cache effect applied before
            listeners run (reStructuredText, one paragraph).
        key: The ordering key: events sharing it reach listeners one at a
            time in arrival order (reStructuredText, short).
    """

    name: str
    args: tuple[EventArg, ...]
    when: str
    key: str

    @property
    def signature(self) -> str:
        """``name(arg: Type, ...)``, as the documentation shows it."""
        return f"{self.name}({', '.join(f'{a.name}: {a.type}' for a in self.args)})"


_RAW = "dict[str, Any]"

_LIFECYCLE = "lifecycle (a key of their own)"
_CHANNEL = "the channel"
_MESSAGE_CHANNEL = "the message's channel; else its server; else the message id"
_SERVER = "the server"
_USER = "the user"


def _raw(doc: str) -> tuple[EventArg, ...]:
    return (EventArg("data", _RAW, doc),)


#: Every event the client emits, in the order the documentation lists them.
EVENTS: tuple[EventSpec, ...] = (
    # -- the client's own lifecycle ------------------------------------------------
    EventSpec(
        "ready",
        (),
        "``login()`` is done: ``client.user``, the servers in ``client.guilds.cache`` and the bot's "
        "own member of each are loaded; ``login()`` returns right after emitting it.",
        _LIFECYCLE,
    ),
    EventSpec(
        "disconnect",
        (EventArg("reason", "str", '``"transport close"``, ``"transport error"``, ``"ping timeout"`` '
                  'or ``"io server disconnect"``'),),
        "The socket was lost; the client reconnects in the background by itself. REST calls keep "
        "working meanwhile; socket operations raise ``ServiceAuthError`` at once.",
        _LIFECYCLE,
    ),
    EventSpec(
        "reconnect",
        (),
        "The socket is back. Before any later event reaches listeners, the server list is "
        "reconciled with the service's (servers left meanwhile are announced with "
        "``guild_delete``, servers joined with ``guild_create``); missed messages are not replayed (with "
        "``Client(catch_up=CatchUp())`` they are read back from history and come as ``message_create`` with "
        "``message.replayed`` True).",
        _LIFECYCLE,
    ),
    EventSpec(
        "client_close",
        (),
        "``destroy()`` was called (or ``run()`` ended, or ``login()`` failed): the place to stop "
        "threads, servers and files of your own. Fires once, when the client is already destroyed "
        "(requests and sends raise) and its scheduled work cancelled; ``destroy()`` waits up to 5 s "
        "for these listeners before it stops the worker pool.",
        "none: it runs alone, last",
    ),
    EventSpec(
        "error",
        (EventArg("error", "Exception", "the exception (a ``CommandError`` for a failed command)"),),
        "A listener raised (an ``error`` listener that raises is only reported, never re-emitted), "
        "a command failed, or the service refused the token when the client tried to reconnect.",
        "none; a failed command's channel; lifecycle for a refused reconnection",
    ),
    EventSpec(
        "command_error",
        (EventArg("error", "CommandError", "the failure (a ``CheckFailure`` when a check refused); "
                  "``error.context`` is the ``CommandContext`` (message, author, channel)"),),
        "A message named a command of a ``CommandDispatcher`` that did not run or failed: a check "
        "refused the author, the arguments did not fit, a cooldown, or the command raised (a "
        "``CommandInvokeError``). Emitted after the dispatcher answered the author; a word that names "
        "no command is not emitted.",
        _MESSAGE_CHANNEL,
    ),
    # -- messages ------------------------------------------------------------------
    EventSpec(
        "message_create",
        (EventArg("message", "Message", "the new message; its author is upserted into ``client.users``"),),
        "A message was posted where the bot can see it (socket event ``message:new``). It also "
        "completes the ``send_message`` call that sent it.",
        "the channel; else the server",
    ),
    EventSpec(
        "message_update",
        _raw("the edited message record (``publicId``, ``channelPublicId``, ``content``, ``editedAt``...)"),
        "A message was edited (``message:updated``).",
        _MESSAGE_CHANNEL,
    ),
    EventSpec(
        "message_delete",
        _raw("``publicId`` / ``messagePublicId``, ``channelPublicId``, ``serverPublicId``"),
        "A message was deleted (``message:deleted``).",
        _MESSAGE_CHANNEL,
    ),
    EventSpec(
        "message_reaction_add",
        (
            EventArg("info", "ReactionEvent", "the reaction with its context: ``emoji``, ``count`` (the emoji's "
                     "users after this change), ``added``, the message, channel, server and member (from the "
                     "cache, else their ids); as a dict, ``emoji``, ``messagePublicId`` and ``count``"),
            EventArg("user", "User", "who reacted (the cached user, else one built from the payload)"),
            EventArg("message_id", "str", "the message's id"),
        ),
        "A user added a reaction: one event per (emoji, user) added since the message's previous "
        "reaction snapshot (``message:reaction`` carries the full current list).",
        _MESSAGE_CHANNEL,
    ),
    EventSpec(
        "message_reaction_remove",
        (
            EventArg("info", "ReactionEvent", "the reaction with its context, as for ``message_reaction_add`` "
                     "(``added`` is False)"),
            EventArg("user", "User", "whose reaction went (the cached user, else one built from the payload)"),
            EventArg("message_id", "str", "the message's id"),
        ),
        "A user removed a reaction: one event per (emoji, user) gone since the message's previous "
        "reaction snapshot; removals of an emoji come before its additions.",
        _MESSAGE_CHANNEL,
    ),
    EventSpec(
        "message_reaction_remove_all",
        _raw("``messagePublicId``"),
        "Every reaction of a message was cleared (``message:reaction_clear``).",
        _MESSAGE_CHANNEL,
    ),
    EventSpec(
        "message_pin",
        _raw("``messagePublicId``, ``channelPublicId``, ``pinned`` (true or false)"),
        "A message was pinned or unpinned (``message:pinned``).",
        _MESSAGE_CHANNEL,
    ),
    # -- servers -------------------------------------------------------------------
    EventSpec(
        "guild_create",
        (EventArg("guild", "Guild", "the server, now in ``client.guilds.cache``"),),
        "The bot joined a server (``server:joined``; its own member is fetched first), or a "
        "reconnect found a server joined while offline.",
        _SERVER,
    ),
    EventSpec(
        "guild_update",
        (EventArg("guild", f"Guild | {_RAW}", "the cached server, patched; the raw payload when not cached"),),
        "A server's name or icon changed (``server:updated``).",
        _SERVER,
    ),
    EventSpec(
        "guild_delete",
        (EventArg("guild", f"Guild | {_RAW}", "the evicted server; the raw payload (``serverPublicId``) when not cached"),),
        "The bot lost a server: deleted, the bot removed or banned, or it left "
        "(``server:deleted``, ``server:you_removed``, ``server:you_left``); or a reconnect found it gone. "
        "The server is evicted from the cache.",
        _SERVER,
    ),
    EventSpec(
        "guild_member_add",
        (EventArg("member", "Member", "the new member, now cached"),),
        "A member joined a server (``server:member_add``).",
        _SERVER,
    ),
    EventSpec(
        "guild_member_remove",
        (EventArg("member", "RemovedMember", "the member that left: the one cached (a copy), else one built "
                  "from the event's ids; its ``reason`` is ``left``, ``kicked`` or ``banned``"),),
        "A member left, was kicked or was banned (``server:member_remove``, "
        "``server:member_removed``); evicted from ``client.members``. A ban is followed by "
        "``guild_ban_add``.",
        _SERVER,
    ),
    EventSpec(
        "guild_member_update",
        (EventArg("member", f"Member | {_RAW}", "the refetched member, cached; the raw payload (ids only) "
                  "when the fetch failed"),),
        "A member changed (``server:member_update``, which carries ids only): the member is fetched "
        "first, the event keeping its place in the server's order meanwhile.",
        _SERVER,
    ),
    EventSpec(
        "guild_ban_add",
        _raw("``serverPublicId``, ``memberPublicId``, ``reason`` (always ``\"banned\"``: how the member "
             "left, not the ban's reason)"),
        "A member was banned (right after its ``guild_member_remove``). The reason given for the ban "
        "is in :meth:`Guild.fetch_bans <service_client.Guild.fetch_bans>`.",
        _SERVER,
    ),
    EventSpec(
        "guild_ban_remove",
        _raw("``serverPublicId``, ``userPublicId``"),
        "A ban was revoked (``server:ban_revoked``).",
        _SERVER,
    ),
    EventSpec(
        "guild_channels_update",
        _raw("``serverPublicId``"),
        "A channel of the server was created, edited, deleted, copied, synced or had its overwrites "
        "changed (``server:channels_updated``). When the client caches channels of that server, "
        "they are refetched first (deleted and now hidden ones evicted).",
        _SERVER,
    ),
    EventSpec(
        "guild_categories_update",
        _raw("``serverPublicId``"),
        "The same, for categories (``server:categories_updated``), with the same refresh first.",
        _SERVER,
    ),
    EventSpec(
        "role_create",
        (EventArg("role", "Role", "the new role, now in ``guild.roles``"),),
        "A role was created in a cached server (``server:role_create``).",
        _SERVER,
    ),
    EventSpec(
        "role_update",
        (EventArg("role", "Role", "the role as it is now, replacing the cached one"),),
        "A role of a cached server changed (``server:role_update``).",
        _SERVER,
    ),
    EventSpec(
        "role_delete",
        (EventArg("role", "Role | str", "the removed role; its id when it was not cached"),),
        "A role of a cached server was deleted (``server:role_delete``); removed from "
        "``guild.roles`` and from the cached members.",
        _SERVER,
    ),
    EventSpec(
        "role_order_update",
        _raw("``serverPublicId`` and ``roles``, a list of ``{publicId, position}``"),
        "The roles of a cached server were reordered (``server:roles_order_update``); the cached "
        "roles' positions are patched.",
        _SERVER,
    ),
    # -- users ---------------------------------------------------------------------
    EventSpec(
        "user_update",
        (EventArg("user", f"User | {_RAW}", "the cached user, patched; the raw payload when not cached"),),
        "A user's name, tag or avatar changed (``user:update``).",
        _USER,
    ),
    EventSpec(
        "presence_update",
        _raw("``userPublicId``, ``status``"),
        "A user's status changed (``presence:update``); the cached user's ``status`` is patched "
        "(the bot's own is set by ``set_status`` at once).",
        _USER,
    ),
    EventSpec(
        "activity_update",
        _raw("``userPublicId``, ``activity`` (``type``, ``name``, ``details``, ``startedAt``; or null)"),
        "A user's activity changed (``activity:update``).",
        _USER,
    ),
    EventSpec(
        "typing_start",
        _raw("``channelPublicId``, ``userPublicId``, ``userName``"),
        "A user started typing (``typing:start``).",
        "the channel; else the server; else the user",
    ),
    EventSpec(
        "typing_stop",
        _raw("``channelPublicId``, ``userPublicId``, ``userName``"),
        "A user stopped typing (``typing:stop``).",
        "the channel; else the server; else the user",
    ),
    EventSpec(
        "dm_new",
        _raw("the DM channel record, from the bot's side"),
        "A user opened a DM with the bot (``dm:new``).",
        "the DM channel",
    ),
    # -- voice ---------------------------------------------------------------------
    EventSpec(
        "voice_state_update",
        _raw("``channelPublicId``, ``users`` (everyone in the channel), ``startedAt``"),
        "A voice channel's participants (``voice:state-update``, a snapshot); that channel's "
        "entries of ``client.voice_states`` are replaced.",
        _CHANNEL,
    ),
    EventSpec(
        "voice_user_joined",
        _raw("``channelPublicId``, ``user``, ``users`` (the joiner included)"),
        "A user, the bot included, joined a voice channel (``voice:user-joined``); the channel's "
        "voice states are replaced.",
        _CHANNEL,
    ),
    EventSpec(
        "voice_user_left",
        _raw("``channelPublicId``, ``userPublicId``, ``users``"),
        "A user left a voice channel (``voice:user-left``); the leaver's voice state is removed "
        "(the bot's own voice connection closes when it is the leaver).",
        _CHANNEL,
    ),
    EventSpec(
        "voice_user_state",
        _raw("``channelPublicId``, ``userPublicId`` and the changed fields (``muted``, ``deafened``...)"),
        "A user's voice state changed (``voice:user-state``); merged into the existing entry.",
        _CHANNEL,
    ),
    EventSpec(
        "voice_incoming_call",
        _raw("``channelPublicId``, ``fromUser`` (``userPublicId``, ``userName``, ``userImage``)"),
        "A user is calling the bot (``voice:incoming-call``).",
        _CHANNEL,
    ),
    EventSpec(
        "voice_call_cancelled",
        _raw("``channelPublicId``"),
        "That call was cancelled (``voice:call-cancelled``).",
        _CHANNEL,
    ),
    # -- voice media (the voice extra) ---------------------------------------------
    EventSpec(
        "audio_frame",
        (EventArg("frame", "AudioFrame", "``user_id`` (the speaker), ``samples`` (16-bit PCM), "
                  "``sample_rate`` (48000), ``channels`` (1)"),),
        "20 ms of what another participant of the bot's voice channel said, decoded (50 a second "
        "per speaker while the media is connected; the voice extra).",
        "the speaker (each speaker's frames in order; speakers concurrently)",
    ),
    EventSpec(
        "player_start",
        (EventArg("playback", "AudioPlayback", "the playback that started"),),
        "``connection.play()`` started playing a source (the bot's speaking flag turns on).",
        "the voice channel's player",
    ),
    EventSpec(
        "player_finish",
        (EventArg("playback", "AudioPlayback", "the playback that ended: ``error`` is None unless "
                  "it failed"),),
        "A playback ended: the source is over, it was stopped (``stop()``, another ``play()``, "
        "leaving) or it failed (the speaking flag turns off).",
        "the voice channel's player",
    ),
    EventSpec(
        "voice_media_lost",
        (EventArg("connection", "VoiceConnection", "the voice connection whose media ended"),
         EventArg("reason", "str", "LiveKit's disconnect reason (``\"SERVER_SHUTDOWN\"``...)")),
        "The voice media ended without ``leave()`` (the media server closed it or the network "
        "failed): playback and recording stop; join again to get it back.",
        "the voice channel's player",
    ),
)

_BY_NAME: dict[str, EventSpec] = {entry.name: entry for entry in EVENTS}

#: The client's own events that code outside the client may emit as well, with
#: :meth:`Client.dispatch <service_client.Client.dispatch>`: ``error`` (a failure to report
#: as the client reports a listener's) and ``command_error`` (a command framework's failures,
#: which :class:`~service_client.CommandDispatcher` emits this way).
SHARED_EVENTS: frozenset[str] = frozenset({"error", "command_error"})

#: The names of :data:`EVENTS`.
EVENT_NAMES: frozenset[str] = frozenset(_BY_NAME)

# <generated:EventName> python -m service_client.events._codegen
#: Every name of :data:`EVENTS`, as a type: annotate a variable holding an event name with it.
EventName = Literal[
    "ready",
    "disconnect",
    "reconnect",
    "client_close",
    "error",
    "command_error",
    "message_create",
    "message_update",
    "message_delete",
    "message_reaction_add",
    "message_reaction_remove",
    "message_reaction_remove_all",
    "message_pin",
    "guild_create",
    "guild_update",
    "guild_delete",
    "guild_member_add",
    "guild_member_remove",
    "guild_member_update",
    "guild_ban_add",
    "guild_ban_remove",
    "guild_channels_update",
    "guild_categories_update",
    "role_create",
    "role_update",
    "role_delete",
    "role_order_update",
    "user_update",
    "presence_update",
    "activity_update",
    "typing_start",
    "typing_stop",
    "dm_new",
    "voice_state_update",
    "voice_user_joined",
    "voice_user_left",
    "voice_user_state",
    "voice_incoming_call",
    "voice_call_cancelled",
    "audio_frame",
    "player_start",
    "player_finish",
    "voice_media_lost",
]
# </generated:EventName>


def event_spec(name: str) -> EventSpec:
    """The catalog entry of a known event.

    Args:
        name: An event name.

    Returns:
        Its :class:`EventSpec`.

    Raises:
        ValueError: ``name`` is not a known event (the message names the closest ones).
    """
    entry = _BY_NAME.get(name)
    if entry is None:
        raise ValueError(unknown_event_message(name))
    return entry


#: Names other chat libraries use (and the ``on_`` handler names they derive from them),
#: mapped to this client's event. Only suggestions: these names are never accepted.
OTHER_LIBRARY_NAMES: dict[str, str] = {
    "message": "message_create",
    "message_new": "message_create",
    "message_send": "message_create",
    "message_edit": "message_update",
    "message_edited": "message_update",
    "message_updated": "message_update",
    "message_deleted": "message_delete",
    "message_reaction": "message_reaction_add",
    "reaction_add": "message_reaction_add",
    "reaction_remove": "message_reaction_remove",
    "reaction_clear": "message_reaction_remove_all",
    "raw_reaction_add": "message_reaction_add",
    "raw_reaction_remove": "message_reaction_remove",
    "raw_reaction_clear": "message_reaction_remove_all",
    "raw_message_edit": "message_update",
    "raw_message_delete": "message_delete",
    "message_pinned": "message_pin",
    "pins_update": "message_pin",
    "member_join": "guild_member_add",
    "member_add": "guild_member_add",
    "member_joined": "guild_member_add",
    "member_remove": "guild_member_remove",
    "member_leave": "guild_member_remove",
    "member_left": "guild_member_remove",
    "member_kick": "guild_member_remove",
    "member_update": "guild_member_update",
    "member_ban": "guild_ban_add",
    "member_unban": "guild_ban_remove",
    "ban_add": "guild_ban_add",
    "ban_remove": "guild_ban_remove",
    "guild_join": "guild_create",
    "guild_available": "guild_create",
    "server_join": "guild_create",
    "server_joined": "guild_create",
    "guild_remove": "guild_delete",
    "guild_leave": "guild_delete",
    "server_leave": "guild_delete",
    "server_update": "guild_update",
    "guild_role_create": "role_create",
    "guild_role_update": "role_update",
    "guild_role_delete": "role_delete",
    "guild_channel_create": "guild_channels_update",
    "guild_channel_update": "guild_channels_update",
    "guild_channel_delete": "guild_channels_update",
    "channel_create": "guild_channels_update",
    "channel_update": "guild_channels_update",
    "channel_delete": "guild_channels_update",
    "typing": "typing_start",
    "presence": "presence_update",
    "voice_state": "voice_state_update",
    "connect": "ready",
    "connected": "ready",
    "resumed": "reconnect",
    "resume": "reconnect",
    "disconnected": "disconnect",
    "close": "client_close",
    "closed": "client_close",
    "shutdown": "client_close",
}


def unknown_event_message(name: str, custom: frozenset[str] | set[str] = frozenset()) -> str:
    """The message of the :class:`ValueError` raised for an unknown event name.

    Suggestions, best first: the name without a leading ``on_`` (``"on_message_create"``
    -> ``message_create``), this client's name for an event other libraries call
    differently (``"message"``, ``"on_message"`` -> ``message_create``; ``"member_join"``
    -> ``guild_member_add``; ``"guild_join"`` -> ``guild_create``; ``"reaction_add"`` ->
    ``message_reaction_add``...), then the closest spellings.

    Args:
        name: The name that was refused.
        custom: Custom event names registered on the client, also offered as
            suggestions.

    Returns:
        ``unknown event 'mesage_create': did you mean 'message_create'?``
        followed by how to opt into an event of one's own.
    """
    candidates = sorted(EVENT_NAMES | set(custom))
    known = set(candidates)
    stem = name.lower().replace("-", "_").replace(":", "_").replace(" ", "_")
    if stem.startswith("on_"):
        stem = stem[3:]
    # camelCase as other libraries write it: onMessage, memberJoin -> message, member_join
    camel = "".join(("_" + ch.lower()) if ch.isupper() else ch for ch in name).lstrip("_")
    if camel.startswith("on_"):
        camel = camel[3:]
    close: list[str] = []
    for form in (stem, camel):
        for guess in (form, OTHER_LIBRARY_NAMES.get(form)):
            if guess is not None and guess in known and guess != name and guess not in close:
                close.append(guess)
    for form in dict.fromkeys((name, stem, camel)):
        for guess in difflib.get_close_matches(form, candidates, n=3, cutoff=0.6):
            if guess not in close:
                close.append(guess)
    close = close[:3]
    if close:
        hint = "did you mean " + " or ".join(repr(c) for c in close) + "?"
    else:
        hint = "it is none of the client's events (listed in help(Client.on))."
    return (
        f"unknown event {name!r}: {hint} "
        f"For an event of your own, register its name first: client.register_event({name!r})."
    )
