"""Voice in a test world: users who join a voice channel and speak, and what the bot played.

:class:`WorldVoice` is a part of :class:`~service_client.testing.world.BotWorld` (its
``join_voice`` and ``expect_audio`` are the world's). The emulator's media server does the
work: a user in a voice channel speaks through a simulated microphone (no client of its own),
and everything the bot publishes is recorded, so a test asks which frequency the users heard.
It needs the voice extra (``pip install 'service_client[voice]'``) and, because WebRTC skips
the loopback interface, a machine with another network interface (a network namespace with a
veth pair will do; see the voice media guide).

A bot author's voice test::

    def test_the_bot_plays_a_tone(bot_world, bot_client):
        alice = bot_world.join_voice(bot_world.owner, bot_world.voice)
        bot_world.say(bot_world.general, "!tone 440")        # the bot joins and plays
        bot_world.expect_audio(alice, frequency=440, within=5)
"""

from __future__ import annotations

import importlib.util
import os
import socket
import time
from typing import TYPE_CHECKING, Any, Protocol

from .handles import WorldObject, WorldUser

if TYPE_CHECKING:  # pragma: no cover - annotations only: the plugin loads without the emulator extra
    from ..emulator import Emulator

__all__ = ["VoiceParticipant", "WorldVoice", "voice_media_unavailable"]

#: Seconds between two looks at what the bot played.
POLL_S = 0.05
#: The address whose route tells whether a non-loopback interface exists (the benchmarking range).
PROBE_ADDRESS = "198.18.0.1"
#: Hz a heard frequency may be off and still count.
DEFAULT_TOLERANCE_HZ = 10.0


def voice_media_unavailable() -> str | None:
    """Why voice media cannot run on this machine, or None when it can.

    It needs the voice extra, and an IPv4 interface other than loopback (WebRTC skips
    loopback): inside a network namespace with a veth pair at ``198.18.0.1``, say. Nothing is
    sent to find out (a UDP socket is connected, which only asks the routing table). Use it to
    skip voice tests with their reason::

        pytestmark = pytest.mark.skipif(voice_media_unavailable() is not None,
                                        reason=str(voice_media_unavailable()))
    """
    missing = [name for name in ("livekit", "av", "aiortc", "numpy") if importlib.util.find_spec(name) is None]
    if missing:
        return f"the voice extra is not installed ({', '.join(missing)} missing): pip install 'service_client[voice]'"
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect((PROBE_ADDRESS, 9))
        address = probe.getsockname()[0]
    except OSError:
        address = "127.0.0.1"
    finally:
        probe.close()
    if address.startswith("127."):
        return ("no network interface but loopback, which WebRTC skips: run the voice tests in a network "
                "namespace with a veth pair (tests/voice/run_in_netns.sh)")
    return None


class _World(Protocol):
    """What :class:`WorldVoice` uses of the world."""

    emulator: Emulator
    bot: WorldUser

    def user(self, name_or_id: str) -> WorldUser:
        """The world's user of that name or id."""
        ...

    def channel(self, name_or_id: str) -> WorldObject:
        """The world's channel of that name or id."""
        ...


class _Acting(Protocol):
    """The world's actions part: what :class:`WorldVoice` uses to act and wait for the bot."""

    def _acting(self, what: str, event: Any, matches: Any, act: Any, channel_id: str | None = None) -> Any: ...


class VoiceParticipant:
    """A user of a test world in a voice channel (made by ``bot_world.join_voice``).

    Thread-safe.

    Attributes:
        user: The :class:`WorldUser`.
        channel: The voice channel, a :class:`WorldObject`.
    """

    __slots__ = ("user", "channel", "_voice")

    def __init__(self, voice: WorldVoice, user: WorldUser, channel: WorldObject) -> None:
        self._voice = voice
        self.user = user
        self.channel = channel

    @property
    def id(self) -> str:
        """The user's id."""
        return self.user.id

    def speak(self, sound: float | str | os.PathLike[str] | bytes, *, seconds: float = 1.0) -> float:
        """Say something into the voice channel: everyone there, the bot included, hears it.

        Args:
            sound: A tone's frequency in Hz (20..20000), or a WAV file (a path, or its bytes;
                any audio PyAV reads), resampled to 48 kHz mono.
            seconds: A tone's duration, seconds.

        Returns:
            The seconds of speech queued for the user (speech queues after what it still says).

        Raises:
            TypeError: ``sound`` is none of those.
            ValueError: A bad tone, duration or file (the emulator refused it).
        """
        emulator = self._voice.world.emulator
        if isinstance(sound, bool):
            raise TypeError("sound must be a frequency in Hz or a WAV file, not a bool")
        if isinstance(sound, (int, float)):
            return emulator.voice_speak(self.user.id, self.channel.id, tone_hz=float(sound), seconds=seconds)
        if isinstance(sound, (str, os.PathLike)):
            with open(os.fspath(sound), "rb") as file:
                data = file.read()
        elif isinstance(sound, (bytes, bytearray)):
            data = bytes(sound)
        else:
            raise TypeError(f"sound must be a frequency in Hz or a WAV file, got {type(sound).__name__}")
        return emulator.voice_speak(self.user.id, self.channel.id, wav=data)

    def leave(self) -> None:
        """Leave the voice channel."""
        self._voice.world.emulator.voice_leave(self.user.id)

    def __repr__(self) -> str:
        return f"<VoiceParticipant {self.user.name!r} in {self.channel.name!r}>"


class WorldVoice:
    """The voice part of a test world: ``join_voice`` and ``expect_audio`` (see the module).

    Args:
        world: The world whose emulator, users and channels it uses.
        actions: The world's actions part, through which a join is marked as an action and
            waited for until the bot's client has seen it.
    """

    def __init__(self, world: _World, actions: _Acting) -> None:
        self.world = world
        self._actions = actions

    def _require_media(self) -> None:
        if not self.world.emulator.media_available:
            raise RuntimeError("the emulator runs without its media server: voice in a test world needs the "
                               "voice extra, pip install 'service_client[voice]'")

    def join_voice(self, user: WorldUser | str, channel: WorldObject | str) -> VoiceParticipant:
        """Put a user in a voice channel, as its client's ``voice:join`` would.

        When the bot's client was handed to the world, returns after the bot's
        ``voice_user_joined`` listeners ran.

        Args:
            user: A :class:`WorldUser`, or a user's name or id.
            channel: A voice channel: a :class:`WorldObject`, a name or an id.

        Returns:
            The :class:`VoiceParticipant`, whose ``speak`` makes the user talk.

        Raises:
            LookupError: Unknown user or channel.
            ValueError: The emulator refused the join (not a voice channel, no ``CONNECT``).
            RuntimeError: The emulator runs without its media server (no voice extra).
        """
        __tracebackhide__ = True
        self._require_media()
        who = user if isinstance(user, WorldUser) else self.world.user(user)
        where = channel if isinstance(channel, WorldObject) else self.world.channel(channel)
        if where.record.get("type") != "VOICE":
            raise ValueError(f"{where.name!r} is not a voice channel")

        def act() -> bool:
            """Put the user in the channel through the emulator."""
            return self.world.emulator.voice_join(who.id, where.id)

        def matches(_joined: Any, data: Any) -> bool:
            """The bot's ``voice_user_joined`` for this user and channel."""
            return isinstance(data, dict) and isinstance(data.get("user"), dict) and \
                data["user"].get("userPublicId") == who.id and data.get("channelPublicId") == where.id

        if not self._actions._acting(f"join_voice({who.name!r}, {where.name!r})", "voice_user_joined", matches, act):
            raise ValueError(f"the emulator refused to put {who.name!r} in {where.name!r} (no CONNECT permission?)")
        return VoiceParticipant(self, who, where)

    def expect_audio(self, user: VoiceParticipant | WorldUser | str, *, frequency: float, within: float = 5.0,
                     window: float = 0.5, tolerance: float = DEFAULT_TOLERANCE_HZ) -> float:
        """Assert that the bot played a tone of ``frequency`` into the voice channel ``user`` is in.

        What the bot publishes there is recorded by the emulator's media server; this waits
        until the dominant frequency (FFT peak) of its last ``window`` seconds is within
        ``tolerance`` Hz of ``frequency``.

        Args:
            user: A user in the voice channel (what ``join_voice`` returned, a
                :class:`WorldUser`, a name or an id): the listener.
            frequency: The expected frequency, Hz.
            within: Seconds to wait.
            window: Seconds of the bot's latest audio that are analysed.
            tolerance: Hz the peak may be off.

        Returns:
            The frequency heard, Hz.

        Raises:
            AssertionError: Not heard within ``within`` seconds (the text says what was heard,
                and whether the bot and the user were in the channel).
            LookupError: Unknown user.
            RuntimeError: The emulator runs without its media server (no voice extra).
        """
        __tracebackhide__ = True
        self._require_media()
        who = user.user if isinstance(user, VoiceParticipant) else \
            user if isinstance(user, WorldUser) else self.world.user(user)
        emulator = self.world.emulator
        bot_id = self.world.bot.id
        deadline = time.monotonic() + within
        heard = 0.0
        channel_id = None
        while True:
            channel_id = self._channel_of(who.id)
            if channel_id is not None:
                heard = emulator.voice_frequency(channel_id, bot_id, seconds=window)
                if heard and abs(heard - frequency) <= tolerance:
                    return heard
            if time.monotonic() >= deadline:
                break
            time.sleep(POLL_S)
        if channel_id is None:
            raise AssertionError(f"expect_audio: {who.name!r} is in no voice channel (bot_world.join_voice first)")
        in_media = bot_id in emulator.media_participants(channel_id)
        raise AssertionError(
            f"expect_audio: {who.name!r} did not hear the bot play {frequency:g} Hz within {within:g} s "
            f"(last heard: {heard:.0f} Hz; the bot is {'' if in_media else 'not '}in the channel's media)")

    def _channel_of(self, user_id: str) -> str | None:
        for channel in self._voice_channels():
            if any(u.get("userPublicId") == user_id for u in self.world.emulator.voice_users(channel)):
                return channel
        return None

    def _voice_channels(self) -> list[str]:
        server = getattr(self.world, "server", None)
        if server is None:
            return []
        return [c["publicId"] for c in self.world.emulator.channels(server.id) if c.get("type") == "VOICE"]
