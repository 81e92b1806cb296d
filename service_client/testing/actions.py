"""What the people of a test world do: react, type, send the bot a DM, join, leave, get kicked,
banned, given or taken a role, and the owner making a channel.

:class:`WorldActions` is a part of :class:`~service_client.testing.world.BotWorld`: the world
builds it with itself and offers its public methods as its own. Each action drives the emulator as a person would (through the
user's own client for a DM, else the emulator's control plane, which fans the change out as the
service does), then, when the bot's client was handed to the world, waits until the bot's
listeners of the event it caused have run: a :class:`~.recorder.Probe` registered on the bot's
client just before the action is called after them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from ..events.catalog import EventName
from ..models.embed import parse_color
from ..models.message import Message
from ..permissions import Permissions, permissions_value
from .base import WorldBase
from .handles import WorldObject, WorldRole, WorldUser
from .recorder import Probe

__all__ = ["WorldActions"]

T = TypeVar("T")


def _message_id(message: Any) -> str:
    ident = message.get("publicId") if isinstance(message, dict) else getattr(message, "id", message)
    if isinstance(ident, str) and ident:
        return ident
    raise TypeError(f"message must be a Message, a message id or a message record, got {type(message).__name__}")


def _id_of(obj: Any, key: str) -> Any:
    """The id of a model (``obj.id``) or of a raw payload (``obj[key]``)."""
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, "id", None)


class WorldActions:
    """The actions of a :class:`~service_client.testing.world.BotWorld`'s people (see there),
    a part the world builds and offers as its own methods.

    Args:
        world: The world whose people act, whose emulator is driven and whose bot is waited for.
    """

    def __init__(self, world: WorldBase) -> None:
        """Act in ``world``."""
        self._world = world

    def _acting(
        self,
        what: str,
        event: EventName | None,
        matches: Callable[..., bool],
        act: Callable[[], T],
        channel_id: str | None = None,
    ) -> T:
        """Mark the action, run ``act``, then wait until the bot's client has called its
        listeners of ``event`` with arguments ``matches(result, *args)`` accepts (no wait when
        ``event`` is None or no bot client is watched).

        Raises:
            AssertionError: The bot's client did not get the event within
                :attr:`event_timeout` seconds (the text names the action and the event).
        """
        __tracebackhide__ = True
        self._world._note_action(what)
        bot = self._world._watching_bot() if event is not None else None
        if bot is None or event is None:
            return act()
        probe = Probe()
        bot.on(event, probe)
        try:
            result = act()
            if not probe.wait(lambda *args: matches(result, *args), self._world.event_timeout):
                raise AssertionError(self._world._report(
                    f"expected the bot's {event} listeners to run for: {what}, within {self._world.event_timeout:g} s; "
                    "the bot's client did not get that event (can the bot see it? is it still connected?)",
                    channel_id,
                ))
        finally:
            bot.off(event, probe)
        return result

    def _is_member(self, user: WorldUser) -> bool:
        try:
            self._world.emulator.member(self._world.server.id, user.id)
        except LookupError:
            return False
        return True

    def _depart(self, user: WorldUser | str, reason: str, what: Callable[[str], str],
                act: Callable[[str, str], None]) -> None:
        """``user`` goes with ``reason`` (``left``, ``kicked``, ``banned``) by ``act(server_id,
        user_id)``; the bot sees ``guild_member_remove`` (``guild_ban_add`` after it for a ban,
        waited for; ``guild_delete`` when it is the bot itself). ``what(name)`` describes the
        action done to the user called ``name``."""
        __tracebackhide__ = True
        target = self._world._speaker(user)
        sid = self._world.server.id
        event: EventName | None
        matches: Callable[..., bool]
        if reason == "banned" and not self._is_member(target):
            event, matches = None, (lambda *_args: True)               # no member: no event
        elif target.id == self._world.bot.id:
            event, matches = "guild_delete", (lambda _r, guild: _id_of(guild, "serverPublicId") == sid)
        elif reason == "banned":
            event, matches = "guild_ban_add", (lambda _r, data: data.get("memberPublicId") == target.id)
        else:
            event = "guild_member_remove"

            def matches(_r: Any, member: Any) -> bool:
                """True for the bot's event about this member leaving with this reason."""
                return bool(member.id == target.id and member.server_id == sid and member.reason == reason)

        self._acting(what(target.name), event, matches, lambda: act(sid, target.id))

    # -- messages ---------------------------------------------------------------------------------

    def say(self, channel: Any, text: str, *, as_user: WorldUser | str | None = None) -> Message:
        """Post ``text`` in a channel as a user of the world, through that user's own socket.

        Race-free with :meth:`expect_reply`: the user's client records every message it receives
        from before the post, so a reply that comes at once is not missed. Returns once the post
        was echoed; a bot's listener may still be handling it (:meth:`expect_reply` waits for the
        answer).

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
        channel_id = self._world._channel_id(channel)
        speaker = self._world._speaker(as_user)
        client = self._world.client_for(speaker)
        self._world._note_action(f"say({text!r}) as {speaker.name}")
        message = client.send_message(channel_id, text)
        with self._world._lock:
            self._world._last_said = message
        return message


    def react(self, message: Message | str, emoji: str, *, as_user: WorldUser | str | None = None) -> None:
        """A user adds a reaction to a message (the bot sees ``message_reaction_add``).

        Args:
            message: A :class:`~service_client.Message` (from :meth:`say`, an expectation or
                the bot), a message id or a message record.
            emoji: The emoji text (``"👍"``).
            as_user: Who reacts: a :class:`WorldUser`, a user name or id; default ``alice``.

        Raises:
            TypeError: A bad message, emoji or user.
            ValueError: That user already has that reaction on the message.
            LookupError: Unknown message or user. PermissionError: The user may not react there.
            AssertionError: The bot's client did not get the event within
                :attr:`event_timeout` seconds.
        """
        __tracebackhide__ = True
        self._reaction(message, emoji, as_user, add=True)

    def unreact(self, message: Message | str, emoji: str, *,
                as_user: WorldUser | str | None = None) -> None:
        """A user takes back its reaction (the bot sees ``message_reaction_remove``).

        Arguments and errors as :meth:`react`; ``ValueError`` when the user has no such reaction.
        """
        __tracebackhide__ = True
        self._reaction(message, emoji, as_user, add=False)

    def _reaction(self, message: Any, emoji: Any, as_user: Any, *, add: bool) -> None:
        __tracebackhide__ = True
        if not isinstance(emoji, str) or not emoji:
            raise TypeError(f"emoji must be a non-empty str, got {emoji!r}")
        mid = _message_id(message)
        user = self._world._speaker(as_user)
        has = any(r.get("userPublicId") == user.id and r.get("emoji") == emoji
                  for r in self._world.emulator.reactions(mid))
        if has == add:
            state = "already reacted" if add else "has not reacted"
            raise ValueError(f"{user.name} {state} {emoji} to message {mid}")
        channel_id = message.channel_id if isinstance(message, Message) else None
        verb = "reacts" if add else "takes back"
        self._acting(
            f"{user.name} {verb} {emoji} on message {mid}",
            "message_reaction_add" if add else "message_reaction_remove",
            lambda _r, info, who, message_id: (message_id == mid and who.id == user.id
                                               and info.get("emoji") == emoji),
            lambda: self._world.emulator.react(mid, user.id, emoji),
            channel_id,
        )

    def typing(self, channel: Any, *, as_user: WorldUser | str | None = None) -> None:
        """A user starts typing in a channel (the bot sees ``typing_start``).

        Args:
            channel: A channel name of this world, an id, a :class:`WorldObject`, a
                :class:`~service_client.Channel` or a channel record.
            as_user: Who types; default ``alice``.

        Raises:
            TypeError, ValueError, LookupError: A bad channel or user.
            PermissionError: The user may not view the channel.
            AssertionError: The bot's client did not get the event within
                :attr:`event_timeout` seconds (it must see the channel).
        """
        __tracebackhide__ = True
        channel_id = self._world._channel_id(channel)
        user = self._world._speaker(as_user)
        self._acting(
            f"{user.name} types in {self._world._label(channel_id)}",
            "typing_start",
            lambda _r, data: data.get("channelPublicId") == channel_id and data.get("userPublicId") == user.id,
            lambda: self._world.emulator.typing(user.id, channel_id),
            channel_id,
        )

    def dm(self, user: WorldUser | str, text: str) -> Message:
        """A user sends the bot a direct message, through its own client.

        The first DM opens the DM channel (the bot sees ``dm_new``); the bot sees
        ``message_create`` for the message. Answer it with :meth:`expect_reply`::

            said = bot_world.dm("carol", "!help")
            assert expect_reply(said).content.startswith("Commands:")

        Args:
            user: Who writes: a :class:`WorldUser`, a user name or id (not the bot).
            text: The text, as typed.

        Returns:
            The sent :class:`~service_client.Message` (in the DM channel).

        Raises:
            TypeError, LookupError: A bad user or text. ValueError: ``user`` is the bot.
            ServiceAuthError, TimeoutError: The send failed or was not echoed within 10 s.
            AssertionError: The bot's client did not get the message within
                :attr:`event_timeout` seconds.
        """
        __tracebackhide__ = True
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        sender = self._world._speaker(user)
        if sender.id == self._world.bot.id:
            raise ValueError("dm() sends the bot a DM from another user; the bot cannot DM itself")
        client = self._world.client_for(sender)

        def send() -> Message:
            """Open the DM of the sender and the bot and post the text in it."""
            channel = client.create_dm(self._world.bot.id)
            with self._world._lock:
                self._world._labels.setdefault(channel.id, f"the DM of {sender.name} and {self._world.bot.name}")
            message = client.send_message(channel.id, text)
            with self._world._lock:
                self._world._last_said = message
            return message

        return self._acting(f"{sender.name} sends the bot the DM {text!r}", "message_create",
                            lambda sent, message: message.id == sent.id, send)

    # -- membership -------------------------------------------------------------------------------

    def join(self, user: WorldUser | str) -> WorldUser:
        """A user joins the server (the bot sees ``guild_member_add``; ``guild_create`` when the
        user is the bot itself).

        Args:
            user: A :class:`WorldUser` or a user name or id of this world (one who left, was
                kicked or was made with :meth:`add_user`); a name the world does not know makes
                a new user of that name.

        Returns:
            The :class:`WorldUser` who joined.

        Raises:
            ValueError: The user is a member already, or banned.
            AssertionError: The bot's client did not get the event within
                :attr:`event_timeout` seconds.
        """
        __tracebackhide__ = True
        if isinstance(user, str):
            try:
                joiner = self._world.user(user)
            except LookupError:
                joiner = self._world._new_user(user)
        else:
            joiner = self._world._speaker(user)
        if self._is_member(joiner):
            raise ValueError(f"{joiner.name} is a member of {self._world.server.name} already")
        if any(ban["user"]["publicId"] == joiner.id for ban in self._world.emulator.bans(self._world.server.id)):
            raise ValueError(f"{joiner.name} is banned from {self._world.server.name}")
        self._join(joiner, [])
        return joiner

    def _join(self, user: WorldUser, role_ids: list[str]) -> None:
        __tracebackhide__ = True
        sid = self._world.server.id
        event: EventName
        if user.id == self._world._bot_id():
            event, matches = "guild_create", (lambda _r, guild: guild.id == sid)
        else:
            event, matches = "guild_member_add", (lambda _r, member: member.id == user.id and member.server_id == sid)
        self._acting(f"{user.name} joins {self._world.server.name}", event, matches,
                     lambda: self._world.emulator.add_member(sid, user.id, role_ids=role_ids or None))

    def leave(self, user: WorldUser | str) -> None:
        """A member leaves the server of its own accord (the bot sees ``guild_member_remove``
        with reason ``left``; ``guild_delete`` when it is the bot itself).

        Raises:
            LookupError: Not a member, or an unknown user. ValueError: The owner (who cannot leave).
            AssertionError: The bot's client did not get the event within
                :attr:`event_timeout` seconds.
        """
        __tracebackhide__ = True
        self._depart(user, "left", lambda name: f"{name} leaves {self._world.server.name}", self._world.emulator.leave_server)

    def kick(self, user: WorldUser | str) -> None:
        """The owner kicks a member (the bot sees ``guild_member_remove`` with reason
        ``kicked``; ``guild_delete`` when it is the bot itself). The audit log records it.

        Raises:
            LookupError: Not a member, or an unknown user. ValueError: The owner.
            AssertionError: The bot's client did not get the event within
                :attr:`event_timeout` seconds.
        """
        __tracebackhide__ = True
        self._depart(user, "kicked", lambda name: f"{self._world.owner.name} kicks {name}", self._world.emulator.kick)

    def ban(self, user: WorldUser | str, *, reason: str | None = None) -> None:
        """The owner bans a user. A member is removed (the bot sees ``guild_member_remove`` with
        reason ``banned``, then ``guild_ban_add``, which the action waits for; ``guild_delete``
        when it is the bot itself); banning a user who is not a member sends no event.

        Args:
            user: A :class:`WorldUser`, a user name or id.
            reason: The ban's reason (at most 512 characters), or None.

        Raises:
            LookupError: An unknown user. ValueError: Already banned, the owner, a bad reason.
            AssertionError: The bot's client did not get the event within
                :attr:`event_timeout` seconds.
        """
        __tracebackhide__ = True
        self._depart(user, "banned", lambda name: f"{self._world.owner.name} bans {name}",
                     lambda sid, uid: self._world.emulator.ban(sid, uid, reason=reason))

    # -- roles and channels -----------------------------------------------------------------------

    def create_role(self, name: str, *, permissions: Permissions | int | str | Iterable[Any] = 0,
                    color: str | int | None = None) -> WorldRole:
        """The owner creates a role in the server (the bot sees ``role_create``).

        ::

            staff = bot_world.create_role("Staff", permissions=Permissions.KICK_MEMBERS)
            bot_world.give_role("carol", staff)

        Args:
            name: The role's name, new in the server (so that :meth:`role` finds it).
            permissions: Its permissions: :class:`~service_client.Permissions` flags, their int
                value, a permission name or a list of them; default none.
            color: ``"#rrggbb"``, an int (``0xE67E22``), or None for no colour.

        Returns:
            The new :class:`WorldRole` (``permissions`` and ``color`` as the service stored them).

        Raises:
            TypeError: A bad ``permissions`` or ``color`` type. ValueError: A bad name or colour,
                or the server has a role of that name.
            AssertionError: The bot's client did not get the event within
                :attr:`event_timeout` seconds.
        """
        __tracebackhide__ = True
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"name must be a str with a character that is not whitespace, got {name!r}")
        value = int(permissions_value(permissions, "permissions"))
        wire_color = None if color is None else f"#{parse_color(color):06x}"
        sid = self._world.server.id
        if any(r.get("name") == name for r in self._world.emulator.roles(sid)):
            raise ValueError(f"the server has a role named {name!r} already")
        return self._acting(
            f"{self._world.owner.name} creates the role {name}",
            "role_create",
            lambda made, role: role.id == made.id,
            lambda: self._world._add_role(self._world.emulator.create_role(sid, name, value, color=wire_color)["role"]),
        )

    def give_role(self, user: WorldUser | str, role: WorldObject | str) -> None:
        """Give a member a role (the bot sees ``guild_member_update``).

        Args:
            user: A :class:`WorldUser`, a user name or id (a member).
            role: A :class:`WorldRole`, a :class:`~service_client.Role`, or a role name or id:
                any role of the server, whether the world, the bot or the emulator's control
                plane made it.

        Raises:
            LookupError: Not a member, an unknown user or role. ValueError: It has the role.
            AssertionError: The bot's client did not get the event within
                :attr:`event_timeout` seconds.
        """
        __tracebackhide__ = True
        self._change_role(user, role, give=True)

    def take_role(self, user: WorldUser | str, role: WorldObject | str) -> None:
        """Take a role from a member (the bot sees ``guild_member_update``).

        Arguments and errors as :meth:`give_role`; ``ValueError`` when it lacks the role.
        """
        __tracebackhide__ = True
        self._change_role(user, role, give=False)

    def _change_role(self, user: Any, role: Any, *, give: bool) -> None:
        __tracebackhide__ = True
        target = self._world._speaker(user)
        role_id = self._world._role_id(role)
        name = self._world.role(role_id).name
        sid = self._world.server.id

        def change() -> None:
            """Read and write the member's roles in one step of the emulator (another thread's
            change in between is never lost)."""
            if not self._world.emulator.change_member_role(sid, target.id, role_id, add=give):
                state = "has" if give else "does not have"
                raise ValueError(f"{target.name} {state} the role {name}")

        verb = "gets" if give else "loses"
        self._acting(
            f"{target.name} {verb} the role {name}", "guild_member_update",
            lambda _r, updated: _id_of(updated, "memberPublicId") == target.id,
            change,
        )

    def create_channel(self, name: str, *, private: bool = False) -> WorldObject:
        """The owner creates a text channel, uncategorised (the bot sees ``guild_channels_update``).

        Args:
            name: The channel's name, new in this world (so that :meth:`channel` finds it).
            private: Only the owner (and ADMINISTRATOR members) see a private channel, the bot
                included, until an override lets others in
                (``emulator.set_override(channel.id, user_id, "MEMBER", allow=...)``).

        Returns:
            The new channel, a :class:`WorldObject` (``say(name, ...)`` finds it by name).

        Raises:
            TypeError: ``private`` is not a bool. ValueError: A bad name, or the world has a
                channel of that name.
            AssertionError: The bot's client did not get the event within
                :attr:`event_timeout` seconds.
        """
        __tracebackhide__ = True
        if not isinstance(private, bool):
            raise TypeError(f"private must be a bool, got {type(private).__name__}")
        if isinstance(name, str) and any(o.kind == "channel" and o.name == name for o in self._objects_copy()):
            raise ValueError(f"this world has a channel named {name!r} already")
        sid = self._world.server.id
        return self._acting(
            f"{self._world.owner.name} creates the {'private ' if private else ''}channel #{name}",
            "guild_channels_update",
            lambda _r, data: data.get("serverPublicId") == sid,
            lambda: self._world._add("channel", self._world.emulator.create_channel(sid, name, private=private)),
        )

    def _objects_copy(self) -> list[WorldObject]:
        with self._world._lock:
            return list(self._world._objects)
