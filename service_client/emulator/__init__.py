"""A local emulator of the chat service: real HTTP, a real socket.io server, sqlite3 state.

Protocol: section 4.4 is the contract; issue 2 ("The emulator") and issue 3 ("Emulator faults").
Needs the ``emulator`` extra (starlette, uvicorn[standard], python-socketio).

Layout: ``store.py`` (sqlite3 state and record shapes), ``realtime.py`` (python-socketio
``AsyncServer`` in ASGI mode, rooms, socket events, voice signalling), ``ops.py`` (state changes
with their fan-out), ``app.py`` (REST under ``/api/v2``), ``faults.py`` (fault rules, limiter,
request journal), ``control.py`` (``Emulator`` and the ``/_emulator`` routes), ``demo.py``
(``seed_demo``), ``__main__.py`` (command line).

In-process use::

    from service_client.emulator import Emulator
    with Emulator() as emu:                      # 127.0.0.1, free port, in-memory sqlite
        alice = emu.create_user("alice")         # {"user": User, "token": str}
        ...                                      # emu.base_url / emu.socket_url / emu.control_url

Everything binds ``127.0.0.1`` on one port: REST at ``http://127.0.0.1:PORT/api/v2``, socket.io
at ``http://127.0.0.1:PORT`` (path ``/socket.io/``, websocket transport accepted directly, auth
``{"token": ...}``, refusal ``Authentication failed``), control plane at
``http://127.0.0.1:PORT/_emulator``.

REST (``/api/v2``, ``Authorization: Bearer <token>``): CORE routes C1..C14 of protocol 1.2 and
these EXTENDED ones: ``PATCH``/``DELETE /servers/{sid}``, ``POST /servers/{sid}/leave``,
``/boost``, ``/read``, ``GET /servers/{sid}/members[?search=]``, ``PATCH
/servers/{sid}/members/{uid}``, ``GET``/``POST /servers/{sid}/roles``,
``PATCH``/``DELETE /servers/{sid}/roles/{rid}``, ``POST /servers/{sid}/categories``,
``GET /servers/{sid}/invites[?all=true]``, ``POST /servers/{sid}/invites``,
``PATCH``/``DELETE /channels/{chid}``, ``GET /chat/{chid}?limit=&before=``, ``GET /users/{uid}``.
Errors are ``{"error": text}``: 400 bad JSON/fields, 401 no or unknown token, 403 not a member or
missing permission, 404 unknown entity or route, 405 wrong method on a known path.

Control routes (JSON, no auth; 400/404 as above):

=========================================  =========================================================
``POST /reset``                            delete all state, faults, limiter, journal; 204
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
                                           headers}], maxInFlight}`` (times epoch ms; authorization redacted)
``DELETE /requests``                       clear the journal and the in-flight peak; 204
``GET /connections``                       -> ``{count}`` connected socket.io clients
``POST /drop`` ``{userId?}``               abort matching sockets' TCP transport (no close packet) -> ``{count}``
``POST /disconnect`` ``{userId?}``         socket.io DISCONNECT to matching sockets -> ``{count}``
``POST /emit``                             ``{event, payload, toUser?, toServer?, toChannel?}`` raw event; 204
``GET /emits``                             -> ``{emits: [{event, payload, userId, at}]}`` client emits received
``POST /faults``                           ``{method, path (glob), status?, count? (null = all), retryAfter?,
                                           delayMs?, body?, contentType?}`` -> 201 ``{fault: {id, ...}}``
``GET /faults`` / ``DELETE /faults``       list / remove every fault rule
``POST /ratelimit`` ``{limit, windowMs, retryAfterFraction?}``  per-bucket limiter (``limit: null`` = off); 204
``POST /outage`` ``{seconds}``             refuse WebSocket upgrades (503) for a time (null lifts it); 204
``POST /settings``                         ``{realisticRooms?, sendErrors?, refuseAuth?, voiceUrl?}``; 204
``POST /voice/join`` ``{userId, channelId}``, ``POST /voice/leave`` ``{userId}``,
``POST /voice/state`` ``{userId, state: {muted?, ...}}``   voice signalling as that user; 204
=========================================  =========================================================
"""

from __future__ import annotations

from .control import Emulator, EmulatorCore
from .demo import seed_demo

__all__ = ["Emulator", "EmulatorCore", "seed_demo"]
