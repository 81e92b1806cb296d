"""A local emulator of the chat service: real HTTP, a real socket.io server, sqlite3 state.

Needs the ``emulator`` extra (starlette, uvicorn[standard], python-socketio).

Layout: parts passed in, never chains of base classes (a class has at most one base of ours).

- ``store/``: sqlite3 state. :class:`~.store.Store` only holds one repository per entity
  (``store.users``, ``servers``, ``members`` with roles, bans and permissions, ``channels`` with
  categories, overrides and DMs, ``messages``, ``invites``, ``extras``: emojis, webhooks, the
  audit log), each given the shared ``Database`` and the repositories it reads.
- ``ops.py`` and ``ops_*.py``: state changes with their fan-out; :class:`~.ops.Operations` only
  holds one part per entity (``ops.members.kick(...)``), each given the repositories it changes
  and the realtime side.
- ``realtime.py``, ``rt_base.py``, ``socket_server.py`` and ``rt_*.py``: python-socketio
  ``AsyncServer`` in ASGI mode; ``Realtime`` (sessions, rooms, emits) builds one group of event
  handlers per entity (``rt_connections.py``, ``rt_messages.py``, ``rt_moderation.py``,
  ``rt_presence.py``, ``rt_voice.py``), each given the ``Realtime``.
- ``app.py``, ``rest_api.py``, ``routing.py``: REST under ``/api/v2``; ``RestApi`` builds one route
  group per entity (``rest_users.py``, ``rest_servers.py``, ``rest_members.py``,
  ``rest_channels.py``, ``rest_messages.py``, ``rest_invites.py``, ``rest_webhooks.py``), each
  given the repositories and operation parts it uses and ``access.py`` (membership, visibility
  and the catalog's permissions); ``rest_audit.py`` writes the audit entries.
- ``wire.py`` (bulk posts written to websockets as whole runs of frames), ``faults.py`` (fault
  rules, limiter, request journal), ``journal.py`` (the sizes kept to, the emit journal),
  ``guard.py`` (the web surface: hosts, origins, headers), ``control.py`` (``EmulatorCore``, the
  ASGI application, and the ``/_emulator`` routes), ``emulator.py`` (``Emulator``) and
  ``serving.py`` (its server thread), ``demo.py`` (``seed_demo``), ``__main__.py`` (command
  line), ``webui.py`` and ``static/`` (the web page, a chat window at ``/`` that speaks the
  public REST API and socket.io like any client).

In-process use (``Emulator``: ``start``/``stop(keep_state=)``/``restart``, ``configure(echo=,
echo_delay_ms=, limits=, ...)``, ``ban``/``unban``/``bans``, ``kick``, ``leave_server``,
``react``/``reactions``, ``typing``, ``pins``, ``snapshot``, ``dm_channel``, ``id_mark``,
``set_vanity_code``, ``set_profile``, ``audit_log``, ``webhooks``, ``emojis``, and the seeding and
fault methods below; the records they return are typed: ``UserRecord``, ``MemberRecord``,
``RoleRecord``, ``ServerRecord``, ``MessageRecord``, ``RequestRecord``, ``EmitRecord``, ``CreatedUser`` in
``records.py``)::

    from service_client.emulator import Emulator
    with Emulator() as emu:                      # 127.0.0.1, free port, in-memory sqlite
        alice = emu.create_user("alice")         # {"user": User, "token": str}
        ...                                      # emu.base_url / emu.socket_url / emu.control_url

Everything binds ``127.0.0.1`` on one port: REST at ``http://127.0.0.1:PORT/api/v2``, socket.io
at ``http://127.0.0.1:PORT`` (path ``/socket.io/``, websocket transport accepted directly, auth
``{"token": ...}``, refusal ``Authentication failed``), control plane at
``http://127.0.0.1:PORT/_emulator``.

Web surface (``guard.py``): only ``127.0.0.1``, ``localhost`` and ``[::1]`` with the port (and the
bound interface, and ``Emulator(allowed_hosts=)`` / ``--allowed-host``) are answered; any other
``Host`` gets 421 on every path, the socket.io upgrade included. Every answer but the page itself
is JSON or plain text with ``X-Content-Type-Options: nosniff`` and ``Content-Security-Policy:
default-src 'none'; frame-ancestors 'none'``. A control-plane request with another ``Origin``
gets 403; a control-plane write (POST, PUT, PATCH, DELETE) without ``Content-Type:
application/json`` gets 415. socket.io sends no CORS headers, and a WebSocket upgrade or socket.io
request with another ``Origin`` gets 403. Bodies over ``max_body_bytes``
(16 MiB) get 413 unread; both journals are rings (``journal_entries``, 10,000) keeping
``journal_body_bytes`` (8,192) of each body, cut with ``…[truncated: N bytes in all]``.

REST (``/api/v2``, ``Authorization: Bearer <token>``): exactly the endpoints of the service's catalog,
:mod:`service_client.endpoints` (``docs/endpoints.rst`` lists each with what it takes, the
permission it needs and what it answers): each handler is registered against its endpoint
(``RestApi.serve``), the endpoint's ``authorized`` flag decides whether it needs a token (only
``EXECUTE_WEBHOOK`` does not), and a test holds the two together. The catalog also decides the
permission each handler checks (``Endpoint.permission``, read through ``Ctx.permission``: the
emulator names none itself) and the body it reads (``Endpoint.body``, a TypedDict:
``Ctx.body()`` answers 400 naming the field for a missing field or one of the wrong JSON type).
Where the service's behaviour is not known, the emulator decides:

- ``GET_INVITE``: 403 to a member who may not view the invite's channel (anyone outside the server
  may resolve it); ``LIST_INVITES`` leaves out invites to channels the caller may not view, and
  ``CREATE_INVITE`` answers 403 for such a channel
- ``CREATE_CHANNEL``, ``CREATE_CATEGORY``: a private one also gets a MEMBER override for its creator
  allowing VIEW_CHANNELS | SEND_MESSAGES
- ``PIN_MESSAGE``, ``UNPIN_MESSAGE``: DM participants may pin without any permission
- ``SEARCH_MESSAGES``: ``limit`` 25 by default, ``q`` of more than 1024 characters or 32 terms: 400
- ``EXECUTE_WEBHOOK``: the message record is marked ``webhookId`` (there and in history, search and
  pins); the token shows as ``***`` in the request journal (path and body)
- ``GET_CHANNEL`` of a DM answers the DM record seen from the caller's side

Successful changes (server, channel, category, role, member, invite, pin, bulk delete, emoji and
webhook endpoints, and socket kicks, bans and unbans) write an audit log entry whose ``actionType`` is
upper snake case: ``SERVER_UPDATE``, ``CHANNEL_CREATE``, ``ROLE_DELETE``, ``MEMBER_BAN``,
``MESSAGE_PIN``, ``EMOJI_CREATE``, ``WEBHOOK_UPDATE``... (``AUDITED_ROUTES`` in ``rest_audit.py``).

Permission overwrites, categories and channel copies (MANAGE_CHANNELS, a server permission, to
manage; overrides readable with MANAGE_CHANNELS or the right to view; each change sends
``server:channels_updated`` / ``server:categories_updated`` and moves sockets in or out of the
channel rooms at once; the override endpoints take a category's id as well as a channel's).

Overrides and ``isPrivate`` take effect for VIEW_CHANNELS and SEND_MESSAGES (owner and
ADMINISTRATOR excepted): private drops VIEW_CHANNELS, then ``@everyone``'s override, the member's
role overrides together, its own override (deny, then allow each time). A member who may not view
a channel does not get it in the category listing, is refused its reads (403), cannot post in it
or join it (voice), and receives none of its events (its voice events included).

Errors are ``{"error": text}``: 400 bad JSON/fields (JSON nested deeper than 64 levels, ``NaN``,
``Infinity`` and numbers too large for a float included), 401 no or unknown token, 403 not a member or
missing permission, 404 unknown entity or route, 405 wrong method on a known path, 413 a body over
``max_body_bytes``, 421 an unknown ``Host``. Bad input never
answers 500 and never changes state (``tests/emulator/test_fuzz.py``). Length caps: names and ids
10,000 characters, URLs 2,048, descriptions 1,024, nicknames 64, ban reasons 512, integers
(``maxAge``, ``maxUses``, ``position``) 0..2**31-1, role colours ``#rrggbb``. Request lines over
about 64 KB are refused by uvicorn's parser (plain-text 400) before the emulator sees them.

Socket (client -> server): ``message:send`` (content at most 65,536 characters,
embeds at most 128 KB of JSON, ``nonce`` a string), ``message:edit``, ``message:delete`` (author
or MANAGE_MESSAGES, channel still visible), ``message:react`` (toggle; VIEW + ADD_REACTION; then
``message:reaction {messagePublicId, reactions}``, the full list), ``message:reaction_clear``
(MANAGE_MESSAGES; then ``message:reaction_clear {messagePublicId}``), ``typing:start``/``stop``,
``presence:update``, ``activity:update``, ``voice:join``/``leave``/``state``, and with an ack
``server:kick`` / ``server:ban`` (``reason?``, ``deleteHistory?`` none/1d/7d/14d/30d) /
``server:unban``: the ack is ``{}`` or ``{"error": "servers.errors.<key>"}`` with key
``invalid_request``, ``not_found``, ``missing_permission``, ``cannot_kick_owner``,
``cannot_ban_owner``, ``already_banned`` or ``not_banned``; the state changes and the target
leaves the rooms (and voice) before the ack; after it: ``server:member_removed {serverPublicId,
memberPublicId, reason: kicked|banned}`` to the server room, ``server:you_removed`` to the
target, ``message:deleted`` for ``deleteHistory``, ``server:ban_revoked {serverPublicId,
userPublicId}``. Anything else is dropped: bad payloads, unknown events, emits of ``connect`` /
``disconnect``, undecodable Engine.IO or socket.io frames; the connection stays up. A leaver
always receives its own ``voice:user-left``.

Presence follows the sockets: a user who never chose a status (stored ``offline``) becomes
``online`` when a socket of it connects (``presence:update`` to its servers' rooms, not to its
own sockets) and ``offline`` again when its last socket goes; a status the user chose
(``presence:update``, ``PATCH /users/settings``, the control plane) stays as chosen.

Control routes (JSON, no auth; writes need ``Content-Type: application/json`` (415) and an
``Origin``, if any, of the emulator's own (403); 400/404 as above):

=========================================  =========================================================
``POST /reset``                            delete all state, faults, limiter, journal; 204
``GET /users``                             -> ``{users: [{user, token}]}``, oldest first; ``token`` null once
                                           revoked (the web page's "who are you"; local and test-only)
``POST /users`` ``{name, bot?}``           -> 201 ``{user, token}``
``PATCH /users/{uid}`` ``{name?, tag?, image?}``  -> ``{user}``; broadcasts ``user:update``
``POST /users/{uid}/revoke``               revoke the token, server-disconnect its sockets; 204
``POST /users/{uid}/presence``             ``{status?, activity?}``: store and broadcast; 204
``GET /users/{uid}/presence``              -> ``{status, activity}``
``POST /servers``                          ``{name, ownerId, categories?: [{name, channels: [{name, type}]}],
                                           channels?: [{name, type}]}`` -> 201 ``{server, categories, channels}``
``PATCH /servers/{sid}``                   ``{name?, imageUrl?}`` -> ``{server}``; ``server:updated``
``DELETE /servers/{sid}``                  204; ``server:deleted``
``POST /servers/{sid}/members``            ``{userId, roleIds?}`` -> 201 ``{member}``; ``server:joined`` to the
                                           user, ``server:member_add`` to the server room
``DELETE /servers/{sid}/members/{uid}``    204 (kick semantics: ``server:member_removed``, ``server:you_removed``)
``PATCH /servers/{sid}/members/{uid}``     ``{roles?, nickname?}`` -> ``{member}``; ``server:member_update``
``POST /servers/{sid}/roles``              ``{name, permissions: "<decimal>", color?, hoist?}`` -> 201 ``{role}``
``PATCH /servers/{sid}/roles/{rid}``       ``{name?, color?, hoist?, permissions?, position?}`` -> ``{role}``
``DELETE /servers/{sid}/roles/{rid}``      204; ``server:role_delete``
``POST /servers/{sid}/channels``           ``{name, type, categoryId?}`` -> 201 ``{channel}``
``POST /servers/{sid}/invites``            ``{channelId?, inviterId?, maxAge?, maxUses?}`` -> 201 ``{invite}``
``POST /messages``                         ``{channelId, authorId, content, embeds?}`` -> 201 ``{message}``,
                                           delivered as ``message:new``
``POST /messages/bulk``                    ``{channelId, authorId, contents: [str]}`` -> 201 ``{count}``
``GET /channels/{cid}/messages``           -> ``{messages}`` (chronological)
``GET /requests``                          -> ``{requests: [{method, path, query, status, startedAt, endedAt,
                                           headers, body, userId}], maxInFlight}`` (times epoch ms;
                                           authorization redacted; ``body`` parsed JSON with secrets
                                           redacted, else null; ``userId`` the authenticated caller or null)
``DELETE /requests``                       clear the journal and the in-flight peak; 204
``GET /connections``                       -> ``{count}`` connected socket.io clients
``POST /drop`` ``{userId?}``               abort matching sockets' TCP transport (no close packet) -> ``{count}``
``POST /disconnect`` ``{userId?}``         socket.io DISCONNECT to matching sockets -> ``{count}``
``POST /emit``                             ``{event, payload, toUser?, toServer?, toChannel?}`` raw event; 204
``GET /emits``                             -> ``{emits: [{event, payload, userId, at}]}`` client emits received
``POST /faults``                           ``{method, path (glob), status?, count? (null = all), retryAfter?,
                                           delayMs?, body?, contentType?: "application/json"|"text/plain"}``
                                           -> 201 ``{fault: {id, ...}}`` (never HTML: other types 400)
``GET /faults`` / ``DELETE /faults``       list / remove every fault rule
``POST /ratelimit`` ``{limit, windowMs, retryAfterFraction?}``  per-bucket limiter (``limit: null`` = off); 204
``POST /outage`` ``{seconds}``             refuse WebSocket upgrades (503) for a time (null lifts it); 204
``POST /settings``                         ``{realisticRooms?, sendErrors?, refuseAuth?, voiceUrl?, limits?,
                                           echo?: "normal"|"drop"|"duplicate"|"delay", echoDelayMs?,
                                           journalEntries?, journalBodyBytes?, maxBodyBytes?,
                                           sendQueueBytes?}``; 204
                                           (``reset`` restores the defaults; see ``Emulator.configure``)
``GET /snapshot``                          -> ``{tables: {table: [[column values]] sorted}, voice: {...}}``:
                                           the whole stored state, equal before and after a no-op
``GET /ui``, ``GET /ui/{name}``            the web page (also at ``/``) and its files (``app.js``, ``style.css``,
                                           ``socket.io.min.js``, ``socket.io-client.LICENSE``, ``VENDORED.txt``)
``POST /servers/{sid}/bans``               ``{userId, reason?}``: ban as the owner would; 204 (400
                                           already banned / owner, 404 unknown)
``DELETE /servers/{sid}/bans/{uid}``       lift a ban, ``server:ban_revoked``; 204 (400 not banned)
``GET /servers/{sid}/bans``                -> ``{bans: [Ban]}``
``POST /messages/{mid}/reactions``         ``{userId, emoji}``: toggle as that user's ``message:react``
                                           -> ``{added: bool}`` (403 when it may not react)
``POST /voice/join`` ``{userId, channelId}``, ``POST /voice/leave`` ``{userId}``,
``POST /voice/state`` ``{userId, state: {muted?, ...}}``   voice signalling as that user; 204
``POST /voice/speak``                      ``{userId, channelId, toneHz?, seconds?,
                                           wavBase64?}``: that user speaks in the media
                                           -> ``{queuedSeconds}`` (voice extra, else 501)
``POST /voice/recording``                  ``{channelId, userId}`` -> ``audio/wav``: what that
                                           user published there (voice extra, else 501)
=========================================  =========================================================
"""

from __future__ import annotations

from .control import EmulatorCore
from .demo import seed_demo
from .emulator import Emulator
from .records import (
    CreatedUser,
    EmitRecord,
    MemberRecord,
    MessageRecord,
    RequestRecord,
    RoleRecord,
    ServerRecord,
    UserRecord,
)

__all__ = [
    "CreatedUser",
    "EmitRecord",
    "Emulator",
    "EmulatorCore",
    "MemberRecord",
    "MessageRecord",
    "RequestRecord",
    "RoleRecord",
    "ServerRecord",
    "UserRecord",
    "seed_demo",
]
