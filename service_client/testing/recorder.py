"""What the clients of a test world saw, and the bounded waits that read it.

Every client the world watches through (a speaking user's client, the bot's own client once
handed to the world) gets a :class:`Recorder`: its ``message_create`` and
``message_reaction_add`` events in arrival order. The expectations of
:class:`~service_client.testing.world.BotWorld` scan a recorder for the first item that
matches and that no earlier expectation took, waiting on the recorder's condition (never
sleeping) until a deadline. A :class:`Probe`, registered on the bot's client just before an
action, tells when the bot's own listeners have handled the event the action caused.

Order: the emulator gives ids from one increasing counter, so "stored after X" is an id
comparison, whatever order two channels' events reached a client's worker threads in.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ..client import Client
from ..models.message import Message
from ..models.user import User

__all__ = ["Probe", "Recorder", "SeenReaction", "Taken", "after_mark", "scan_until"]

T = TypeVar("T")


@dataclass(frozen=True)
class SeenReaction:
    """A reaction added to a message, as a client of the world saw it (``message_reaction_add``).

    Returned by :meth:`BotWorld.expect_reaction
    <service_client.testing.world.BotWorld.expect_reaction>`.

    Attributes:
        message_id: The message's id.
        emoji: The emoji, as the reacting client sent it (``"👍"``, a custom emoji's text).
        user_id: Who reacted.
        user_name: Its name when the watching client knew it, else None.
    """

    message_id: str
    emoji: str
    user_id: str
    user_name: str | None


def after_mark(ident: str, mark: int) -> bool:
    """Whether an emulator id was given out after ``mark`` (ids increase; a non-numeric id, of
    some other server, counts as after)."""
    try:
        return int(ident) > mark
    except (TypeError, ValueError):
        return True


class Taken:
    """The message ids and reactions some expectation already returned, world-wide.

    Each message, and each reaction event, is returned by one expectation only. Thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._messages: set[str] = set()
        self._reactions: set[int] = set()

    def message(self, message: Message) -> bool:
        """Claim ``message``; False when an earlier expectation took it."""
        with self._lock:
            if message.id in self._messages:
                return False
            self._messages.add(message.id)
            return True

    def has(self, message: Message) -> bool:
        """Whether an expectation already returned ``message`` (nothing is claimed)."""
        with self._lock:
            return message.id in self._messages

    def reaction(self, reaction: SeenReaction) -> bool:
        """Claim one reaction event (by identity: a reaction removed and added again is a new
        one); False when an earlier expectation took it."""
        with self._lock:
            if id(reaction) in self._reactions:
                return False
            self._reactions.add(id(reaction))
            return True


class Recorder:
    """Every ``message_create`` and ``message_reaction_add`` one client received, in arrival order.

    The listeners run on the client's worker pool; readers wait on :attr:`cond`. Thread-safe.
    """

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.messages: list[Message] = []
        self.reactions: list[SeenReaction] = []

    def attach(self, client: Client) -> None:
        """Record ``client``'s events from now on."""
        client.on("message_create", self._message)
        client.on("message_reaction_add", self._reaction)

    def _message(self, message: Message) -> None:
        with self.cond:
            self.messages.append(message)
            self.cond.notify_all()

    def _reaction(self, info: dict[str, Any], user: User, message_id: str) -> None:
        emoji = info.get("emoji")
        seen = SeenReaction(message_id, emoji if isinstance(emoji, str) else str(emoji), user.id,
                            getattr(user, "username", None))
        with self.cond:
            self.reactions.append(seen)
            self.cond.notify_all()


def scan_until(
    recorder: Recorder,
    items: Callable[[], Sequence[T]],
    accept: Callable[[T], bool],
    timeout: float,
    failure: Callable[[], str],
) -> T:
    """The first item of ``items()`` (a list of ``recorder``, growing) that ``accept`` takes.

    ``accept`` runs with no lock held (it may call the test's own ``check``), once per item;
    it claims the item when it returns True. Waits on the recorder's condition until
    ``timeout`` seconds passed.

    Raises:
        AssertionError: Nothing was accepted in time; the text is ``failure()``.
        Exception: Whatever ``accept`` raised.
    """
    __tracebackhide__ = True
    deadline = time.monotonic() + timeout
    scanned = 0
    while True:
        with recorder.cond:
            fresh = list(items()[scanned:])
        scanned += len(fresh)
        for item in fresh:
            if accept(item):
                return item
        with recorder.cond:
            if len(items()) > scanned:
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            recorder.cond.wait(remaining)
    raise AssertionError(failure())


class Probe:
    """A listener registered on the bot's client just before an action: it keeps the arguments
    of every call, so the world can wait until the bot's listeners of that event have run.

    Listeners of one event run one after another in registration order, so when the probe (the
    last one registered) is called, the bot's own listeners for that event have returned.
    Thread-safe.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._calls: list[tuple[Any, ...]] = []

    def __call__(self, *args: Any) -> None:
        with self._cond:
            self._calls.append(args)
            self._cond.notify_all()

    def wait(self, matches: Callable[..., bool], timeout: float) -> bool:
        """Whether a call whose arguments ``matches`` accepts came within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        scanned = 0
        with self._cond:
            while True:
                for args in self._calls[scanned:]:
                    if matches(*args):
                        return True
                scanned = len(self._calls)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
