"""The in-process ``Emulator``: start, stop and restart it, seed its world, inject faults, read its state.

The server runs on its own thread (``serving.py``); every method here is thread-safe: it hops
onto the server's loop and waits a bounded time.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar, cast

from .._content import decode_content
from .conditions import EmulatorConditions
from .control import EmulatorCore
from .guard import HostRules
from .media import media_available
from .records import CreatedUser, EmitRecord, MemberRecord, MessageRecord, RoleRecord, ServerRecord, UserRecord
from .routing import API_PREFIX, CONTROL_PREFIX
from .serving import CONTROL_TIMEOUT_S, START_TIMEOUT_S, STOP_TIMEOUT_S, ServerThread, listening_socket
from .store import PROFILE_FIELDS, BadRequest

T = TypeVar("T")


class Emulator(EmulatorConditions):
    """A local emulator of the chat service, served in-process on its own thread.

    Thread-safe: every method may be called from any thread except the emulator's own loop.
    Usable as a context manager (``with Emulator() as emu:``).

    Args:
        host: Interface to bind (default ``127.0.0.1``).
        port: TCP port; 0 (default) picks a free one.
        db: sqlite3 database: ``":memory:"`` (default) or a file path.
        ping_interval: Engine.IO ping interval, seconds.
        ping_timeout: Engine.IO ping timeout, seconds.
        allowed_hosts: More ``Host`` names to answer besides ``127.0.0.1``, ``localhost`` and
            ``[::1]`` with the emulator's port (and ``host``): ``"name"`` on any port,
            ``"name:port"`` on that port only, or an IPv6 address. Every other ``Host`` gets
            421, so that a page on a name rebound to this machine reaches nothing; control-plane
            requests from these origins are accepted as the emulator's own.

        media: Run the media server (voice you can hear, :mod:`.media`): True requires the voice
            extra, False never runs it (voice credentials then hold a placeholder URL), None
            (default) runs it when the voice extra is installed.

    Raises:
        TypeError, ValueError: A bad argument (``allowed_hosts``: a string instead of a list, a
            URL, a wildcard, a bad port).
        ImportError: ``media=True`` without the voice extra.
    """

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, db: str = ":memory:",
                 ping_interval: float = 25.0, ping_timeout: float = 20.0,
                 allowed_hosts: Iterable[str] = (), media: bool | None = None) -> None:
        if not isinstance(host, str) or not host:
            raise TypeError("host must be a non-empty string")
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError("port must be an integer in 0..65535")
        if not isinstance(db, str) or not db:
            raise TypeError("db must be a non-empty string")
        for value, name in ((ping_interval, "ping_interval"), (ping_timeout, "ping_timeout")):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(f"{name} must be a positive number of seconds")
        HostRules(host, port, allowed_hosts)  # checks the names now, at the call site
        if media is not None and not isinstance(media, bool):
            raise TypeError("media must be a bool or None")
        if media and not media_available():
            raise ImportError("the emulator's media server needs the voice extra: pip install 'service_client[voice]'")
        self.media = media
        self.host = host
        self.port = port
        self.db = db
        self.allowed_hosts: tuple[str, ...] = tuple(allowed_hosts)
        self.ping_interval = float(ping_interval)
        self.ping_timeout = float(ping_timeout)
        self.core: EmulatorCore | None = None
        self._serving: ServerThread | None = None
        self._kept: EmulatorCore | None = None

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<Emulator {state} {self.host}:{self.port}>"

    # ------------------------------------------------------------------ lifecycle
    @property
    def running(self) -> bool:
        """Whether the server thread is alive and listening."""
        return self._serving is not None and self._serving.running

    @property
    def base_url(self) -> str:
        """REST base URL, ``http://127.0.0.1:PORT/api/v2``."""
        return f"http://{self.host}:{self.port}{API_PREFIX}"

    @property
    def socket_url(self) -> str:
        """Socket.IO URL, ``http://127.0.0.1:PORT``."""
        return f"http://{self.host}:{self.port}"

    @property
    def control_url(self) -> str:
        """Control-plane URL, ``http://127.0.0.1:PORT/_emulator``."""
        return f"http://{self.host}:{self.port}{CONTROL_PREFIX}"

    @property
    def page_url(self) -> str:
        """URL of the web page (chat in a browser as any user), ``http://127.0.0.1:PORT/``."""
        return f"http://{self.host}:{self.port}/"

    def start(self, timeout: float = START_TIMEOUT_S) -> Emulator:
        """Start serving; block until listening (at most ``timeout`` seconds).

        Returns:
            self.

        Raises:
            RuntimeError: Already running, or the server failed to start in time.
            OSError: The port could not be bound.
        """
        if self._serving is not None and self._serving.thread.is_alive():
            raise RuntimeError("Emulator already running")
        sock = listening_socket(self.host, self.port)
        self.port = sock.getsockname()[1]
        self.core = EmulatorCore(self.db, ping_interval=self.ping_interval, ping_timeout=self.ping_timeout,
                                 carry_from=self._kept, hosts=HostRules(self.host, self.port, self.allowed_hosts),
                                 media=self.media is not False)
        self._kept = None
        if self.core.rt.media is not None:
            self.core.rt.media_url = f"ws://{self.host}:{self.port}"
        self._serving = ServerThread(self.core, sock)
        if not self._serving.start(timeout):
            error = self._serving.error
            self.stop()
            raise RuntimeError(f"Emulator did not start within {timeout} s: {error!r}")
        return self

    def stop(self, timeout: float = STOP_TIMEOUT_S, *, keep_state: bool = False) -> None:
        """Stop serving and join the thread (at most ``timeout`` seconds). Idempotent.

        Every connection is closed and the port is released (it can be bound again at once:
        ``SO_REUSEADDR``). A REST request still in flight (a delayed fault, say) gets one second
        to finish, then its connection is closed unanswered.

        Args:
            timeout: Bound on each join, seconds.
            keep_state: Keep the stored state (also an in-memory database), fault rules,
                limiter, journal and toggles for the next :meth:`start` of this object, which
                binds the same port. Sockets and voice rooms are not kept.
        """
        serving = self._serving
        if serving is None:
            return
        if keep_state and serving.thread.is_alive():
            serving.keep_state = True
            self._kept = serving.core
        serving.stop(timeout)
        self._serving = None

    def restart(self, timeout: float = START_TIMEOUT_S) -> Emulator:
        """Stop (closing every connection, as a service restart would) and start again on the
        same port with the same state. Returns self.

        Raises:
            RuntimeError: Not running, or the restart failed. OSError: The port was taken meanwhile.
        """
        if not self.running:
            raise RuntimeError("Emulator is not running")
        self.stop(keep_state=True)
        return self.start(timeout)

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def _call(self, fn: Callable[[EmulatorCore], Awaitable[T]], timeout: float = CONTROL_TIMEOUT_S) -> T:
        if self._serving is None:
            raise RuntimeError("Emulator is not running")
        return self._serving.call(fn, timeout)

    # ------------------------------------------------------------------ seeding
    def reset(self) -> None:
        """Delete all state (users, servers, messages), faults, limiter, journal; disconnect sockets."""
        self._call(lambda c: c.reset())

    def create_user(self, name: str, *, bot: bool = False) -> CreatedUser:
        """Create a user. Returns ``{"user": UserRecord, "token": str}``. Raises ValueError for a bad name."""
        return cast(CreatedUser, self._call(lambda c: c.create_user(name, bot)))

    def users(self) -> list[dict[str, Any]]:
        """Every user with its token, oldest first: ``[{"user": User, "token": str | None}]``
        (``token`` None once revoked); what the web page's "who are you" picker lists."""
        return self._call(lambda c: _value(c.store.users.users_with_tokens()))

    def update_user(self, user_id: str, **fields: Any) -> dict[str, Any]:
        """Change ``name``/``tag``/``image`` of a user and broadcast ``user:update``; returns the User."""
        return self._call(lambda c: c.ops.users.update_user(user_id, fields))

    def revoke_token(self, user_id: str) -> None:
        """Revoke a user's token; its sockets get a server disconnect and reconnects are refused."""
        self._call(lambda c: c.ops.users.revoke_token(user_id))

    def create_server(self, name: str, owner_id: str, *, categories: list[dict[str, Any]] | None = None,
                      channels: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """Create a server owned (and joined) by ``owner_id``.

        Args:
            name: Server name.
            owner_id: Owner's user id.
            categories: ``[{name, channels: [{name, type}]}]``.
            channels: Uncategorised channels ``[{name, type}]``.

        Returns:
            ``{"server": Server, "categories": [Category], "channels": [Channel]}`` (every channel).

        Raises:
            ValueError: Malformed arguments. LookupError: Unknown owner.
        """
        return self._call(lambda c: c.ops.servers.create_server(name, owner_id, categories=categories, channels=channels))

    def server(self, server_id: str) -> ServerRecord:
        """The server as it is now, with its roles (a :class:`ServerRecord`).

        Raises:
            LookupError: An unknown server.
        """
        async def run(c: EmulatorCore) -> ServerRecord:
            """The control step, run on the emulator's event loop: the server and its roles at once."""
            record = dict(c.store.servers.server(server_id))
            record["roles"] = c.store.members.roles(server_id)
            return cast(ServerRecord, record)
        return self._call(run)

    def user(self, user_id: str) -> UserRecord:
        """Return the current :class:`UserRecord` (own view). Raises LookupError for an unknown user."""
        return cast(UserRecord, self._call(lambda c: _value(c.store.users.user(user_id, viewer=user_id))))

    def member(self, server_id: str, user_id: str) -> MemberRecord:
        """Return the :class:`MemberRecord`. Raises LookupError when not a member."""
        return cast(MemberRecord, self._call(lambda c: _value(c.store.members.member(server_id, user_id))))

    def update_server(self, server_id: str, **fields: Any) -> dict[str, Any]:
        """Rename a server (``name=``) or change its icon (``imageUrl=``); broadcasts ``server:updated``."""
        async def run(c: EmulatorCore) -> dict[str, Any]:
            """The control step, run on the emulator's event loop."""
            await c.ops.servers.update_server(server_id, fields)
            return c.store.servers.server(server_id)
        return self._call(run)

    def delete_server(self, server_id: str) -> None:
        """Delete a server; broadcasts ``server:deleted``."""
        self._call(lambda c: c.ops.servers.delete_server(server_id))

    def create_channel(self, server_id: str, name: str, type: str = "TEXT", *,
                       category_id: str | None = None, private: bool = False) -> dict[str, Any]:
        """Create a channel; returns the Channel record (broadcasts ``server:channels_updated``).

        Args:
            server_id: The server.
            name: The channel's name.
            type: ``"TEXT"`` or ``"VOICE"``.
            category_id: Its category, or None.
            private: A private channel: only the owner and ADMINISTRATOR members see it until
                an override (:meth:`set_override`) lets others in.

        Raises:
            ValueError: A bad name, type, category or ``private``. LookupError: Unknown server.
        """
        body: dict[str, Any] = {"name": name, "type": type}
        if category_id is not None:
            body["categoryId"] = category_id
        if private:
            body["isPrivate"] = private
        return self._call(lambda c: c.ops.channels.create_channel(server_id, body))

    def add_member(self, server_id: str, user_id: str, *,
                   role_ids: list[str] | None = None) -> dict[str, MemberRecord]:
        """Add a user to a server (``server:joined`` to it, ``server:member_add`` to the server room).

        Returns:
            ``{"member": MemberRecord}``.
        """
        return cast("dict[str, MemberRecord]", self._call(lambda c: c.ops.members.add_member(server_id, user_id, role_ids)))

    def remove_member(self, server_id: str, user_id: str) -> bool:
        """Remove a member (kick semantics: ``server:member_removed`` and ``server:you_removed``)."""
        return self._call(lambda c: c.ops.members.remove_member(server_id, user_id))

    def kick(self, server_id: str, user_id: str) -> None:
        """Kick a member as the server's owner would with ``server:kick``: the member is removed
        (``server:member_removed`` with reason ``kicked`` to the server room,
        ``server:you_removed`` to it) and the audit log gets ``MEMBER_KICK``.

        Raises:
            LookupError: Unknown server, or the user is not a member. ValueError: The user is
                the owner.
        """
        self._call(lambda c: c.ops.members.kick(server_id, user_id))

    def leave_server(self, server_id: str, user_id: str) -> None:
        """Make a member leave a server as its ``POST /servers/{sid}/leave`` would
        (``server:you_left`` to it, ``server:member_remove`` to the server room).

        Raises:
            LookupError: Unknown server, or the user is not a member. ValueError: The user is
                the owner, who cannot leave.
        """
        async def run(c: EmulatorCore) -> None:
            """The control step, run on the emulator's event loop."""
            if c.store.servers.server_row(server_id)["owner_id"] == user_id:
                raise BadRequest("servers.errors.owner_cannot_leave")
            await c.ops.members.leave_server(server_id, user_id)
        self._call(run)

    def update_member(self, server_id: str, user_id: str, *, roles: list[str] | None = None,
                      nickname: Any = ...) -> MemberRecord:
        """Replace a member's roles (ids) and/or nickname; broadcasts ``server:member_update``.
        Returns the :class:`MemberRecord`."""
        fields: dict[str, Any] = {}
        if roles is not None:
            fields["roles"] = roles
        if nickname is not ...:
            fields["nickname"] = nickname

        async def run(c: EmulatorCore) -> MemberRecord:
            """The control step, run on the emulator's event loop."""
            await c.ops.members.update_member(server_id, user_id, fields)
            return cast(MemberRecord, c.store.members.member(server_id, user_id))
        return self._call(run)

    def change_member_role(self, server_id: str, user_id: str, role_id: str, *, add: bool) -> bool:
        """Give a member one role (``add=True``) or take one from it, in one step on the
        emulator's loop: two threads changing a member's roles at once lose no change.
        Broadcasts ``server:member_update`` when something changed.

        Args:
            server_id: The server.
            user_id: The member's user id.
            role_id: The role (not ``@everyone``).
            add: True to give the role, False to take it.

        Returns:
            True when the roles changed; False when the member had the role already
            (``add=True``) or did not have it (``add=False``): nothing changed, no event.

        Raises:
            LookupError: Not a member, or an unknown server.
            ValueError: ``role_id`` is not a role of the server.
        """
        async def run(c: EmulatorCore) -> bool:
            """The control step: read and write the member's roles with no await between."""
            member = c.store.members.member(server_id, user_id)
            held = [r["publicId"] for r in member["roles"] if not (r["position"] == 0 and r["name"] == "@everyone")]
            if (role_id in held) == add:
                return False
            roles = [*held, role_id] if add else [r for r in held if r != role_id]
            await c.ops.members.update_member(server_id, user_id, {"roles": roles})
            return True
        return self._call(run)

    def create_role(self, server_id: str, name: str, permissions: int | str = 0, *, color: str | None = None,
                    hoist: bool = False) -> dict[str, RoleRecord]:
        """Create a role (``permissions`` int or decimal string). Returns ``{"role": RoleRecord}``."""
        return cast("dict[str, RoleRecord]", self._call(
            lambda c: c.ops.members.create_role(server_id, name, permissions, color=color, hoist=hoist)))

    def roles(self, server_id: str) -> list[RoleRecord]:
        """A server's roles (``@everyone`` included), by position. Raises LookupError for an unknown server."""
        async def run(c: EmulatorCore) -> list[RoleRecord]:
            """The control step, run on the emulator's event loop."""
            c.store.servers.server_row(server_id)
            return cast("list[RoleRecord]", c.store.members.roles(server_id))
        return self._call(run)

    def channels(self, server_id: str) -> list[dict[str, Any]]:
        """A server's channel records, categorised first (in category order), then uncategorised.
        Raises LookupError for an unknown server."""
        return self._call(lambda c: _value(c.store.channels.channels_of(server_id)))

    def update_role(self, server_id: str, role_id: str, **fields: Any) -> dict[str, Any]:
        """Change a role (``name``, ``color``, ``hoist``, ``permissions``, ``position``); returns the Role."""
        return self._call(lambda c: c.ops.members.update_role(server_id, role_id, fields))

    def delete_role(self, server_id: str, role_id: str) -> None:
        """Delete a role; broadcasts ``server:role_delete``."""
        self._call(lambda c: c.ops.members.delete_role(server_id, role_id))

    def reorder_roles(self, server_id: str, role_ids: list[str]) -> list[dict[str, Any]]:
        """Give roles positions 1.. in the given order; broadcasts ``server:roles_order_update``."""
        return self._call(lambda c: c.ops.members.reorder_roles(server_id, role_ids))

    def create_invite(self, server_id: str, channel_id: str | None = None, inviter_id: str | None = None, *,
                      max_age: int | None = None, max_uses: int | None = None) -> dict[str, Any]:
        """Create an invite (``max_age`` seconds). Returns ``{"invite": ServerInvite}``."""
        return self._call(lambda c: c.ops.invites.create_invite(server_id, channel_id, inviter_id, max_age=max_age,
                                                                max_uses=max_uses))

    def open_dm(self, user_id: str, other_id: str) -> dict[str, Any]:
        """Open the DM between two users (as ``user_id``); returns the DM record from its side."""
        return self._call(lambda c: c.ops.channels.open_dm(user_id, other_id))

    def dm_channel(self, user_id: str, other_id: str) -> str | None:
        """The id of the DM channel between two users, or None when it was never opened.

        Opens nothing and sends nothing (unlike :meth:`open_dm`).
        """
        return self._call(lambda c: _value(c.store.channels.dm_channel_id(user_id, other_id)))

    def id_mark(self) -> str:
        """An id that orders everything by when it was stored: every id the emulator gave out
        before this call is smaller, every id it gives out later is larger (compare them as
        integers). A test takes a mark before an action, then knows a message whose
        ``publicId`` is larger was stored after the mark. Stores nothing.
        """
        return self._call(lambda c: _value(c.store.db.new_id()))

    # ------------------------------------------------------------------ messages
    def post_message(self, channel_id: str, author_id: str, content: str, *,
                     embeds: list[dict[str, Any]] | None = None) -> dict[str, MessageRecord]:
        """Store and deliver a message as ``author_id`` (as a socket send would).
        Returns ``{"message": MessageRecord}``."""
        return cast("dict[str, MessageRecord]",
                    self._call(lambda c: c.ops.messages.post_message(channel_id, author_id, content, embeds)))

    def post_messages(self, channel_id: str, author_id: str, contents: list[str]) -> int:
        """Store many messages in one transaction and deliver them in order; returns the count."""
        return self._call(lambda c: c.ops.messages.post_messages(channel_id, author_id, list(contents)))

    def messages(self, channel_id: str, *, decoded: bool = False) -> list[MessageRecord]:
        """Every stored :class:`MessageRecord` of a channel, chronological.

        Args:
            channel_id: The channel (or DM) id.
            decoded: False (default): the records as the service sends them,
                ``content`` escaped (``&`` ``<`` ``>`` as ``&amp;`` ``&lt;``
                ``&gt;``). True: copies whose ``content`` is the text as typed
                (what ``Message.content`` holds on the client side).

        Raises:
            LookupError: Unknown channel.
        """
        records = cast("list[MessageRecord]", self._call(lambda c: c.messages(channel_id)))
        if not decoded:
            return records
        out: list[MessageRecord] = []
        for record in records:
            copy = record.copy()
            if isinstance(copy.get("content"), str):
                copy["content"] = decode_content(copy["content"])
            out.append(copy)
        return out

    def ban(self, server_id: str, user_id: str, *, reason: str | None = None) -> None:
        """Ban a user as the server's owner would with ``server:ban`` (member removed, reason
        ``banned``, ``server:you_removed``).

        Raises:
            LookupError: Unknown server or user. ValueError: Already banned, the owner, bad reason.
        """
        self._call(lambda c: c.ops.members.ban(server_id, user_id, reason))

    def unban(self, server_id: str, user_id: str) -> None:
        """Lift a ban (``server:ban_revoked``). Raises LookupError / ValueError (not banned)."""
        self._call(lambda c: c.ops.members.unban(server_id, user_id))

    def bans(self, server_id: str) -> list[dict[str, Any]]:
        """Return the Ban records of a server ``[{publicId, reason, createdAt, user}]``, oldest first."""
        return self._call(lambda c: _value(c.store.members.bans(server_id)))

    def react(self, message_id: str, user_id: str, emoji: str) -> bool:
        """Toggle ``user_id``'s ``emoji`` reaction on a message as a ``message:react`` would;
        broadcasts the ``message:reaction`` snapshot. Returns True when added, False when removed.

        Raises:
            LookupError: Unknown message or user. PermissionError: The user may not react there.
            ValueError: Bad emoji.
        """
        return self._call(lambda c: c.react(message_id, user_id, emoji))

    def reactions(self, message_id: str) -> list[dict[str, Any]]:
        """Return the stored reaction list of a message (the ``message:reaction`` snapshot form)."""
        return self._call(lambda c: _value(c.store.messages.reactions(message_id)))

    def pins(self, channel_id: str) -> list[MessageRecord]:
        """Return a channel's pinned messages, most recently pinned first."""
        return cast("list[MessageRecord]", self._call(lambda c: _value(c.store.messages.pins(channel_id))))

    def snapshot(self) -> dict[str, Any]:
        """Return the whole stored state, for before/after comparisons (a refused request changes nothing).

        Returns:
            ``{"tables": {table: [[column values...]] sorted}, "voice": {channel id: {user id:
            voice user without joinedAt}}}``; two snapshots are equal when nothing changed.
        """
        return self._call(lambda c: c.snapshot())

    # ------------------------------------------------------------------ presence and voice
    def set_presence(self, user_id: str, status: str) -> None:
        """Set a user's status and broadcast ``presence:update``."""
        if status not in ("online", "idle", "dnd", "invisible"):
            raise ValueError("status must be online, idle, dnd or invisible")
        self._call(lambda c: c.rt.presence_events.set_presence(user_id, status))

    def set_activity(self, user_id: str, activity: dict[str, Any] | None) -> None:
        """Set (or clear with None) a user's activity and broadcast ``activity:update``."""
        self._call(lambda c: c.rt.presence_events.set_activity(user_id, activity))

    def presence(self, user_id: str) -> dict[str, Any]:
        """Return ``{"status", "activity"}`` as stored for a user."""
        async def run(c: EmulatorCore) -> dict[str, Any]:
            """The control step, run on the emulator's event loop."""
            return {"status": c.store.users.user(user_id, viewer=user_id)["status"], "activity": c.store.users.activity(user_id)}
        return self._call(run)

    def voice_join(self, user_id: str, channel_id: str) -> bool:
        """Make a user join a voice channel (credentials to its user room); False if refused."""
        return self._call(lambda c: c.rt.voice_events.voice_join(user_id, channel_id))

    def voice_leave(self, user_id: str) -> bool:
        """Make a user leave voice; False if it was in none."""
        return self._call(lambda c: c.rt.voice_events.voice_leave(user_id))

    def voice_state(self, user_id: str, **changes: Any) -> bool:
        """Change a user's voice state (``muted=True`` ...); False if not in voice."""
        return self._call(lambda c: c.rt.voice_events.voice_state(user_id, changes))

    def voice_users(self, channel_id: str) -> list[dict[str, Any]]:
        """Return the voice users of a channel."""
        async def run(c: EmulatorCore) -> list[dict[str, Any]]:
            """The control step, run on the emulator's event loop."""
            return [dict(u) for u in c.rt.voice.get(channel_id, {}).values()]
        return self._call(run)

    @property
    def media_available(self) -> bool:
        """Whether the media server runs (the voice extra is installed): voice credentials
        then point at it, and :meth:`voice_speak` and :meth:`voice_recording` work."""
        return self.core is not None and self.core.rt.media is not None

    def voice_speak(self, user_id: str, channel_id: str, *, tone_hz: float | None = None,
                    seconds: float = 1.0, wav: bytes | None = None) -> float:
        """Make a user in a voice channel speak into its media: a sine tone or a WAV file.

        The user needs no media connection of its own: the media server joins it as a
        simulated participant whose microphone everyone in the channel's media hears. Speech
        queues after what the user is still saying.

        Args:
            user_id: A user in the voice channel (:meth:`voice_join`).
            channel_id: The voice channel.
            tone_hz: A sine tone's frequency, Hz (20..20000), when ``wav`` is not given.
            seconds: The tone's duration, seconds.
            wav: A WAV file's bytes (any audio PyAV reads), resampled to 48 kHz mono.

        Returns:
            The seconds of speech queued for the user.

        Raises:
            BadRequest: The user is not in that channel, or a bad tone, duration or file.
            HTTPError: The media server is not running (no voice extra).
        """
        return self._call(lambda c: c.voice_speak(user_id, channel_id, tone_hz=tone_hz, seconds=seconds, wav=wav))

    def voice_recording(self, channel_id: str, user_id: str, *, seconds: float | None = None) -> bytes:
        """What a participant published in a voice channel's media (what the others heard), as
        48 kHz mono 16-bit PCM: the last ``seconds`` (at most 30 s are kept), or all kept.

        Empty when the participant published nothing there.

        Raises:
            HTTPError: The media server is not running (no voice extra).
        """
        async def run(c: EmulatorCore) -> bytes:
            """The control step, run on the emulator's event loop."""
            recording = c.voice_recording(channel_id, user_id)
            return recording.last(seconds) if recording is not None else b""
        return self._call(run)

    def voice_frequency(self, channel_id: str, user_id: str, *, seconds: float = 0.5) -> float:
        """The dominant frequency (Hz, the FFT's highest peak) of the last ``seconds`` a
        participant published in a voice channel's media; 0.0 for silence or nothing heard.

        Raises:
            HTTPError: The media server is not running (no voice extra).
        """
        async def run(c: EmulatorCore) -> float:
            """The control step, run on the emulator's event loop."""
            recording = c.voice_recording(channel_id, user_id)
            if recording is None or recording.total_samples < int(seconds * 48000):
                return 0.0
            return float(c.rt.media.frequency(recording.last(seconds)))
        return self._call(run)

    def media_participants(self, channel_id: str) -> list[str]:
        """The user ids in a voice channel's media (connected or simulated); empty without the extra."""
        async def run(c: EmulatorCore) -> list[str]:
            """The control step, run on the emulator's event loop."""
            return c.rt.media.participants(channel_id) if c.rt.media is not None else []
        return self._call(run)

    # ------------------------------------------------------------------ sockets
    def connection_count(self) -> int:
        """Number of connected (authenticated) socket.io clients."""
        return self._call(lambda c: _value(c.rt.connection_count()))

    def drop_transport(self, user_id: str | None = None) -> int:
        """Close matching sockets abruptly at the transport level (no close packet); returns how many."""
        return self._call(lambda c: c.rt.connection_events.drop(user_id))

    def server_disconnect(self, user_id: str | None = None) -> int:
        """Send socket.io DISCONNECT to matching sockets; returns how many."""
        return self._call(lambda c: c.rt.connection_events.server_disconnect(user_id))

    def emit(self, event: str, payload: Any, *, to_user: str | None = None, to_server: str | None = None,
             to_channel: str | None = None) -> None:
        """Send a raw event to a user, a server room, a channel room, or (none given) every socket."""
        self._call(lambda c: c.ops.extras.emit(event, payload, to_user=to_user, to_server=to_server,
                                               to_channel=to_channel))

    def emits(self) -> list[EmitRecord]:
        """The emit journal: the client emits received, :class:`EmitRecord` ``{event, payload,
        userId, at}`` entries, oldest first; the newest ``journal_entries`` of them, each payload
        cut to ``journal_body_bytes`` (see :meth:`configure`)."""
        return cast("list[EmitRecord]", self._call(lambda c: _value(c.rt.journal.entries())))

    def typing(self, user_id: str, channel_id: str, *, stop: bool = False) -> None:
        """Make a user start (or, with ``stop``, stop) typing in a channel, as its socket's
        ``typing:start`` / ``typing:stop`` would: the event goes to the channel's room.

        Raises:
            LookupError: Unknown user or channel. PermissionError: The user may not view the
                channel.
        """
        self._call(lambda c: c.rt.message_events.typing_as(user_id, channel_id, stop=bool(stop)))

    # ------------------------------------------------------------------ server extras
    def set_vanity_code(self, server_id: str, code: str | None) -> None:
        """Give a server a vanity invite code (None removes it), as ``GET /servers/{sid}/vanity`` shows.

        Raises:
            LookupError: Unknown server. ValueError: The code is not 2 to 32 characters of
                ``[A-Za-z0-9-]``, or another server uses it.
        """
        if code is not None and (not isinstance(code, str) or not 2 <= len(code) <= 32
                                 or not all(ch.isascii() and (ch.isalnum() or ch == "-") for ch in code)):
            raise ValueError("code must be 2 to 32 characters of letters, digits and dashes, or None")
        async def run(c: EmulatorCore) -> None:
            """The control step, run on the emulator's event loop."""
            c.store.servers.set_vanity_code(server_id, code)
        self._call(run)

    def set_profile(self, user_id: str, **fields: Any) -> dict[str, Any]:
        """Set profile fields of a user (``banner``, ``bannerColor``, ``bio`` as str or None;
        ``followersCount``, ``followingCount``, ``mutualFriendsCount`` as ints >= 0); returns the
        profile as ``GET /users/{uid}/profile`` shows it.

        Raises:
            LookupError: Unknown user. ValueError: An unknown field or a value of the wrong type.
        """
        for key, value in fields.items():
            if key not in PROFILE_FIELDS:
                raise ValueError(f"unknown profile field {key!r}")
            if key.endswith("Count"):
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise ValueError(f"{key} must be an int >= 0")
            elif value is not None and not isinstance(value, str):
                raise ValueError(f"{key} must be a str or None")
        return self._call(lambda c: _value(c.store.users.set_profile(user_id, fields)))

    def audit_log(self, server_id: str, *, limit: int = 100, action: str | None = None) -> list[dict[str, Any]]:
        """Return a server's newest audit log entries (AuditEntry records), newest first."""
        return self._call(lambda c: _value(c.store.extras.audit_logs(server_id, limit, action)))

    def webhooks(self, channel_id: str) -> list[dict[str, Any]]:
        """Return a channel's webhooks (without tokens), oldest first."""
        return self._call(lambda c: _value(c.store.extras.webhooks(channel_id)))

    def emojis(self, server_id: str) -> list[dict[str, Any]]:
        """Return a server's custom emojis, oldest first."""
        return self._call(lambda c: _value(c.store.extras.emojis(server_id)))
    # ------------------------------------------------------------------ permission overwrites
    def create_category(self, server_id: str, name: str) -> dict[str, Any]:
        """Create a category; returns its record (broadcasts ``server:categories_updated``)."""
        return self._call(lambda c: c.ops.channels.create_category(server_id, name))

    def set_override(self, scope_id: str, target_id: str, type: str, *, allow: int | str = 0,
                     deny: int | str = 0) -> bool:
        """Create or replace the override of a role (``type="ROLE"``) or member (``"MEMBER"``) on a
        channel or category, as a manager would; channel rooms follow at once. True when created.

        Raises:
            ValueError: A bad target, type or bitfield. LookupError: Unknown channel or category.
        """
        body = {"targetId": target_id, "type": type, "allow": str(allow), "deny": str(deny)}
        return self._call(lambda c: c.ops.channels.set_override(scope_id, body))

    def overrides(self, scope_id: str) -> list[dict[str, Any]]:
        """The Override records ``{id, type, targetId, targetName, allow, deny}`` of a channel or category."""
        return self._call(lambda c: _value(c.store.channels.overrides(scope_id)))

    def can_view(self, channel_id: str, user_id: str) -> bool:
        """Whether a user may view a channel now (overrides and ``isPrivate`` applied)."""
        return self._call(lambda c: _value(c.store.channels.can_view(channel_id, user_id)))

    def channel_ids_of_rooms(self, user_id: str) -> set[str]:
        """The channel ids whose socket room holds at least one socket of ``user_id``."""
        async def run(c: EmulatorCore) -> set[str]:
            """The control step, run on the emulator's event loop."""
            out: set[str] = set()
            for sid in c.rt.sids_of(user_id):
                out.update(room[2:] for room in c.rt.sio.rooms(sid, "/") if room.startswith("c:"))
            return out
        return self._call(run)


async def _value(value: T) -> T:
    return value
