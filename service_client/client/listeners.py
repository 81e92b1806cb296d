"""The event methods of :class:`~service_client.Client`: listening, waiting, custom events.

:class:`ClientEvents` is a base of :class:`~service_client.Client`. Every
name it accepts is checked against the event catalog
(:mod:`service_client.events.catalog`): an unknown name raises
:class:`ValueError` naming the closest known events, at registration time
rather than never firing. The overloads below give type checkers each event's
listener signature and ``wait_for`` result; they are generated from the
catalog by ``python -m service_client.events._codegen`` (the blocks between the
``<generated:...>`` markers), and a test fails while they differ from it.
"""

from __future__ import annotations

import textwrap
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from ..errors import ServiceError
from ..events.catalog import EVENT_NAMES, EVENTS, SHARED_EVENTS, CustomEvent, EventName, unknown_event_message

if TYPE_CHECKING:
    from ..events.emitter import EventEmitter

if TYPE_CHECKING:  # the classes the generated overloads name, found where the package defines them
    # <generated:imports> python -m service_client.events._codegen
    from ..errors import CommandError  # noqa: F401
    from ..models.guild import Guild  # noqa: F401
    from ..models.member import Member, RemovedMember  # noqa: F401
    from ..models.message import Message  # noqa: F401
    from ..models.reaction import ReactionEvent  # noqa: F401
    from ..models.role import Role  # noqa: F401
    from ..models.user import User  # noqa: F401
    from ..voice.frames import AudioFrame  # noqa: F401
    from ..voice.playback import AudioPlayback  # noqa: F401
    from .voice import VoiceConnection  # noqa: F401
    # </generated:imports>

__all__ = ["ClientEvents"]

_AnyListener = TypeVar("_AnyListener", bound="Callable[..., object]")
_R = TypeVar("_R")  # what a listener returns (ignored)

# <generated:aliases> python -m service_client.events._codegen
# listener()
_Events0 = Literal["ready", "reconnect", "client_close"]
_Listener0 = TypeVar("_Listener0", bound="Callable[[], object]")
# listener(str)
_Events1 = Literal["disconnect"]
_Listener1 = TypeVar("_Listener1", bound="Callable[[str], object]")
# listener(Exception)
_Events2 = Literal["error"]
_Listener2 = TypeVar("_Listener2", bound="Callable[[Exception], object]")
# listener(CommandError)
_Events3 = Literal["command_error"]
_Listener3 = TypeVar("_Listener3", bound="Callable[[CommandError], object]")
# listener(Message)
_Events4 = Literal["message_create"]
_Listener4 = TypeVar("_Listener4", bound="Callable[[Message], object]")
# listener(dict[str, Any])
_Events5 = Literal[
    "message_update",
    "message_delete",
    "message_reaction_remove_all",
    "message_pin",
    "guild_ban_add",
    "guild_ban_remove",
    "guild_channels_update",
    "guild_categories_update",
    "role_order_update",
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
]
_Listener5 = TypeVar("_Listener5", bound="Callable[[dict[str, Any]], object]")
# listener(ReactionEvent, User, str)
_Events6 = Literal["message_reaction_add", "message_reaction_remove"]
_Listener6 = TypeVar("_Listener6", bound="Callable[[ReactionEvent, User, str], object]")
# listener(Guild)
_Events7 = Literal["guild_create"]
_Listener7 = TypeVar("_Listener7", bound="Callable[[Guild], object]")
# listener(Guild | dict[str, Any])
_Events8 = Literal["guild_update", "guild_delete"]
_Listener8 = TypeVar("_Listener8", bound="Callable[[Guild | dict[str, Any]], object]")
# listener(Member)
_Events9 = Literal["guild_member_add"]
_Listener9 = TypeVar("_Listener9", bound="Callable[[Member], object]")
# listener(RemovedMember)
_Events10 = Literal["guild_member_remove"]
_Listener10 = TypeVar("_Listener10", bound="Callable[[RemovedMember], object]")
# listener(Member | dict[str, Any])
_Events11 = Literal["guild_member_update"]
_Listener11 = TypeVar("_Listener11", bound="Callable[[Member | dict[str, Any]], object]")
# listener(Role)
_Events12 = Literal["role_create", "role_update"]
_Listener12 = TypeVar("_Listener12", bound="Callable[[Role], object]")
# listener(Role | str)
_Events13 = Literal["role_delete"]
_Listener13 = TypeVar("_Listener13", bound="Callable[[Role | str], object]")
# listener(User | dict[str, Any])
_Events14 = Literal["user_update"]
_Listener14 = TypeVar("_Listener14", bound="Callable[[User | dict[str, Any]], object]")
# listener(AudioFrame)
_Events15 = Literal["audio_frame"]
_Listener15 = TypeVar("_Listener15", bound="Callable[[AudioFrame], object]")
# listener(AudioPlayback)
_Events16 = Literal["player_start", "player_finish"]
_Listener16 = TypeVar("_Listener16", bound="Callable[[AudioPlayback], object]")
# listener(VoiceConnection, str)
_Events17 = Literal["voice_media_lost"]
_Listener17 = TypeVar("_Listener17", bound="Callable[[VoiceConnection, str], object]")
# </generated:aliases>


class ClientEvents:
    """Listener registration, ``wait_for`` and custom events of a :class:`~service_client.Client`.

    Thread-safe, like the client: every method may be called from any thread,
    including from inside a listener.
    """

    # Set by Client.__init__.
    _events: EventEmitter
    _destroyed: threading.Event
    _custom_events: frozenset[str]
    _custom_events_lock: threading.Lock

    def _check_event_name(self, event: object) -> str:
        """``event`` when it names a catalog event or a registered custom event.

        Raises:
            TypeError: ``event`` is not a non-empty str.
            ValueError: ``event`` is unknown (the message names the closest known events).
        """
        if not isinstance(event, str) or not event:
            raise TypeError(f"event must be a non-empty str, got {event!r}")
        if event in EVENT_NAMES or event in self._custom_events:
            return event
        raise ValueError(unknown_event_message(event, self._custom_events))

    # <generated:on>
    @overload
    def on(self, event: _Events0) -> Callable[[_Listener0], _Listener0]:
        """Decorator form for ready, reconnect, client_close: a listener taking no arguments."""
    @overload
    def on(self, event: _Events0, listener: Callable[[], _R]) -> Callable[[], _R]:
        """Call form for ready, reconnect, client_close: a listener taking no arguments."""
    @overload
    def on(self, event: _Events1) -> Callable[[_Listener1], _Listener1]:
        """Decorator form for disconnect: a listener taking (str)."""
    @overload
    def on(self, event: _Events1, listener: Callable[[str], _R]) -> Callable[[str], _R]:
        """Call form for disconnect: a listener taking (str)."""
    @overload
    def on(self, event: _Events2) -> Callable[[_Listener2], _Listener2]:
        """Decorator form for error: a listener taking (Exception)."""
    @overload
    def on(self, event: _Events2, listener: Callable[[Exception], _R]) -> Callable[[Exception], _R]:
        """Call form for error: a listener taking (Exception)."""
    @overload
    def on(self, event: _Events3) -> Callable[[_Listener3], _Listener3]:
        """Decorator form for command_error: a listener taking (CommandError)."""
    @overload
    def on(self, event: _Events3, listener: Callable[[CommandError], _R]) -> Callable[[CommandError], _R]:
        """Call form for command_error: a listener taking (CommandError)."""
    @overload
    def on(self, event: _Events4) -> Callable[[_Listener4], _Listener4]:
        """Decorator form for message_create: a listener taking (Message)."""
    @overload
    def on(self, event: _Events4, listener: Callable[[Message], _R]) -> Callable[[Message], _R]:
        """Call form for message_create: a listener taking (Message)."""
    @overload
    def on(self, event: _Events5) -> Callable[[_Listener5], _Listener5]:
        """Decorator form for message_update, message_delete, message_reaction_remove_all, message_pin,
        guild_ban_add, guild_ban_remove, guild_channels_update, guild_categories_update, role_order_update,
        presence_update, activity_update, typing_start, typing_stop, dm_new, voice_state_update,
        voice_user_joined, voice_user_left, voice_user_state, voice_incoming_call, voice_call_cancelled: a
        listener taking (dict[str, Any]).
        """
    @overload
    def on(self, event: _Events5, listener: Callable[[dict[str, Any]], _R]) -> Callable[[dict[str, Any]], _R]:
        """Call form for message_update, message_delete, message_reaction_remove_all, message_pin, guild_ban_add,
        guild_ban_remove, guild_channels_update, guild_categories_update, role_order_update, presence_update,
        activity_update, typing_start, typing_stop, dm_new, voice_state_update, voice_user_joined,
        voice_user_left, voice_user_state, voice_incoming_call, voice_call_cancelled: a listener taking
        (dict[str, Any]).
        """
    @overload
    def on(self, event: _Events6) -> Callable[[_Listener6], _Listener6]:
        """Decorator form for message_reaction_add, message_reaction_remove: a listener taking (ReactionEvent,
        User, str).
        """
    @overload
    def on(self, event: _Events6, listener: Callable[[ReactionEvent, User, str], _R]) -> Callable[[ReactionEvent, User, str], _R]:
        """Call form for message_reaction_add, message_reaction_remove: a listener taking (ReactionEvent, User,
        str).
        """
    @overload
    def on(self, event: _Events7) -> Callable[[_Listener7], _Listener7]:
        """Decorator form for guild_create: a listener taking (Guild)."""
    @overload
    def on(self, event: _Events7, listener: Callable[[Guild], _R]) -> Callable[[Guild], _R]:
        """Call form for guild_create: a listener taking (Guild)."""
    @overload
    def on(self, event: _Events8) -> Callable[[_Listener8], _Listener8]:
        """Decorator form for guild_update, guild_delete: a listener taking (Guild | dict[str, Any])."""
    @overload
    def on(self, event: _Events8, listener: Callable[[Guild | dict[str, Any]], _R]) -> Callable[[Guild | dict[str, Any]], _R]:
        """Call form for guild_update, guild_delete: a listener taking (Guild | dict[str, Any])."""
    @overload
    def on(self, event: _Events9) -> Callable[[_Listener9], _Listener9]:
        """Decorator form for guild_member_add: a listener taking (Member)."""
    @overload
    def on(self, event: _Events9, listener: Callable[[Member], _R]) -> Callable[[Member], _R]:
        """Call form for guild_member_add: a listener taking (Member)."""
    @overload
    def on(self, event: _Events10) -> Callable[[_Listener10], _Listener10]:
        """Decorator form for guild_member_remove: a listener taking (RemovedMember)."""
    @overload
    def on(self, event: _Events10, listener: Callable[[RemovedMember], _R]) -> Callable[[RemovedMember], _R]:
        """Call form for guild_member_remove: a listener taking (RemovedMember)."""
    @overload
    def on(self, event: _Events11) -> Callable[[_Listener11], _Listener11]:
        """Decorator form for guild_member_update: a listener taking (Member | dict[str, Any])."""
    @overload
    def on(self, event: _Events11, listener: Callable[[Member | dict[str, Any]], _R]) -> Callable[[Member | dict[str, Any]], _R]:
        """Call form for guild_member_update: a listener taking (Member | dict[str, Any])."""
    @overload
    def on(self, event: _Events12) -> Callable[[_Listener12], _Listener12]:
        """Decorator form for role_create, role_update: a listener taking (Role)."""
    @overload
    def on(self, event: _Events12, listener: Callable[[Role], _R]) -> Callable[[Role], _R]:
        """Call form for role_create, role_update: a listener taking (Role)."""
    @overload
    def on(self, event: _Events13) -> Callable[[_Listener13], _Listener13]:
        """Decorator form for role_delete: a listener taking (Role | str)."""
    @overload
    def on(self, event: _Events13, listener: Callable[[Role | str], _R]) -> Callable[[Role | str], _R]:
        """Call form for role_delete: a listener taking (Role | str)."""
    @overload
    def on(self, event: _Events14) -> Callable[[_Listener14], _Listener14]:
        """Decorator form for user_update: a listener taking (User | dict[str, Any])."""
    @overload
    def on(self, event: _Events14, listener: Callable[[User | dict[str, Any]], _R]) -> Callable[[User | dict[str, Any]], _R]:
        """Call form for user_update: a listener taking (User | dict[str, Any])."""
    @overload
    def on(self, event: _Events15) -> Callable[[_Listener15], _Listener15]:
        """Decorator form for audio_frame: a listener taking (AudioFrame)."""
    @overload
    def on(self, event: _Events15, listener: Callable[[AudioFrame], _R]) -> Callable[[AudioFrame], _R]:
        """Call form for audio_frame: a listener taking (AudioFrame)."""
    @overload
    def on(self, event: _Events16) -> Callable[[_Listener16], _Listener16]:
        """Decorator form for player_start, player_finish: a listener taking (AudioPlayback)."""
    @overload
    def on(self, event: _Events16, listener: Callable[[AudioPlayback], _R]) -> Callable[[AudioPlayback], _R]:
        """Call form for player_start, player_finish: a listener taking (AudioPlayback)."""
    @overload
    def on(self, event: _Events17) -> Callable[[_Listener17], _Listener17]:
        """Decorator form for voice_media_lost: a listener taking (VoiceConnection, str)."""
    @overload
    def on(self, event: _Events17, listener: Callable[[VoiceConnection, str], _R]) -> Callable[[VoiceConnection, str], _R]:
        """Call form for voice_media_lost: a listener taking (VoiceConnection, str)."""
    @overload
    def on(self, event: CustomEvent) -> Callable[[_AnyListener], _AnyListener]:
        """Decorator form for a registered custom event: any listener."""
    @overload
    def on(self, event: CustomEvent, listener: _AnyListener) -> _AnyListener:
        """Call form for a registered custom event: any listener."""
    # </generated:on>

    def on(self, event: str, listener: Callable[..., Any] | None = None) -> Any:
        """Register a listener; usable as ``@client.on("message_create")``.

        Listeners run on the worker pool, never on the socket reader thread;
        events sharing an ordering key (below) reach them one at a time, in
        arrival order. A listener that raises is passed to the ``error``
        listeners (and logged); with none registered its traceback is logged
        when logging is configured, else printed to ``sys.stderr``, once,
        token redacted.

        The name is checked here: an unknown one (``"mesage_create"``) raises
        :class:`ValueError` at once, naming the closest known events, instead
        of a listener that never runs. Type checkers see each event's listener
        signature, so ``@client.on("message_create")`` expects a function
        taking a :class:`~service_client.Message`.

        Events of your own are an explicit opt-in: register the name with
        :meth:`register_event`, which returns it; ``on``, :meth:`once`,
        :meth:`wait_for` and :meth:`dispatch` then accept it::

            TICKET_OPENED = client.register_event("ticket_opened")

            @client.on(TICKET_OPENED)
            def opened(channel_id: str) -> None: ...

            client.dispatch(TICKET_OPENED, channel_id, key=channel_id)

        The events (a raw payload is a ``dict[str, Any]`` as the service sent
        it; the event's cache effect is applied before its listeners run):

        <events>

        Args:
            event: A name listed above, or one returned by :meth:`register_event`.
            listener: Callable taking the event's arguments; omitted, ``on``
                returns a decorator.

        Returns:
            The listener (or, without one, a decorator registering and
            returning the function it decorates).

        Raises:
            TypeError: ``event`` is not a non-empty str or ``listener`` is not callable.
            ValueError: ``event`` is neither a known event nor a registered custom one.
        """
        return self._events.on(self._check_event_name(event), listener)

    # <generated:once>
    @overload
    def once(self, event: _Events0) -> Callable[[_Listener0], _Listener0]:
        """Decorator form for ready, reconnect, client_close: a listener taking no arguments."""
    @overload
    def once(self, event: _Events0, listener: Callable[[], _R]) -> Callable[[], _R]:
        """Call form for ready, reconnect, client_close: a listener taking no arguments."""
    @overload
    def once(self, event: _Events1) -> Callable[[_Listener1], _Listener1]:
        """Decorator form for disconnect: a listener taking (str)."""
    @overload
    def once(self, event: _Events1, listener: Callable[[str], _R]) -> Callable[[str], _R]:
        """Call form for disconnect: a listener taking (str)."""
    @overload
    def once(self, event: _Events2) -> Callable[[_Listener2], _Listener2]:
        """Decorator form for error: a listener taking (Exception)."""
    @overload
    def once(self, event: _Events2, listener: Callable[[Exception], _R]) -> Callable[[Exception], _R]:
        """Call form for error: a listener taking (Exception)."""
    @overload
    def once(self, event: _Events3) -> Callable[[_Listener3], _Listener3]:
        """Decorator form for command_error: a listener taking (CommandError)."""
    @overload
    def once(self, event: _Events3, listener: Callable[[CommandError], _R]) -> Callable[[CommandError], _R]:
        """Call form for command_error: a listener taking (CommandError)."""
    @overload
    def once(self, event: _Events4) -> Callable[[_Listener4], _Listener4]:
        """Decorator form for message_create: a listener taking (Message)."""
    @overload
    def once(self, event: _Events4, listener: Callable[[Message], _R]) -> Callable[[Message], _R]:
        """Call form for message_create: a listener taking (Message)."""
    @overload
    def once(self, event: _Events5) -> Callable[[_Listener5], _Listener5]:
        """Decorator form for message_update, message_delete, message_reaction_remove_all, message_pin,
        guild_ban_add, guild_ban_remove, guild_channels_update, guild_categories_update, role_order_update,
        presence_update, activity_update, typing_start, typing_stop, dm_new, voice_state_update,
        voice_user_joined, voice_user_left, voice_user_state, voice_incoming_call, voice_call_cancelled: a
        listener taking (dict[str, Any]).
        """
    @overload
    def once(self, event: _Events5, listener: Callable[[dict[str, Any]], _R]) -> Callable[[dict[str, Any]], _R]:
        """Call form for message_update, message_delete, message_reaction_remove_all, message_pin, guild_ban_add,
        guild_ban_remove, guild_channels_update, guild_categories_update, role_order_update, presence_update,
        activity_update, typing_start, typing_stop, dm_new, voice_state_update, voice_user_joined,
        voice_user_left, voice_user_state, voice_incoming_call, voice_call_cancelled: a listener taking
        (dict[str, Any]).
        """
    @overload
    def once(self, event: _Events6) -> Callable[[_Listener6], _Listener6]:
        """Decorator form for message_reaction_add, message_reaction_remove: a listener taking (ReactionEvent,
        User, str).
        """
    @overload
    def once(self, event: _Events6, listener: Callable[[ReactionEvent, User, str], _R]) -> Callable[[ReactionEvent, User, str], _R]:
        """Call form for message_reaction_add, message_reaction_remove: a listener taking (ReactionEvent, User,
        str).
        """
    @overload
    def once(self, event: _Events7) -> Callable[[_Listener7], _Listener7]:
        """Decorator form for guild_create: a listener taking (Guild)."""
    @overload
    def once(self, event: _Events7, listener: Callable[[Guild], _R]) -> Callable[[Guild], _R]:
        """Call form for guild_create: a listener taking (Guild)."""
    @overload
    def once(self, event: _Events8) -> Callable[[_Listener8], _Listener8]:
        """Decorator form for guild_update, guild_delete: a listener taking (Guild | dict[str, Any])."""
    @overload
    def once(self, event: _Events8, listener: Callable[[Guild | dict[str, Any]], _R]) -> Callable[[Guild | dict[str, Any]], _R]:
        """Call form for guild_update, guild_delete: a listener taking (Guild | dict[str, Any])."""
    @overload
    def once(self, event: _Events9) -> Callable[[_Listener9], _Listener9]:
        """Decorator form for guild_member_add: a listener taking (Member)."""
    @overload
    def once(self, event: _Events9, listener: Callable[[Member], _R]) -> Callable[[Member], _R]:
        """Call form for guild_member_add: a listener taking (Member)."""
    @overload
    def once(self, event: _Events10) -> Callable[[_Listener10], _Listener10]:
        """Decorator form for guild_member_remove: a listener taking (RemovedMember)."""
    @overload
    def once(self, event: _Events10, listener: Callable[[RemovedMember], _R]) -> Callable[[RemovedMember], _R]:
        """Call form for guild_member_remove: a listener taking (RemovedMember)."""
    @overload
    def once(self, event: _Events11) -> Callable[[_Listener11], _Listener11]:
        """Decorator form for guild_member_update: a listener taking (Member | dict[str, Any])."""
    @overload
    def once(self, event: _Events11, listener: Callable[[Member | dict[str, Any]], _R]) -> Callable[[Member | dict[str, Any]], _R]:
        """Call form for guild_member_update: a listener taking (Member | dict[str, Any])."""
    @overload
    def once(self, event: _Events12) -> Callable[[_Listener12], _Listener12]:
        """Decorator form for role_create, role_update: a listener taking (Role)."""
    @overload
    def once(self, event: _Events12, listener: Callable[[Role], _R]) -> Callable[[Role], _R]:
        """Call form for role_create, role_update: a listener taking (Role)."""
    @overload
    def once(self, event: _Events13) -> Callable[[_Listener13], _Listener13]:
        """Decorator form for role_delete: a listener taking (Role | str)."""
    @overload
    def once(self, event: _Events13, listener: Callable[[Role | str], _R]) -> Callable[[Role | str], _R]:
        """Call form for role_delete: a listener taking (Role | str)."""
    @overload
    def once(self, event: _Events14) -> Callable[[_Listener14], _Listener14]:
        """Decorator form for user_update: a listener taking (User | dict[str, Any])."""
    @overload
    def once(self, event: _Events14, listener: Callable[[User | dict[str, Any]], _R]) -> Callable[[User | dict[str, Any]], _R]:
        """Call form for user_update: a listener taking (User | dict[str, Any])."""
    @overload
    def once(self, event: _Events15) -> Callable[[_Listener15], _Listener15]:
        """Decorator form for audio_frame: a listener taking (AudioFrame)."""
    @overload
    def once(self, event: _Events15, listener: Callable[[AudioFrame], _R]) -> Callable[[AudioFrame], _R]:
        """Call form for audio_frame: a listener taking (AudioFrame)."""
    @overload
    def once(self, event: _Events16) -> Callable[[_Listener16], _Listener16]:
        """Decorator form for player_start, player_finish: a listener taking (AudioPlayback)."""
    @overload
    def once(self, event: _Events16, listener: Callable[[AudioPlayback], _R]) -> Callable[[AudioPlayback], _R]:
        """Call form for player_start, player_finish: a listener taking (AudioPlayback)."""
    @overload
    def once(self, event: _Events17) -> Callable[[_Listener17], _Listener17]:
        """Decorator form for voice_media_lost: a listener taking (VoiceConnection, str)."""
    @overload
    def once(self, event: _Events17, listener: Callable[[VoiceConnection, str], _R]) -> Callable[[VoiceConnection, str], _R]:
        """Call form for voice_media_lost: a listener taking (VoiceConnection, str)."""
    @overload
    def once(self, event: CustomEvent) -> Callable[[_AnyListener], _AnyListener]:
        """Decorator form for a registered custom event: any listener."""
    @overload
    def once(self, event: CustomEvent, listener: _AnyListener) -> _AnyListener:
        """Call form for a registered custom event: any listener."""
    # </generated:once>

    def once(self, event: str, listener: Callable[..., Any] | None = None) -> Any:
        """Like :meth:`on`, for the next occurrence only.

        Raises:
            TypeError: ``event`` is not a non-empty str or ``listener`` is not callable.
            ValueError: ``event`` is neither a known event nor a registered custom one.
        """
        return self._events.once(self._check_event_name(event), listener)

    def off(self, event: EventName | CustomEvent, listener: Callable[..., Any] | None = None) -> None:
        """Remove one listener, or every listener of ``event`` when omitted.

        Raises:
            TypeError: ``event`` is not a non-empty str or ``listener`` is not callable.
            ValueError: ``event`` is neither a known event nor a registered custom one.
        """
        self._events.off(self._check_event_name(event), listener)

    def listeners(self, event: EventName | CustomEvent) -> list[Callable[..., Any]]:
        """The listeners of ``event``, in call order (a copy).

        Raises:
            TypeError: ``event`` is not a non-empty str.
            ValueError: ``event`` is neither a known event nor a registered custom one.
        """
        return self._events.listeners(self._check_event_name(event))

    # <generated:wait_for>
    @overload
    def wait_for(
        self, event: _Events0, *, check: Callable[[], object] | None = None, timeout: float | None = None
    ) -> None:
        """Wait for ready, reconnect, client_close; returns None."""
    @overload
    def wait_for(
        self, event: _Events1, *, check: Callable[[str], object] | None = None, timeout: float | None = None
    ) -> str:
        """Wait for disconnect; returns str."""
    @overload
    def wait_for(
        self, event: _Events2, *, check: Callable[[Exception], object] | None = None, timeout: float | None = None
    ) -> Exception:
        """Wait for error; returns Exception."""
    @overload
    def wait_for(
        self, event: _Events3, *, check: Callable[[CommandError], object] | None = None, timeout: float | None = None
    ) -> CommandError:
        """Wait for command_error; returns CommandError."""
    @overload
    def wait_for(
        self, event: _Events4, *, check: Callable[[Message], object] | None = None, timeout: float | None = None
    ) -> Message:
        """Wait for message_create; returns Message."""
    @overload
    def wait_for(
        self, event: _Events5, *, check: Callable[[dict[str, Any]], object] | None = None, timeout: float | None = None
    ) -> dict[str, Any]:
        """Wait for message_update, message_delete, message_reaction_remove_all, message_pin, guild_ban_add,
        guild_ban_remove, guild_channels_update, guild_categories_update, role_order_update, presence_update,
        activity_update, typing_start, typing_stop, dm_new, voice_state_update, voice_user_joined,
        voice_user_left, voice_user_state, voice_incoming_call, voice_call_cancelled; returns dict[str, Any].
        """
    @overload
    def wait_for(
        self, event: _Events6, *, check: Callable[[ReactionEvent, User, str], object] | None = None, timeout: float | None = None
    ) -> tuple[ReactionEvent, User, str]:
        """Wait for message_reaction_add, message_reaction_remove; returns tuple[ReactionEvent, User, str]."""
    @overload
    def wait_for(
        self, event: _Events7, *, check: Callable[[Guild], object] | None = None, timeout: float | None = None
    ) -> Guild:
        """Wait for guild_create; returns Guild."""
    @overload
    def wait_for(
        self, event: _Events8, *, check: Callable[[Guild | dict[str, Any]], object] | None = None, timeout: float | None = None
    ) -> Guild | dict[str, Any]:
        """Wait for guild_update, guild_delete; returns Guild | dict[str, Any]."""
    @overload
    def wait_for(
        self, event: _Events9, *, check: Callable[[Member], object] | None = None, timeout: float | None = None
    ) -> Member:
        """Wait for guild_member_add; returns Member."""
    @overload
    def wait_for(
        self, event: _Events10, *, check: Callable[[RemovedMember], object] | None = None, timeout: float | None = None
    ) -> RemovedMember:
        """Wait for guild_member_remove; returns RemovedMember."""
    @overload
    def wait_for(
        self, event: _Events11, *, check: Callable[[Member | dict[str, Any]], object] | None = None, timeout: float | None = None
    ) -> Member | dict[str, Any]:
        """Wait for guild_member_update; returns Member | dict[str, Any]."""
    @overload
    def wait_for(
        self, event: _Events12, *, check: Callable[[Role], object] | None = None, timeout: float | None = None
    ) -> Role:
        """Wait for role_create, role_update; returns Role."""
    @overload
    def wait_for(
        self, event: _Events13, *, check: Callable[[Role | str], object] | None = None, timeout: float | None = None
    ) -> Role | str:
        """Wait for role_delete; returns Role | str."""
    @overload
    def wait_for(
        self, event: _Events14, *, check: Callable[[User | dict[str, Any]], object] | None = None, timeout: float | None = None
    ) -> User | dict[str, Any]:
        """Wait for user_update; returns User | dict[str, Any]."""
    @overload
    def wait_for(
        self, event: _Events15, *, check: Callable[[AudioFrame], object] | None = None, timeout: float | None = None
    ) -> AudioFrame:
        """Wait for audio_frame; returns AudioFrame."""
    @overload
    def wait_for(
        self, event: _Events16, *, check: Callable[[AudioPlayback], object] | None = None, timeout: float | None = None
    ) -> AudioPlayback:
        """Wait for player_start, player_finish; returns AudioPlayback."""
    @overload
    def wait_for(
        self, event: _Events17, *, check: Callable[[VoiceConnection, str], object] | None = None, timeout: float | None = None
    ) -> tuple[VoiceConnection, str]:
        """Wait for voice_media_lost; returns tuple[VoiceConnection, str]."""
    @overload
    def wait_for(
        self, event: CustomEvent, *, check: Callable[..., object] | None = None, timeout: float | None = None
    ) -> Any:
        """Wait for a registered custom event; returns Any."""
    # </generated:wait_for>

    def wait_for(
        self,
        event: str,
        *,
        check: Callable[..., Any] | None = None,
        timeout: float | None = None,
    ) -> Any:
        """Block until ``event`` happens (and ``check`` accepts its arguments).

        Only events emitted after this call count. Safe from inside a listener
        (waiters are completed off the worker pool).

        Args:
            event: An event listed in :meth:`on`, or one returned by :meth:`register_event`.
            check: Quick predicate on the event's arguments; an exception it
                raises ends the wait with that exception.
            timeout: Seconds; None waits until :meth:`destroy`.

        Returns:
            The event's single argument (a :class:`~service_client.Message`
            for ``message_create``); a tuple of them for an event with several
            (``(info, user, message_id)`` for ``message_reaction_add``); None
            for one with none (``ready``, ``reconnect``).

        Raises:
            TypeError: ``event`` is not a non-empty str or ``check`` is not callable.
            ValueError: ``event`` is unknown, or ``timeout`` is negative.
            TimeoutError: ``timeout`` passed first.
            ServiceError: The client was destroyed while waiting.
        """
        return self._events.wait_for(self._check_event_name(event), check=check, timeout=timeout)

    # -- custom events ----------------------------------------------------------

    def register_event(self, name: str) -> CustomEvent:
        """Opt into an event of your own, which :meth:`dispatch` emits.

        After this call, :meth:`on`, :meth:`once`, :meth:`off`,
        :meth:`listeners` and :meth:`wait_for` accept ``name`` on this client.
        Registering the same name again is harmless. Type checkers accept the
        returned value (a :data:`~service_client.events.catalog.CustomEvent`)
        wherever an event name goes, with listeners of any signature.

        Args:
            name: The event's name, not one of the client's own events.

        Returns:
            ``name``, typed as a :data:`~service_client.events.catalog.CustomEvent`.

        Raises:
            TypeError: ``name`` is not a non-empty str.
            ValueError: ``name`` is one of the client's own events (listen to it directly).
        """
        if not isinstance(name, str) or not name:
            raise TypeError(f"name must be a non-empty str, got {name!r}")
        if name in EVENT_NAMES:
            raise ValueError(f"{name!r} is one of the client's own events; listen to it without registering it")
        with self._custom_events_lock:
            self._custom_events = self._custom_events | {name}
        return CustomEvent(name)

    def dispatch(
        self, event: CustomEvent | Literal["error", "command_error"], *args: Any, key: str | None = None
    ) -> None:
        """Emit a custom event, ``error`` or ``command_error``: its listeners run on the worker pool; returns at once.

        Pending :meth:`wait_for` calls for it complete as for the client's own
        events, and a listener that raises is reported the same way. Of the
        client's own events, only those of
        :data:`~service_client.events.catalog.SHARED_EVENTS` may be emitted
        here, with the arguments the catalog gives them: ``error`` (one
        exception) to report a failure of your own as a listener's is, and
        ``command_error`` (one
        :class:`~service_client.errors.CommandError`), which
        :class:`~service_client.CommandDispatcher` emits this way.

        Args:
            event: A name returned by :meth:`register_event`, ``"error"`` or ``"command_error"``.
            *args: The listeners' arguments.
            key: Ordering key: the events (custom or not) sharing it reach
                listeners one at a time in dispatch order, such as a channel
                id; None for no ordering.

        Raises:
            TypeError: ``event`` is not a non-empty str, or ``key`` is not a str or None.
            ValueError: ``event`` is another of the client's own events (only the
                client emits those) or was not registered.
            ServiceError: The client was destroyed.
        """
        name = self._check_event_name(event)
        if name in EVENT_NAMES and name not in SHARED_EVENTS:
            raise ValueError(f"{name!r} is one of the client's own events; only the client emits it")
        if key is not None and not isinstance(key, str):
            raise TypeError(f"key must be a str or None, got {type(key).__name__}")
        if self._destroyed.is_set():
            raise ServiceError("the client was destroyed; create a new Client")
        self._events.emit(name, *args, key=key)


def _event_list(indent: str) -> str:
    """The events of the catalog as a reStructuredText definition list, for a docstring."""
    lines: list[str] = []
    for entry in EVENTS:
        lines.append(f"{indent}``{entry.signature}``")
        body = indent + "    "
        lines.append(textwrap.fill(entry.when, 88, initial_indent=body, subsequent_indent=body))
        lines.append(textwrap.fill(f"Ordering key: {entry.key}.", 88, initial_indent=body, subsequent_indent=body))
    return "\n".join(lines)


# The event list of ``on`` is built here from the catalog, so help(Client.on) and the API
# reference always show the events the client emits.
ClientEvents.on.__doc__ = (ClientEvents.on.__doc__ or "").replace("        <events>", _event_list(" " * 8))
