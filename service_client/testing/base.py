"""The core of a test world: its users, channels and roles, its clients, the marks that order
what happened, and the report a failed expectation prints.

:class:`WorldBase` is the base of :class:`~service_client.testing.world.BotWorld` (the world's one base; its
actions and its clock are parts it holds). The emulator is only named in annotations here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, TypeVar

from ..client import Client, ClientState
from ..models.message import Message
from .handles import WorldObject, WorldRole, WorldUser
from .listener_errors import ListenerErrors
from .recorder import Recorder, Taken

if TYPE_CHECKING:  # pragma: no cover - annotations only: the plugin loads without the emulator extra
    from ..emulator import CreatedUser, Emulator

__all__ = ["EVENT_TIMEOUT_S", "LOGIN_TIMEOUT_S", "REPORT_MESSAGES", "WorldBase"]

#: Seconds a login of the bot or of a speaking user may take.
LOGIN_TIMEOUT_S = 15.0
#: Seconds an action waits by default for the bot's listeners of the event it caused.
EVENT_TIMEOUT_S = 10.0
#: How many of a channel's newest messages a failed expectation shows.
REPORT_MESSAGES = 5


_Named = TypeVar("_Named", WorldUser, WorldObject, WorldRole)


def _named(items: list[_Named], name_or_id: str, kind: str) -> _Named:
    """The item with this name, else with this id.

    Raises:
        LookupError: None; the text lists the names known.
    """
    for item in items:
        if item.name == name_or_id:
            return item
    for item in items:
        if item.id == name_or_id:
            return item
    raise LookupError(f"no {kind} {name_or_id!r} in this world; known: {', '.join(i.name for i in items)}")


class WorldBase:
    """The users, objects, clients, marks and reports of a
    :class:`~service_client.testing.world.BotWorld` (see there).

    Args:
        emulator: A running emulator, freshly reset.
        listener_errors: The test's listener error record, shown when an expectation fails.

    Attributes:
        emulator: The running :class:`~service_client.emulator.Emulator`.
        event_timeout: Seconds an action waits for the bot's listeners of the event it caused
            (default 10); raise it for a bot whose listeners take longer.
    """

    server: WorldObject
    owner: WorldUser
    bot: WorldUser

    def __init__(self, emulator: Emulator, *, listener_errors: ListenerErrors | None = None) -> None:
        self.emulator: Emulator = emulator
        self._listener_errors = listener_errors
        self._lock = threading.Lock()
        self._users: list[WorldUser] = []
        self._objects: list[WorldObject] = []
        self._clients: dict[str, Future[Client]] = {}
        self._made: list[Client] = []
        self._recorders: dict[int, Recorder] = {}
        self._taken = Taken()
        self._bot_client: Client | None = None
        self._bot_factory: Callable[..., Client] | None = None
        self._last_said: Message | None = None
        self._action_mark = 0  # the id mark taken when the last action began
        self._last_action = "none yet"
        self._labels: dict[str, str] = {}
        self._closed = False
        self.event_timeout = EVENT_TIMEOUT_S

    def _new_user(self, name: str, *, bot: bool = False) -> WorldUser:
        created: CreatedUser = self.emulator.create_user(name, bot=bot)
        user = WorldUser(created)
        with self._lock:
            self._users.append(user)
        return user

    def _add(self, kind: str, record: Any) -> WorldObject:
        obj = WorldRole(record) if kind == "role" else WorldObject(kind, record)
        with self._lock:
            self._objects.append(obj)
        return obj

    def _add_role(self, record: Any) -> WorldRole:
        role = WorldRole(record)
        with self._lock:
            self._objects.append(role)
        return role

    def user(self, name_or_id: str) -> WorldUser:
        """The world's user with this name (else this id).

        Raises:
            LookupError: No such user in this world.
        """
        with self._lock:
            users = list(self._users)
        return _named(users, name_or_id, "user")

    def channel(self, name_or_id: str) -> WorldObject:
        """The channel of the world's server with this name (else this id).

        The seeded channels, those of :meth:`create_channel`, and any other channel of the server
        however it was made (by the bot, through the emulator's control plane): a name the world
        does not know yet is looked up in the emulator, and remembered.

        Raises:
            LookupError: The server has no such channel.
        """
        return self._find("channel", name_or_id)

    def role(self, name_or_id: str) -> WorldRole:
        """The role of the world's server with this name (else this id).

        The seeded roles, those of :meth:`create_role`, and any other role of the server however
        it was made (by the bot, through the emulator's control plane): a role the world does
        not know yet is looked up in the emulator, and remembered.

        Raises:
            LookupError: The server has no such role.
        """
        found = self._find("role", name_or_id)
        assert isinstance(found, WorldRole)
        return found

    def _find(self, kind: str, name_or_id: str) -> WorldObject:
        with self._lock:
            objects = [o for o in self._objects if o.kind == kind]
        try:
            return _named(objects, name_or_id, kind)
        except LookupError as unknown:
            found = self._look_up(kind, name_or_id)
            if found is None:
                raise unknown from None
            return found

    def _look_up(self, kind: str, name_or_id: str) -> WorldObject | None:
        """A channel or role of the server that the world did not make, from the emulator (by
        name, else id), added to the world's objects; None when the server has none such."""
        server = vars(self).get("server")
        if not isinstance(server, WorldObject):
            return None  # still seeding
        records = self.emulator.roles(server.id) if kind == "role" else self.emulator.channels(server.id)
        match = next((r for r in records if r.get("name") == name_or_id), None) or \
            next((r for r in records if r.get("publicId") == name_or_id), None)
        if match is None:
            return None
        with self._lock:
            for obj in self._objects:  # another thread added it meanwhile
                if obj.kind == kind and obj.id == match["publicId"]:
                    return obj
        return self._add(kind, match)

    def _role_id(self, role: Any) -> str:
        if isinstance(role, WorldObject):
            return role.id
        if isinstance(role, str):
            return self.role(role).id
        ident = getattr(role, "id", None)  # a service_client.Role the bot holds
        if isinstance(ident, str) and ident:
            return self.role(ident).id
        raise TypeError(f"a role must be a WorldRole, a Role or a role name or id, got {type(role).__name__}")

    def _channel_id(self, channel: Any) -> str:
        if isinstance(channel, str):
            if not channel:
                raise ValueError("channel must not be empty")
            try:
                return self.channel(channel).id
            except LookupError as not_seeded:
                # A channel this world did not make (a DM, a channel made by the bot) is fine if
                # the emulator knows its id; a misspelt name is not, and would only time out later.
                with self._lock:
                    known = channel in self._labels
                if not known:
                    try:
                        self.emulator.messages(channel)
                    except LookupError:
                        raise LookupError(f"{not_seeded.args[0]} (and no channel has that id)") from None
                    with self._lock:
                        self._labels.setdefault(channel, f"channel {channel}")
                return channel
        ident = channel.get("publicId") if isinstance(channel, dict) else getattr(channel, "id", None)
        if isinstance(ident, str) and ident:
            return ident
        raise TypeError(
            "channel must be a channel name or id, a WorldObject, a Channel or a channel record, "
            f"got {type(channel).__name__}"
        )

    def _speaker(self, as_user: Any) -> WorldUser:
        if as_user is None:
            return self.owner
        if isinstance(as_user, WorldUser):
            return as_user
        if isinstance(as_user, str):
            return self.user(as_user)
        ident = getattr(as_user, "id", None)
        if isinstance(ident, str):
            return self.user(ident)
        raise TypeError(f"a user must be a WorldUser, a user name or id, got {type(as_user).__name__}")

    def _bot_id(self) -> str | None:
        """The bot's user id; None while the world is seeding, before the bot exists."""
        bot = vars(self).get("bot")
        return bot.id if isinstance(bot, WorldUser) else None

    def _label(self, channel_id: str) -> str:
        """``#general``, ``the DM of carol and testbot`` or ``channel <id>``, for failure texts."""
        with self._lock:
            for obj in self._objects:
                if obj.kind == "channel" and obj.id == channel_id:
                    return f"#{obj.name}"
            return self._labels.get(channel_id, f"channel {channel_id}")

    # -- the clients ----------------------------------------------------------------------------

    def attach_bot(self, client: Client, *, factory: Callable[..., Client] | None = None) -> None:
        """Hand the bot's client to the world; the ``bot_client`` fixture does it before login.

        From then on the world records every message and reaction that client receives (its
        own messages included, echoed back to it), which is what
        ``expect_message(..., since="start")`` and :meth:`expect_dm` read, and every action
        waits until the bot's listeners of the event it caused have run. Hand it over before
        ``login()`` to record what the bot does in its ``ready`` listener.

        Args:
            client: The bot's :class:`~service_client.Client` (logged in as :attr:`bot`, or
                about to be). The world does not destroy it.
            factory: What made ``client``, called as ``factory(base_url=..., socket_url=...)``
                and returning a new :class:`~service_client.Client`, not logged in: what
                :meth:`~service_client.testing.world.BotWorld.restart_bot` calls to build the
                bot again. The ``bot_client`` fixture passes its ``bot_factory``.

        Raises:
            TypeError: ``client`` is not a :class:`~service_client.Client`, or ``factory`` is
                not callable.
            ValueError: Another client was handed over already.
        """
        if not isinstance(client, Client):
            raise TypeError(f"attach_bot() takes a service_client.Client, got {type(client).__name__}")
        if factory is not None and not callable(factory):
            raise TypeError(f"factory must be callable or None, got {type(factory).__name__}")
        with self._lock:
            if self._bot_client is client:
                if factory is not None:
                    self._bot_factory = factory
                return
            if self._bot_client is not None:
                raise ValueError("this BotWorld already has the bot's client (attach_bot() was called before; "
                                 "restart_bot() builds it again)")
            recorder = Recorder()
            self._bot_client = client
            self._bot_factory = factory
            self._recorders[id(client)] = recorder
        recorder.attach(client)

    @property
    def bot_client(self) -> Client | None:
        """The bot's client handed to the world (:meth:`attach_bot`), or None."""
        with self._lock:
            return self._bot_client

    def _watching_bot(self) -> Client | None:
        """The bot's client when the world should wait for its listeners: handed over and not
        destroyed (a bot reconnecting is waited for: a missed event fails the action)."""
        bot = self.bot_client
        if bot is None or bot.state not in (ClientState.READY, ClientState.CONNECTING):
            return None
        return bot

    def clients(self) -> list[Client]:
        """The clients this world has made so far: one per user it acted as (a copy).

        The bot's own client is not among them: the ``bot_client`` fixture makes that one.
        """
        with self._lock:
            return list(self._made)

    def client_for(self, user: WorldUser | str) -> Client:
        """The logged-in :class:`~service_client.Client` of a user of the world (made on first use).

        It records every message and reaction it receives from the moment it is made, which is
        what :meth:`expect_reply` reads. Destroyed at the fixture's teardown.

        Raises:
            LookupError: An unknown user name.
            ServiceError: The login failed.
            RuntimeError: The world was torn down.
        """
        speaker = self._speaker(user)
        with self._lock:
            if self._closed:
                raise RuntimeError("this BotWorld was torn down")
            pending = self._clients.get(speaker.id)
            owner = pending is None
            if pending is None:
                pending = self._clients[speaker.id] = Future()
        if not owner:
            return pending.result(LOGIN_TIMEOUT_S + 5)
        try:
            client = Client(base_url=self.emulator.base_url, socket_url=self.emulator.socket_url, workers=1)
            recorder = Recorder()
            recorder.attach(client)
            with self._lock:
                self._recorders[id(client)] = recorder
                self._made.append(client)
            client.login(speaker.token.get() or "", timeout=LOGIN_TIMEOUT_S)
        except BaseException as exc:
            with self._lock:
                self._clients.pop(speaker.id, None)
            pending.set_exception(exc)
            raise
        pending.set_result(client)
        return client

    def _recorder_of(self, message: Message, helper: str) -> Recorder:
        with self._lock:
            recorder = self._recorders.get(id(message.client))
        if recorder is None:
            raise ValueError(f"{helper}() takes a message returned by say(), dm() or an expectation of this world")
        return recorder

    def _note_action(self, what: str) -> None:
        """Mark the start of an action: :meth:`expect_dm` counts what was stored after it."""
        mark = int(self.emulator.id_mark())
        with self._lock:
            self._action_mark = mark
            self._last_action = what

    # -- failure reports ------------------------------------------------------------------------

    def _reactions_now(self, message_id: str) -> str:
        try:
            found = self.emulator.reactions(message_id)
        except Exception as exc:  # noqa: BLE001 - a report must not fail
            return f"unknown ({type(exc).__name__})"
        return ", ".join(f"{r.get('emoji')} by {r.get('userName')}" for r in found) or "none"

    def _report(self, expected: str, channel_id: str | None) -> str:
        """The text of a failed expectation: what was expected, the last few messages of the
        channel (read from the emulator) and the listener errors so far."""
        lines = [expected]
        if channel_id:
            where = self._label(channel_id)
            try:
                stored = self.emulator.messages(channel_id, decoded=True)
            except Exception as exc:  # noqa: BLE001 - a report must not fail
                lines.append(f"the messages of {where} could not be read: {type(exc).__name__}: {exc}")
            else:
                shown = stored[-REPORT_MESSAGES:]
                more = f"last {len(shown)} of {len(stored)}" if len(stored) > len(shown) else "all"
                lines.append(f"messages in {where} ({more}, oldest first):" if stored else f"no message in {where}")
                for record in shown:
                    author = record.get("author")
                    lines.append(f"  {author['name'] if author else '?'}: {record.get('content')!r}")
        errors = self._listener_errors._brief() if self._listener_errors is not None else []
        lines.append("listener errors: none" if not errors else "listener errors:")
        lines.extend(f"  {line}" for line in errors)
        return "\n".join(lines)

    def close(self) -> None:
        """Destroy the users' clients made by :meth:`client_for` (the fixture does it at teardown).

        The bot's client handed over with :meth:`attach_bot` is left alone.
        """
        with self._lock:
            self._closed = True
            clients, self._made = self._made, []
        for client in clients:
            client.destroy()

    def __repr__(self) -> str:
        return (
            f"<BotWorld server={self.server.id!r} bot={self.bot.id!r} "
            f"users={[u.name for u in self._users]!r}>"
        )

