"""A worker's acknowledgements and dead letters, each only under the lease its entry was read with.

Part of :class:`~service_client.fleet.consumer.Consumer`: the lanes queue the
entries they finished; the thread ``service_client-fleet-acks-<n>`` sends them
in batches (one script call per partition and 1,000 entries), each checked
against the partition's fencing token in Redis; a batch whose call failed is
sent again (acknowledging twice is harmless). Once an entry is acknowledged,
the nonces of the replies made while handling it are kept one more minute
instead of ``nonce_ttl`` (no redelivery can ask for them any more). A dead letter (an event whose
listeners kept raising, whose workers died running it, or that cannot be read)
is written with its error and acknowledged in one step; while Redis refuses it,
it is tried again until it is written (its lane waits), the lease is lost or
the worker stops.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from typing import TYPE_CHECKING

from .. import _defaults
from ._redis import RetryWait
from .sends import reply_nonce

if TYPE_CHECKING:
    from .consumer import Consumer, Ownership
    from .state import EntryContext

__all__ = ["Acknowledger"]

log = logging.getLogger("service_client.fleet")

#: Acknowledgements in one script call, at most.
_ACK_MAX = 1000
#: How long a reply's nonce is kept once its event is acknowledged, milliseconds.
_ACKED_NONCE_TTL_MS = 60_000


class Acknowledger:
    """The acknowledgements of one worker's consumer (see the module docs). Thread-safe.

    Attributes:
        unacked: Entries queued and not yet acknowledged (guarded by the lock).
        wake: Set to send what is queued now.
        done: Notified after each round.
        dead_lettered: Entries written to the dead-letter stream.
    """

    def __init__(self, consumer: Consumer) -> None:
        self._consumer = consumer
        self._redis = consumer._redis
        self._keys = consumer._keys
        self._group = consumer._group
        self._name = consumer._name
        self._stop = consumer._stop
        self._errors = consumer._errors
        self._scripts = consumer._scripts
        self._redact = consumer._feed.redact  # the bot token masked in what goes to Redis
        self._lock = threading.Lock()  # guards _pending and unacked
        self._pending: dict[Ownership, list[bytes]] = {}
        self._nonces: dict[Ownership, list[str]] = {}  # reply nonces of the queued entries
        self.unacked = 0
        self.wake = threading.Event()
        self.done = threading.Condition(threading.Lock())
        self.dead_lettered = 0

    def queue(self, o: Ownership, entry_id: bytes, event_id: str | None = None, replies: int = 0) -> None:
        """Queue the acknowledgement of an entry read under ``o`` (a lane finished it).

        Args:
            o: The hold it was read under.
            entry_id: Its stream id.
            event_id: Its event id when its handling replied (``replies`` times): those
                replies' nonces are kept a minute only once it is acknowledged.
            replies: The replies made while handling it.
        """
        nonces = [reply_nonce(self._group, event_id, i) for i in range(replies)] if event_id else []
        with self._lock:
            ids = self._pending.get(o)
            if ids is None:
                ids = self._pending[o] = []
            ids.append(entry_id)
            if nonces:
                self._nonces.setdefault(o, []).extend(nonces)
            o.unacked += 1
            self.unacked += 1
        if not self.wake.is_set():
            self.wake.set()

    def run(self) -> None:
        """The thread: send what is queued, in batches, until the consumer stops and nothing is left."""
        retry = RetryWait(self._stop)
        while True:
            self.wake.wait(0.05)
            self.wake.clear()
            with self._lock:
                batch, self._pending = self._pending, {}
                nonces, self._nonces = self._nonces, {}
            if batch:
                try:
                    self._ack(batch, nonces)
                    retry.reset()
                except self._errors:
                    with self._lock:  # put back, in front of newer ones
                        for o, ids in batch.items():
                            self._pending[o] = ids + self._pending.get(o, [])
                        for o, keys in nonces.items():
                            self._nonces[o] = keys + self._nonces.get(o, [])
                    if not retry.wait():
                        return
                    continue
            with self.done:
                self.done.notify_all()
            if self._stop.is_set() and not self._pending:
                return

    def _ack(self, batch: dict[Ownership, list[bytes]], nonces: dict[Ownership, list[str]]) -> None:
        pipe = self._redis.pipeline(transaction=False)
        calls: list[Ownership] = []
        for o, ids in batch.items():
            if o.lost:
                continue  # fenced anyway: the next owner handles them again
            for start in range(0, len(ids), _ACK_MAX):
                self._scripts["ack"](keys=[o.lease_key, o.stream],
                                     args=[self._group, o.value, b",".join(ids[start:start + _ACK_MAX])], client=pipe)
                calls.append(o)
        results = pipe.execute() if calls else []
        fenced = set()
        for o, result in zip(calls, results, strict=True):
            if result == -1:
                fenced.add(o)
                self._consumer._lose(o, "it was fenced off at an acknowledgement")
        done = [n for o, keys in nonces.items() if o in batch and not o.lost and o not in fenced for n in keys]
        if done:
            pipe = self._redis.pipeline(transaction=False)
            for nonce in done:
                pipe.pexpire(self._keys.nonce(nonce), _ACKED_NONCE_TTL_MS, lt=True)
            pipe.execute(raise_on_error=False)
        with self._lock:
            for o, ids in batch.items():
                o.unacked -= len(ids)
                self.unacked -= len(ids)

    def dead_letter(self, ctx: EntryContext, exc: BaseException | None, *, hold: bool = False,
                    reason: str | None = None) -> None:
        """Write the entry to the dead-letter stream with its error (and acknowledge it unless ``hold``).

        Runs on the entry's lane. While Redis fails (away, or refusing writes) the write is tried
        again (waits of 0.05 s doubling up to 0.5 s) until it is written, or the partition's lease
        is lost, or the worker stops: then the next owner delivers the entry again.

        Args:
            ctx: The entry.
            exc: What its listeners raised, or None (see ``reason``).
            hold: Write it and leave it pending (``poison="hold"``).
            reason: The error to record when ``exc`` is None; default: its workers died running it.
        """
        if exc is None:
            error = reason or f"delivered {ctx.deliveries} times to workers that stopped while handling it"
            text = error
        else:
            error = f"{type(exc).__name__}: {exc}"
            text = self._redact("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))[-4000:]
            error = self._redact(error)
        fields = ["event", ctx.event, "data", ctx.data, "partition", ctx.partition, "entry", ctx.entry_id,
                  "event_id", ctx.event_id, "error", error, "traceback", text, "deliveries", ctx.deliveries,
                  "worker", self._name, "group", self._group]
        o: Ownership = ctx.owner
        log.error("event %s (partition %d, entry %s) failed %d deliveries: written to the dead-letter stream %s%s: %s",
                  ctx.event, ctx.partition, ctx.entry_id.decode(), ctx.deliveries, self._keys.dead,
                  "; its lane waits for it" if hold else "", error)
        retry = RetryWait(self._stop)
        failing_since: float | None = None
        while True:
            try:
                if hold:
                    self._redis.xadd(self._keys.dead, dict(zip(fields[::2], fields[1::2], strict=True)),
                                     maxlen=_defaults.FLEET_DEAD_LETTER_MAX_LENGTH, approximate=True)
                else:
                    done = self._scripts["dead"](keys=[o.lease_key, o.stream, self._keys.dead], args=[
                        self._group, o.value, ctx.entry_id, _defaults.FLEET_DEAD_LETTER_MAX_LENGTH, *fields])
                    if done == -1:
                        self._consumer._lose(o, "it was fenced off at a dead letter")
                        return
                break
            except self._errors as exc2:
                if failing_since is None:
                    failing_since = time.monotonic()
                    log.warning("could not write the dead letter of entry %s (partition %d) (%s: %s): tried "
                                "again until it is written; its lane waits", ctx.entry_id.decode(), ctx.partition,
                                type(exc2).__name__, exc2)
                if o.lost or not retry.wait():
                    log.warning("the dead letter of entry %s (partition %d) was not written (%s): the next "
                                "owner delivers the event again", ctx.entry_id.decode(), ctx.partition,
                                "the partition was lost" if o.lost else "the worker stops")
                    return
        if failing_since is not None:
            log.info("wrote the dead letter of entry %s (partition %d) after %.1f s", ctx.entry_id.decode(),
                     ctx.partition, time.monotonic() - failing_since)
        self.dead_lettered += 1
