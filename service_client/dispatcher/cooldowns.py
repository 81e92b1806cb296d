"""The limits on running a command: cooldowns and ``max_concurrency``, per :class:`~service_client.BucketType`.

A command with ``cooldown=N`` runs at most once per N seconds in each bucket of its
``cooldown_per`` (each user by default; a member, a channel, a server, or everyone). The
dispatcher takes a turn here after the checks and the arguments passed, just before the
command runs, so a refused or mistyped invocation costs no turn. The time is read from the
client's clock (``client.clock``) at each invocation, so in the test world a cooldown moves
with ``bot_world.advance`` and in production a change of the computer's wall clock does not
shorten it.

A cooldown lives in memory, unless the dispatcher is given a :class:`CooldownStore`: then
each turn's expiry is also written there, as wall-clock time, and read back for a bucket
the memory does not know, so a daily cooldown survives a restart of the bot.

A command with ``max_concurrency=N`` has at most N runs going on at once in each bucket of
its ``concurrency_per`` (everyone together by default); one more is refused with
:class:`~service_client.errors.MaxConcurrencyReached` and costs no cooldown turn.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Protocol

from ..commands import BucketType, Command
from ..errors import CommandCooldownError, MaxConcurrencyReached
from ..events.clock import utcnow_of
from .context import CommandContext
from .failures import internal_error
from .help import PER_WORDS, duration_text

if TYPE_CHECKING:  # pragma: no cover
    from ..events.clock import Clock

__all__ = ["CommandLimits", "CooldownStore", "bucket_key"]

#: Cooldown entries kept before expired ones are swept.
_SWEEP_AT = 1024
#: A turn that ends less than this after now (seconds) has ended: a clock moved to the end of a
#: cooldown in steps (``advance(0.3)`` ten times) may fall a float rounding short of it.
_END_SLACK_S = 1e-6

class CooldownStore(Protocol):
    """Where a dispatcher keeps cooldown expiries so they survive a restart of the bot.

    Give one to ``CommandDispatcher(client, cooldown_store=store)``. Its methods are called
    on the worker thread that runs the command, may block (a SQLite query is fine) and must
    be thread-safe. An exception either method raises fails that invocation like an exception of
    the command (the author sees a short notice; the error is logged and emitted). A store
    on SQLite::

        class SqliteCooldowns:
            def __init__(self, path):
                self.db = sqlite3.connect(path, check_same_thread=False)
                self.lock = threading.Lock()
                self.db.execute("CREATE TABLE IF NOT EXISTS cooldowns (key TEXT PRIMARY KEY, until TEXT)")

            def get(self, key):
                with self.lock:
                    row = self.db.execute("SELECT until FROM cooldowns WHERE key = ?", (key,)).fetchone()
                return datetime.datetime.fromisoformat(row[0]) if row else None

            def set(self, key, until):
                with self.lock, self.db:
                    self.db.execute("INSERT OR REPLACE INTO cooldowns VALUES (?, ?)", (key, until.isoformat()))
    """

    def get(self, key: str) -> _dt.datetime | None:
        """When the cooldown of ``key`` ends, an aware datetime; None when the store has none.

        ``key`` names a command and a bucket: ``"daily:member:<server id>:<user id>"``.
        """
        ...

    def set(self, key: str, until: _dt.datetime) -> None:
        """Remember that the cooldown of ``key`` ends at ``until`` (an aware UTC datetime).

        A cooldown that would end after :attr:`datetime.datetime.max` ends at it.
        """
        ...


def bucket_key(per: BucketType, ctx: CommandContext) -> tuple[str, ...]:
    """The ids that name ``ctx``'s bucket of type ``per`` (``()`` for :attr:`BucketType.DEFAULT`)."""
    author = ctx.message.author
    assert author is not None  # the dispatcher ignores messages without an author
    server_id = ctx.server_id
    if per is BucketType.USER:
        return (author.id,)
    if per is BucketType.MEMBER:
        return (server_id or "dm", author.id)
    if per is BucketType.CHANNEL:
        return (ctx.channel_id,)
    if per is BucketType.SERVER:
        return (server_id,) if server_id else ("dm", author.id)
    return ()


class CommandLimits:
    """The cooldowns and concurrency of a dispatcher's commands; thread-safe.

    Args:
        clock: Returns the clock to read (the client's, read at each invocation).
        seconds: Monotonic seconds to measure cooldowns with instead of the clock's ``now()``.
        store: Where cooldown expiries are kept too; None keeps them in memory only.
    """

    def __init__(
        self,
        clock: Callable[[], Clock],
        *,
        seconds: Callable[[], float] | None = None,
        store: CooldownStore | None = None,
    ) -> None:
        self._clock = clock
        self._seconds = seconds
        self._store = store
        self._lock = threading.Lock()  # guards _until and _running
        self._until: dict[tuple[str, ...], float] = {}
        self._running: dict[tuple[str, ...], int] = {}

    @contextlib.contextmanager
    def hold(self, ctx: CommandContext, command: Command) -> Iterator[None]:
        """Take a concurrency place, then a cooldown turn, for the run inside the block.

        Raises:
            MaxConcurrencyReached: The command's ``max_concurrency`` runs go on in the bucket.
            CommandCooldownError: The bucket's last turn was less than the cooldown ago.
            CommandInvokeError: The cooldown store raised.
        """
        release = self._enter(ctx, command)
        try:
            self._take(ctx, command)
            yield
        finally:
            release()

    # -- max_concurrency ----------------------------------------------------------------------

    def _enter(self, ctx: CommandContext, command: Command) -> Callable[[], None]:
        number = command.max_concurrency
        if number is None:
            return _nothing
        key = (command.name, *bucket_key(command.concurrency_per, ctx))
        with self._lock:
            running = self._running.get(key, 0)
            if running < number:
                self._running[key] = running + 1
                return lambda: self._leave(key)
        per = command.concurrency_per
        runs = "one run" if number == 1 else f"{number} runs"
        raise MaxConcurrencyReached(
            f"{ctx.prefix}{ctx.invoked_with} is busy ({runs} at a time {PER_WORDS[per]}): try again when it is done.",
            number=number,
            per=per,
            command_name=command.name,
            context=ctx,
        )

    def _leave(self, key: tuple[str, ...]) -> None:
        with self._lock:
            left = self._running.get(key, 1) - 1
            if left > 0:
                self._running[key] = left
            else:
                self._running.pop(key, None)

    # -- cooldowns -----------------------------------------------------------------------------

    def _now(self) -> float:
        return self._seconds() if self._seconds is not None else self._clock().now()

    def _take(self, ctx: CommandContext, command: Command) -> None:
        if not command.cooldown:
            return
        key = (command.name, command.cooldown_per.value, *bucket_key(command.cooldown_per, ctx))
        now = self._now()
        with self._lock:
            until = self._until.get(key)
            if until is not None and until > now + _END_SLACK_S:
                wait: float | None = until - now
            else:
                wait = None
                if len(self._until) >= _SWEEP_AT:
                    for stale in [k for k, t in self._until.items() if t <= now]:
                        del self._until[stale]
                reserved = self._until[key] = now + command.cooldown
        if wait is None and self._store is not None:
            wait = self._take_stored(ctx, command, key, now, reserved)
        if wait is not None:
            raise CommandCooldownError(
                f"{ctx.prefix}{ctx.invoked_with} is on cooldown: try again in {duration_text(wait)}.",
                retry_after=wait,
                command_name=command.name,
                context=ctx,
                per=command.cooldown_per,
            )

    def _take_stored(
        self, ctx: CommandContext, command: Command, key: tuple[str, ...], now: float, reserved: float,
    ) -> float | None:
        """Check and write the store (no lock held); the wait when the stored turn is not over."""
        store = self._store
        assert store is not None
        name = ":".join(key)
        try:
            wall = utcnow_of(self._clock())
            stored = store.get(name)
            if stored is not None and (not isinstance(stored, _dt.datetime) or stored.utcoffset() is None):
                raise TypeError(f"the cooldown store's get({name!r}) must return an aware datetime or None, "
                                f"got {stored!r}")
            if stored is not None and stored > wall:
                wait = (stored - wall).total_seconds()
                with self._lock:
                    if self._until.get(key) == reserved:
                        self._until[key] = now + wait
                return wait
            try:
                until = wall + _dt.timedelta(seconds=command.cooldown)
            except OverflowError:  # a cooldown of millennia ("once ever"): the last datetime will do
                until = _dt.datetime.max.replace(tzinfo=_dt.timezone.utc)
            store.set(name, until)
        except Exception as exc:
            with self._lock:
                if self._until.get(key) == reserved:
                    del self._until[key]  # the command does not run: no turn taken
            raise internal_error(ctx, command.name, ctx.invoked_with, exc) from exc
        return None


def _nothing() -> None:
    """Release nothing (a command without ``max_concurrency``)."""
