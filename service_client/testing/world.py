"""The seeded world of the pytest plugin's bot fixtures, and the way a test talks to the bot.

:class:`BotWorld` seeds a reset emulator with a server, users, roles and
channels, and gives each speaking user a logged-in client that records every
message it receives, so :meth:`BotWorld.say` and :meth:`BotWorld.expect_reply`
cannot miss a reply that comes at once. The fixtures of
:mod:`service_client.pytest_plugin` (``bot_world``, ``say``, ``expect_reply``,
``expect_message``)
hand these out; import the classes from ``service_client.pytest_plugin``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any

from .._secret import Secret
from ..client import Client
from ..models.message import Message

__all__ = ["LOGIN_TIMEOUT_S", "REPLY_TIMEOUT_S", "BotWorld", "ExpectedMessage", "WorldObject", "WorldUser"]

#: Seconds :meth:`BotWorld.expect_reply` waits by default.
REPLY_TIMEOUT_S = 10.0
#: Seconds a login of the bot or of a speaking user may take.
LOGIN_TIMEOUT_S = 15.0



def _summary(messages: list[Message]) -> str:
    """``"author: 'content'; ..."`` of ``messages`` for a failure text; ``"none"`` when empty."""
    return "; ".join(f"{m.author.username if m.author else None}: {m.content!r}" for m in messages) or "none"

class WorldUser:
    """A user seeded in a :class:`BotWorld`; its token is held as a secret.

    Attributes:
        id: The user's public id.
        name: The user's name.
        bot: True for the bot account.
        record: The User record the emulator returned (a dict).
    """

    __slots__ = ("id", "name", "bot", "record", "_token")

    def __init__(self, created: Mapping[str, Any]) -> None:
        record = dict(created["user"])
        self.id: str = record["publicId"]
        self.name: str = record["name"]
        self.bot: bool = bool(record.get("isBot"))
        self.record = record
        self._token = Secret(created["token"])

    @property
    def token(self) -> Secret:
        """The user's token, a :class:`~service_client._secret.Secret` (``token.get()`` gives the text)."""
        return self._token

    @property
    def mention(self) -> str:
        """The mention text ``<@id>``."""
        return f"<@{self.id}>"

    def __repr__(self) -> str:
        return f"<WorldUser id={self.id!r} name={self.name!r} bot={self.bot!r}>"


class WorldObject:
    """A server, channel or role seeded in a :class:`BotWorld`.

    Attributes:
        id: Its public id.
        name: Its name.
        kind: ``"server"``, ``"channel"`` or ``"role"``.
        record: The record the emulator returned (a dict).
    """

    __slots__ = ("id", "name", "kind", "record")

    def __init__(self, kind: str, record: Mapping[str, Any]) -> None:
        self.kind = kind
        self.record = dict(record)
        self.id: str = self.record["publicId"]
        self.name: str = self.record["name"]

    def __repr__(self) -> str:
        return f"<WorldObject kind={self.kind!r} id={self.id!r} name={self.name!r}>"


class _Recorder:
    """Every message a speaking user's client received, in arrival order (one channel's in order)."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.messages: list[Message] = []
        self.consumed: set[str] = set()

    def record(self, message: Message) -> None:
        """Keep ``message`` (a ``message_create`` listener, on the worker pool) and wake every waiter."""
        with self.cond:
            self.messages.append(message)
            self.cond.notify_all()


class ExpectedMessage:
    """A wait for the bot's next message in a channel, started by :meth:`BotWorld.expect_message`.

    Recording starts when the handle is made. :meth:`result` blocks until a matching message
    has arrived; as a context manager, the end of the ``with`` block waits for it (unless the
    block raised) so :meth:`result` returns at once after it. Thread-safe.
    """

    def __init__(
        self,
        recorder: _Recorder,
        start: int,
        channel_id: str,
        author: WorldUser,
        check: Callable[[Message], bool] | None,
        timeout: float,
    ) -> None:
        self._recorder = recorder
        self._start = start
        self._channel_id = channel_id
        self._author = author
        self._check = check
        self._timeout = timeout
        self._lock = threading.Lock()  # guards _message
        self._message: Message | None = None

    def result(self, timeout: float | None = None) -> Message:
        """The message: the first one of the bot in the channel since the handle was made.

        Args:
            timeout: Seconds to wait; default the ``timeout`` given to ``expect_message``.

        Returns:
            The :class:`~service_client.Message` as the watching client received it; the same
            one on every call.

        Raises:
            AssertionError: None came within the timeout (the text lists the messages seen in
                the channel meanwhile).
            ValueError: A bad ``timeout``.
            Exception: Whatever ``check`` raised.
        """
        wait = self._timeout if timeout is None else timeout
        if isinstance(wait, bool) or not isinstance(wait, (int, float)) or wait < 0:
            raise ValueError(f"timeout must be a non-negative number of seconds, got {wait!r}")
        recorder = self._recorder
        deadline = time.monotonic() + wait
        scanned = self._start
        seen: list[Message] = []
        while True:
            with self._lock:
                if self._message is not None:
                    return self._message
            with recorder.cond:
                fresh = recorder.messages[scanned:]
            scanned += len(fresh)
            # ``check`` is the caller's code: it runs with no lock held.
            for message in fresh:
                if message.channel_id != self._channel_id:
                    continue
                seen.append(message)
                if message.author is None or message.author.id != self._author.id:
                    continue
                if self._check is not None and not self._check(message):
                    continue
                with recorder.cond, self._lock:
                    if self._message is not None:
                        return self._message
                    if message.id not in recorder.consumed:
                        recorder.consumed.add(message.id)
                        self._message = message
                        return message
            with recorder.cond:
                if len(recorder.messages) > scanned:
                    continue
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    lines = _summary(seen)
                    raise AssertionError(
                        f"no message from {self._author.name} in channel {self._channel_id} within "
                        f"{wait:g} s (messages seen there meanwhile: {lines})"
                    )
                recorder.cond.wait(remaining)

    def __enter__(self) -> ExpectedMessage:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        if exc_type is None:
            self.result()

    def __repr__(self) -> str:
        state = "received" if self._message is not None else "waiting"
        return f"<ExpectedMessage channel={self._channel_id!r} author={self._author.name!r} {state}>"


class BotWorld:
    """A server with users, roles and channels on a reset emulator, and a way to talk to the bot.

    Built by the ``bot_world`` fixture. The seeded objects:

    ========================  =====================================================================
    ``server``                ``Test Server``, owned by ``alice``
    ``owner``                 ``alice``, the owner (every permission)
    ``moderator``             ``bob``, with the ``Moderator`` role (KICK_MEMBERS, BAN_MEMBERS,
                              MANAGE_MESSAGES)
    ``member``                ``carol``, no role (the server's default permissions)
    ``bot``                   ``testbot``, a bot account with the ``Bot`` role (the Moderator
                              permissions plus MANAGE_ROLES and MANAGE_CHANNELS)
    ``general``, ``random``   text channels in the category ``Text``
    ``voice``                 a voice channel, uncategorised
    ``moderator_role``,       the two roles
    ``bot_role``
    ========================  =====================================================================

    :meth:`user`, :meth:`channel` and :meth:`role` find them by name; :meth:`add_user` adds a
    member. Talking to the bot: :meth:`say` posts as a user through that user's own logged-in
    :class:`~service_client.Client` (made on first use, destroyed at teardown), and
    :meth:`expect_reply` returns the bot's answer. Both return :class:`~service_client.Message`
    objects, whose ``content`` is the text as typed (the service escapes ``& < >`` on the wire;
    ``emulator.messages(channel_id, decoded=True)`` reads stored messages the same way).

    Thread-safe.

    Attributes:
        emulator: The running :class:`~service_client.emulator.Emulator`.
    """

    #: Permissions of the ``Moderator`` role.
    MODERATOR_PERMISSIONS = (1 << 6) | (1 << 7) | (1 << 8)
    #: Permissions of the ``Bot`` role.
    BOT_PERMISSIONS = MODERATOR_PERMISSIONS | (1 << 1) | (1 << 2)

    def __init__(self, emulator: Any) -> None:
        self.emulator = emulator
        self._lock = threading.Lock()
        self._users: list[WorldUser] = []
        self._objects: list[WorldObject] = []
        self._clients: dict[str, Future[Client]] = {}
        self._made: list[Client] = []
        self._recorders: dict[int, _Recorder] = {}
        self._last_said: Message | None = None
        self._known_channel_ids: set[str] = set()
        self._closed = False

        owner = self._new_user("alice")
        made = emulator.create_server(
            "Test Server",
            owner.id,
            categories=[{"name": "Text", "channels": [{"name": "general", "type": "TEXT"},
                                                       {"name": "random", "type": "TEXT"}]}],
            channels=[{"name": "voice", "type": "VOICE"}],
        )
        self.server = self._add("server", made["server"])
        for channel in made["channels"]:
            self._add("channel", channel)
        self.moderator_role = self._add(
            "role", emulator.create_role(self.server.id, "Moderator", self.MODERATOR_PERMISSIONS)["role"])
        self.bot_role = self._add("role", emulator.create_role(self.server.id, "Bot", self.BOT_PERMISSIONS)["role"])
        self.owner = owner
        self.moderator = self.add_user("bob", roles=[self.moderator_role])
        self.member = self.add_user("carol")
        self.bot = self.add_user("testbot", bot=True, roles=[self.bot_role])
        self.general = self.channel("general")
        self.random = self.channel("random")
        self.voice = self.channel("voice")

    def _new_user(self, name: str, *, bot: bool = False) -> WorldUser:
        user = WorldUser(self.emulator.create_user(name, bot=bot))
        with self._lock:
            self._users.append(user)
        return user

    def _add(self, kind: str, record: Mapping[str, Any]) -> WorldObject:
        obj = WorldObject(kind, record)
        with self._lock:
            self._objects.append(obj)
        return obj

    # -- seeding and lookups ----------------------------------------------------------------------

    def add_user(self, name: str, *, bot: bool = False, roles: Any = ()) -> WorldUser:
        """Create a user and make it a member of the server.

        Args:
            name: The user's name.
            bot: Create a bot account.
            roles: Roles to give it: :class:`WorldObject` roles, role names or ids.

        Returns:
            The new :class:`WorldUser`.

        Raises:
            LookupError: A role name or id is unknown.
            ValueError: The emulator refused the name.
        """
        role_ids = [self._role_id(r) for r in roles]
        user = self._new_user(name, bot=bot)
        self.emulator.add_member(self.server.id, user.id, role_ids=role_ids or None)
        return user

    def user(self, name_or_id: str) -> WorldUser:
        """The seeded user with this name (else this id).

        Raises:
            LookupError: No such user in this world.
        """
        with self._lock:
            users = list(self._users)
        for user in users:
            if user.name == name_or_id:
                return user
        for user in users:
            if user.id == name_or_id:
                return user
        raise LookupError(f"no user {name_or_id!r} in this world; known: {', '.join(u.name for u in users)}")

    def channel(self, name_or_id: str) -> WorldObject:
        """The seeded channel with this name (else this id).

        Raises:
            LookupError: No such channel in this world.
        """
        return self._find("channel", name_or_id)

    def role(self, name_or_id: str) -> WorldObject:
        """The seeded role with this name (else this id).

        Raises:
            LookupError: No such role in this world.
        """
        return self._find("role", name_or_id)

    def _find(self, kind: str, name_or_id: str) -> WorldObject:
        with self._lock:
            objects = [o for o in self._objects if o.kind == kind]
        for obj in objects:
            if obj.name == name_or_id:
                return obj
        for obj in objects:
            if obj.id == name_or_id:
                return obj
        raise LookupError(f"no {kind} {name_or_id!r} in this world; known: {', '.join(o.name for o in objects)}")

    def _role_id(self, role: Any) -> str:
        if isinstance(role, WorldObject):
            return role.id
        if isinstance(role, str):
            return self.role(role).id
        raise TypeError(f"a role must be a WorldObject or a role name, got {type(role).__name__}")

    def _channel_id(self, channel: Any) -> str:
        if isinstance(channel, str):
            if not channel:
                raise ValueError("channel must not be empty")
            try:
                return self.channel(channel).id
            except LookupError as not_seeded:
                # A channel this world did not seed (a DM, a channel made later) is fine if the
                # emulator knows its id; a misspelt name is not, and would only time out later.
                with self._lock:
                    known = channel in self._known_channel_ids
                if not known:
                    try:
                        self.emulator.messages(channel)
                    except LookupError:
                        raise LookupError(f"{not_seeded.args[0]} (and no channel has that id)") from None
                    with self._lock:
                        self._known_channel_ids.add(channel)
                return channel
        ident = channel.get("publicId") if isinstance(channel, Mapping) else getattr(channel, "id", None)
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
        raise TypeError(f"as_user must be a WorldUser, a user name or id, got {type(as_user).__name__}")

    # -- talking to the bot ---------------------------------------------------------------------------

    def clients(self) -> list[Client]:
        """The clients this world has made so far: one per seeded user it spoke as (a copy).

        The bot's own client is not among them: the ``bot_client`` fixture makes that one.
        """
        with self._lock:
            return list(self._made)

    def client_for(self, user: WorldUser | str) -> Client:
        """The logged-in :class:`~service_client.Client` of a seeded user (made on first use).

        It records every message it receives from the moment it is made, which is what
        :meth:`expect_reply` reads. Destroyed at the fixture's teardown.

        Raises:
            LookupError: An unknown user name.
            ServiceError: The login failed.
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
            recorder = _Recorder()
            client.on("message_create", recorder.record)
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

    def say(self, channel: Any, text: str, *, as_user: WorldUser | str | None = None) -> Message:
        """Post ``text`` in a channel as a seeded user, through that user's own socket.

        Race-free with :meth:`expect_reply`: the user's client records every message it receives
        from before the post, so a reply that comes at once is not missed.

        Args:
            channel: A channel name of this world (``"general"``), a channel id (a DM's too), a
                :class:`WorldObject`, a :class:`~service_client.Channel` or a channel record.
            text: The text, as typed (the service escapes it on the wire).
            as_user: Who speaks: a :class:`WorldUser`, a user name or id; default ``alice``, the
                server's owner.

        Returns:
            The posted :class:`~service_client.Message` (as the service echoed it).

        Raises:
            TypeError, ValueError, LookupError: A bad channel or user.
            ServiceAuthError, TimeoutError: The send failed or was not echoed within 10 s.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        channel_id = self._channel_id(channel)
        client = self.client_for(self._speaker(as_user))
        message = client.send_message(channel_id, text)
        with self._lock:
            self._last_said = message
        return message

    def expect_reply(
        self, to: Message | None = None, *, timeout: float = REPLY_TIMEOUT_S, author: WorldUser | str | None = None
    ) -> Message:
        """The bot's next message in the channel of ``to``, after ``to``.

        Each call returns a message no earlier call returned, so two calls give the bot's first
        two messages after ``to``. A message the bot sent before ``to`` never counts. To check
        that the bot ignored a message, say another one it answers and expect that answer as the
        first reply to the first message::

            ignored = say("general", "!nope")
            say("general", "!ping")
            assert expect_reply(ignored).content == "Pong!"   # nothing came in between

        Args:
            to: A message returned by :meth:`say`; default the last one said.
            timeout: Seconds to wait.
            author: Whose message counts as the reply: a :class:`WorldUser`, name or id;
                default the world's bot.

        Returns:
            The reply, a :class:`~service_client.Message` as the speaker's client received it
            (``content`` decoded: the text as the bot sent it).

        Raises:
            AssertionError: No such message within ``timeout`` (the text lists the messages
                seen in that channel after ``to``).
            TypeError: ``to`` is not a :class:`~service_client.Message` (a channel, say: use
                :meth:`expect_message` for a message the bot posts on its own).
            ValueError: Nothing was said yet, or ``to`` was not returned by :meth:`say`.
        """
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
            raise ValueError(f"timeout must be a non-negative number of seconds, got {timeout!r}")
        if to is not None and not isinstance(to, Message):
            raise TypeError(
                f"expect_reply() takes a message returned by say(), got {type(to).__name__}; to wait "
                "for a message the bot posts in a channel on its own, use expect_message(channel)"
            )
        with self._lock:
            said = to if to is not None else self._last_said
        if said is None:
            raise ValueError("expect_reply() needs a message: nothing was said yet (use say() first)")
        recorder = self._recorders.get(id(said.client))
        if recorder is None:
            raise ValueError("expect_reply() takes a message returned by say()")
        replier = self.bot if author is None else self._speaker(author)
        deadline = time.monotonic() + timeout
        with recorder.cond:
            while True:
                seen: list[Message] = []
                found_said = False
                for message in recorder.messages:
                    if message.id == said.id:
                        found_said = True
                    elif found_said and message.channel_id == said.channel_id:
                        seen.append(message)
                        if (
                            message.author is not None
                            and message.author.id == replier.id
                            and message.id not in recorder.consumed
                        ):
                            recorder.consumed.add(message.id)
                            return message
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    lines = _summary(seen)
                    raise AssertionError(
                        f"no reply from {replier.name} to {said.content!r} within {timeout} s "
                        f"(messages after it in that channel: {lines})"
                    )
                recorder.cond.wait(remaining)

    def expect_message(
        self,
        channel: Any,
        *,
        timeout: float = REPLY_TIMEOUT_S,
        check: Callable[[Message], bool] | None = None,
        author: WorldUser | str | None = None,
        as_user: WorldUser | str | None = None,
    ) -> ExpectedMessage:
        """Start waiting for the next message the bot posts in a channel, with no :meth:`say` before.

        For what the bot sends on its own (a welcome when a member joins, a scheduled
        announcement). Call it *before* the action that makes the bot post: it marks the
        moment, and only messages arriving after it count, however soon they come. Use it as
        a context manager, which waits when the block ends, or keep the handle and call
        :meth:`ExpectedMessage.result`::

            with bot_world.expect_message("general") as got:
                bot_world.add_user("dave")                   # the bot welcomes dave
            assert got.result().content == "Welcome, dave!"

            pending = bot_world.expect_message("general", check=lambda m: "dave" in m.content)
            bot_world.add_user("dave")
            assert pending.result().content == "Welcome, dave!"

        Each handle returns one message, and a message is returned by one handle only: the
        first :meth:`ExpectedMessage.result` call takes the earliest matching message no
        other handle took. So two handles made before the action, asked in turn, return the
        bot's first two messages in order.

        Args:
            channel: A channel name of this world, a channel id, a :class:`WorldObject`, a
                :class:`~service_client.Channel` or a channel record.
            timeout: Seconds :meth:`ExpectedMessage.result` (and the end of the ``with`` block)
                waits, counted from the call of ``result`` (or the block's end).
            check: Only a message for which ``check(message)`` is true counts.
            author: Whose message counts: a :class:`WorldUser`, name or id; default the bot.
            as_user: Whose client watches the channel (it must see it); default ``alice``,
                the server's owner, who sees every channel of the server.

        Returns:
            An :class:`ExpectedMessage` handle, already recording.

        Raises:
            TypeError, ValueError, LookupError: A bad channel, user, ``timeout`` or ``check``
                (before anything is recorded).
            ServiceError: The watching user's client could not log in.
        """
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
            raise ValueError(f"timeout must be a non-negative number of seconds, got {timeout!r}")
        if check is not None and not callable(check):
            raise TypeError(f"check must be a callable or None, got {type(check).__name__}")
        channel_id = self._channel_id(channel)
        replier = self.bot if author is None else self._speaker(author)
        client = self.client_for(self._speaker(as_user))
        recorder = self._recorders[id(client)]
        with recorder.cond:
            start = len(recorder.messages)
        return ExpectedMessage(recorder, start, channel_id, replier, check, float(timeout))

    def close(self) -> None:
        """Destroy the users' clients made by :meth:`client_for` (the fixture does it at teardown)."""
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
