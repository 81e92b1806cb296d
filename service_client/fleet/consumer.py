"""A worker's partitions: membership, leases, the fenced reads, the lanes' entries and the acks.

Threads of one worker (daemons, stopped by the worker's ``stop()``):

- ``service_client-fleet-leases-<n>``: every tick (a tenth of the lease TTL, at
  most 100 ms) it renews the worker's place among the group's members and
  computes which partitions are its own (rendezvous hashing over the live
  members); it acquires the free ones it should own, renews its leases every
  third of their TTL, and hands over the ones it should no longer own once
  their lanes are drained.
- ``service_client-fleet-reader-<n>``: reads the owned partitions under their
  leases (a partition newly owned gives its pending entries first, in id
  order, then new ones), applies each entry with the client's parsers and
  queues its listeners in the entry's lane (its channel, else its server) on
  the worker's pool. At most ``max_in_flight`` entries wait at once, and at most
  a quarter of them in one lane: a partition with a full lane is not read until
  the lane has room (a listener that hangs holds its partition only, and is
  logged). An entry it cannot take (not a publisher's, unreadable JSON, an event
  id that is not UTF-8) goes to the dead letters with the reason. The lease
  thread replaces a reader thread that died.
- ``service_client-fleet-acks-<n>``: acknowledges handled entries in batches,
  each only under the lease it was read with (:mod:`service_client.fleet.acks`).
- ``service_client-fleet-state-<n>``: applies the shared-state stream to the caches.
"""

from __future__ import annotations

import functools
import itertools
import logging
import threading
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from .. import _defaults
from ._redis import RetryWait, loads, redis_errors
from .acks import Acknowledger
from .routing import STATE_EVENTS, FleetKeys, rendezvous_owner
from .scripts import ACK, ACQUIRE, DEAD_LETTER, HEARTBEAT, READ, RELEASE, RENEW
from .state import EntryContext, apply_captured, run_in

if TYPE_CHECKING:
    from ..client.source import EventFeed
    from .worker import FleetWorker

__all__ = ["Consumer", "Ownership"]

log = logging.getLogger("service_client.fleet")

#: Entries read from one partition in one call, at most; and at least (a partition whose last read
#: was not full asks for this many: ``max_in_flight`` may be passed by this much per partition).
_READ_MAX = 500
_READ_MIN = 8
#: Shared-state events whose cache effect is remembered by event id (its partition copy reuses it).
_APPLIED_MAX = 10_000
#: Longest wait between two runs of an event held by ``poison="hold"``, seconds.
_HOLD_CAP_S = 30.0
#: Bound of the wait for an event's request (a member refetch) before its listeners run, seconds.
_SLOT_WAIT_S = (_defaults.EVENT_FETCH_TIMEOUT_MS / 1000) * (_defaults.EVENT_FETCH_MAX_RETRIES + 1) + 5
#: A listener running this long is logged at WARNING (then again each time its run time doubles), seconds.
_HUNG_AFTER_S = _defaults.FLEET_HUNG_LISTENER_S
#: How long the runs of a redelivered entry are remembered in Redis, milliseconds.
_DEATHS_TTL_MS = 86_400_000


class _Unreadable(ValueError):
    """A stream entry the reader cannot take (its reason is the text)."""


def _own_seq(entry_id: bytes, event_id: bytes, partition: bytes) -> int | None:
    """The sequence number of an entry a publisher added (id ``<seq>-0``, event id
    ``<epoch>:<partition>:<seq>``, ``partition`` its number as ASCII), else None (another Redis
    writer added it)."""
    seq, _, sub = entry_id.partition(b"-")
    if sub != b"0":
        return None
    parts = event_id.rsplit(b":", 2)
    if len(parts) != 3 or parts[2] != seq or parts[1] != partition or not seq.isdigit():
        return None
    return int(seq)

_ids = iter(range(1 << 62))


class Ownership:
    """A worker's hold on one partition: its lease and where its reads are.

    Attributes:
        partition: The partition number.
        token: The fencing token of the lease.
        value: The lease's value (``<instance>.<hold>:<token>``, ``<hold>`` numbering the
            worker's holds).
        after: The id reads continue after: ``"0"`` and then ids while the pending entries
            are read, ``">"`` once they are done.
        valid_until: ``time.monotonic()`` before which the lease surely holds.
        lost: The lease was found taken or expired: entries read under it are not run.
        leaving: The partition goes to another worker once its lanes are drained.
        in_flight: Entries read under this lease and not finished.
        lanes: Per lane, its entries read under this lease and not finished.
        full: Lanes at their bound: the partition is not read while there is one.
        last_seq: The sequence of the last entry read (to see gaps), 0 for none yet.
    """

    __slots__ = ("after", "asked", "deaths_key", "full", "hot", "in_flight", "lanes", "last_id", "last_seq",
                 "lease_key", "leaving", "leaving_since", "lost", "partition", "partition_ascii", "stream", "token",
                 "unacked", "valid_until", "value")

    def __init__(self, partition: int, token: int, value: str, keys: FleetKeys, valid_until: float) -> None:
        self.partition = partition
        self.partition_ascii = str(partition).encode()
        self.token = token
        self.value = value
        self.lease_key = keys.lease(partition)
        self.stream = keys.stream(partition)
        self.deaths_key = keys.deaths(partition)
        self.lanes: dict[str, int] = {}
        self.full = 0
        self.after = "0"
        self.valid_until = valid_until
        self.lost = False
        self.leaving = False
        self.leaving_since = 0.0
        self.in_flight = 0
        self.unacked = 0
        self.hot = True  # its last read was full: the next one asks for more
        self.asked = 0
        self.last_seq = 0
        self.last_id: bytes | None = None

    def valid(self) -> bool:
        """True while the lease surely holds."""
        return not self.lost and time.monotonic() < self.valid_until


class Consumer:
    """The stream side of a :class:`~service_client.fleet.FleetWorker` (see the module docs)."""

    def __init__(self, worker: FleetWorker, feed: EventFeed, redis: Any, keys: FleetKeys, *, partitions: int) -> None:
        self._worker = worker
        self._feed = feed  # the client's way in: its parsers, its listener registry, its pool
        self._redis = redis
        self._keys = keys
        self._partitions = partitions
        self._group = worker.group
        self._name = worker.name
        self._instance = worker.instance
        self._holds = itertools.count(1)  # numbers this worker's holds (each lease value is unique)
        self._ttl_ms = worker.lease_ttl_ms
        self._max_in_flight = worker.max_in_flight
        #: Entries of one lane read and not finished, at most (its partition waits past it).
        self._lane_max = max(1, worker.max_in_flight // 4)
        #: Per pool thread, the entry it runs and since when (``time.monotonic()``), else None;
        #: each thread writes its own slot only, the lease thread reads them (no lock).
        self._running: dict[int, tuple[EntryContext, float] | None] = {}
        self._hung_logged: dict[EntryContext, float] = {}  # lease thread only: run time last logged
        #: Per partition, the highest sequence number this worker read (used when Redis lost its own).
        self._seen: dict[int, int] = {}
        self._errors = redis_errors()
        self._stop = threading.Event()  # stop every thread
        self._stop_reading = threading.Event()  # stop reading and acquiring (graceful stop)
        self._wake = threading.Event()  # the reader has new partitions to read
        self._owned_lock = threading.Lock()  # guards _owned
        self._owned: dict[int, Ownership] = {}
        self._to_release: list[Ownership] = []  # given up locally, maybe still held in Redis
        self._flight = threading.Condition(threading.Lock())  # guards _in_flight; notified when it drops
        self._in_flight = 0
        self._parse_lock = threading.Lock()  # the parsers run on one thread at a time
        self._applied: OrderedDict[str, list[Any] | None] = OrderedDict()
        self.members: list[str] = []
        self.handled = 0
        self.lost_entries = 0
        self._scripts = {name: redis.register_script(text) for name, text in (
            ("ack", ACK), ("acquire", ACQUIRE), ("dead", DEAD_LETTER), ("heartbeat", HEARTBEAT),
            ("read", READ), ("release", RELEASE), ("renew", RENEW))}
        self.acks = Acknowledger(self)
        self._threads: list[threading.Thread] = []
        self._reader: threading.Thread | None = None
        #: Set by the reader thread as it ends; the lease thread replaces it then (never before it
        #: started: a reader created and not yet running is not a dead one).
        self._reader_ended = threading.Event()
        self._reader_n = 0
        self._acker: threading.Thread | None = None
        self.state_after = "$"
        self._wake_key = keys.wake(worker.instance.replace("/", "-"))
        self._wake_after: Any = "0-0"  # the stream is this instance's own: every wake counts
        self._rebalance_after: Any = "$"

    @property
    def partition_count(self) -> int:
        """The namespace's number of partitions."""
        return self._partitions

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the threads."""
        n = next(_ids)
        for role, target in (("leases", self._lease_loop), ("reader", self._reader_main), ("acks", self.acks.run),
                             ("state", self._state_loop)):
            thread = threading.Thread(target=target, name=f"service_client-fleet-{role}-{n}", daemon=True)
            self._threads.append(thread)
            if role == "reader":
                self._reader = thread
            elif role == "acks":
                self._acker = thread
            thread.start()

    def _reader_main(self) -> None:
        """The reader thread: reads until stopped; a failure is logged, and the lease thread
        starts another reader (:meth:`_watch_reader`)."""
        try:
            self._read_loop()
        except Exception:  # noqa: BLE001 - logged; the lease thread replaces the reader
            log.exception("worker %s: its reader thread failed; another one takes over", self._name)
        finally:
            self._reader_ended.set()

    def _watch_reader(self) -> None:
        """Lease thread: start a new reader when the reader thread died (a bug, or an error the
        reader does not expect). Entries it read and did not queue are read again, in order."""
        reader = self._reader
        if reader is None or not self._reader_ended.is_set() or self._stop_reading.is_set():
            return
        self._reader_ended.clear()
        log.error("worker %s: its reader thread died; a new one reads its partitions", self._name)
        with self._owned_lock:
            owned = list(self._owned.values())
        for o in owned:
            o.after = o.last_id.decode() if o.last_id is not None else "0"
            o.last_seq = 0
        self._reader_n += 1
        thread = threading.Thread(target=self._reader_main, name=f"{reader.name}.{self._reader_n}", daemon=True)
        self._threads.append(thread)
        self._reader = thread
        thread.start()

    def _watch_listeners(self) -> None:
        """Lease thread: log a listener that runs past ``_HUNG_AFTER_S``, with its lane and run
        time (again each time that time doubles)."""
        now = time.monotonic()
        logged = self._hung_logged
        running = [slot for slot in list(self._running.values()) if slot is not None]
        for ctx, since in running:
            ran = now - since
            if ran < _HUNG_AFTER_S or ran < 2 * logged.get(ctx, 0.0):
                continue
            logged[ctx] = ran
            o: Ownership = ctx.owner
            lane = ctx.lane if not ctx.lane.startswith("\x00") else f"partition {ctx.partition}"
            log.warning(
                "worker %s: a listener of %s has run for %.0f s in lane %s (partition %d, entry %s); that "
                "lane's later events wait (it holds %d, at most %d before its partition waits), other "
                "channels go on", self._name, ctx.event, ran, lane, ctx.partition, ctx.entry_id.decode(),
                o.lanes.get(ctx.lane, 0), self._lane_max)
        if len(logged) > len(running):
            live = {ctx for ctx, _ in running}
            for ctx in [c for c in logged if c not in live]:
                del logged[ctx]

    def create_groups(self) -> None:
        """Create the group on every partition stream (from its first entry), unless it exists.

        Raises:
            redis.RedisError, OSError: Redis failed.
        """
        pipe = self._redis.pipeline(transaction=False)
        for part in range(self._partitions):
            pipe.xgroup_create(self._keys.stream(part), self._group, id="0", mkstream=True)
        for result in pipe.execute(raise_on_error=False):
            if isinstance(result, Exception) and "BUSYGROUP" not in str(result):
                raise result
        log.info("worker %s: the group %s is on every partition stream", self._name, self._group)

    def _wake_reader(self) -> None:
        """Wake the reader, also from a blocking read in Redis (best effort)."""
        self._wake.set()
        try:
            pipe = self._redis.pipeline(transaction=False)
            pipe.xadd(self._wake_key, {"w": "1"}, maxlen=10, approximate=False)
            pipe.pexpire(self._wake_key, 60_000)
            pipe.execute()
        except self._errors:
            pass

    def _announce(self) -> None:
        """Tell the group's other workers to look at the members again now (best effort)."""
        try:
            pipe = self._redis.pipeline(transaction=False)
            pipe.xadd(self._keys.rebalance, {"w": self._name}, maxlen=100, approximate=True)
            pipe.pexpire(self._keys.rebalance, 3_600_000)
            pipe.execute()
        except self._errors:
            pass

    def owned(self) -> list[int]:
        """The partitions this worker holds now, sorted."""
        with self._owned_lock:
            return sorted(p for p, o in self._owned.items() if not o.lost)

    def drain(self, timeout: float) -> bool:
        """Stop reading and acquiring; wait until every entry read is finished and acknowledged.

        Returns:
            True when drained within ``timeout`` seconds.
        """
        self._stop_reading.set()
        self._wake_reader()
        deadline = time.monotonic() + timeout
        reader = self._reader
        if reader is not None and reader is not threading.current_thread():
            reader.join(max(0.01, deadline - time.monotonic()))  # its last read is queued in the lanes
        with self._flight:
            while self._in_flight:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._flight.wait(min(left, 0.1))
        acks = self.acks
        acks.wake.set()
        with acks.done:
            while acks.unacked and self._acker is not None and self._acker.is_alive():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                acks.wake.set()
                acks.done.wait(min(left, 0.05))
        return True

    def leave(self) -> None:
        """Release every lease still held and leave the group's members (best effort)."""
        with self._owned_lock:
            held = [o for o in self._owned.values() if not o.lost]
            self._owned.clear()
        try:
            if held:
                self._scripts["release"](keys=[o.lease_key for o in held], args=[o.value for o in held])
            self._scripts["heartbeat"](keys=[self._keys.members], args=[self._name, self._ttl_ms, "0"])
            self._announce()
        except self._errors as exc:
            log.warning("could not hand the partitions over (%s): they move when their leases expire",
                        type(exc).__name__)

    def stop(self, timeout: float) -> None:
        """Stop every thread."""
        self._stop_reading.set()
        self._stop.set()
        self._wake.set()
        self.acks.wake.set()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(max(0.01, deadline - time.monotonic()))

    # -- leases ------------------------------------------------------------------------------

    def _lease_loop(self) -> None:
        tick = min(0.1, self._ttl_ms / 10000)
        renew_every = self._ttl_ms / 3000
        renewed_at = 0.0
        retry = RetryWait(self._stop)
        announce = True  # a new member: the others look again at once
        while not self._stop.is_set():
            try:
                now = time.monotonic()
                with self._owned_lock:
                    release, self._to_release = self._to_release, []
                if release:
                    self._scripts["release"](keys=[o.lease_key for o in release], args=[o.value for o in release])
                if now - renewed_at >= renew_every:
                    self._renew()
                    renewed_at = now
                if not self._stop_reading.is_set():
                    self._rebalance()
                self._hand_over()
                self._watch_reader()
                self._watch_listeners()
            except self._errors:
                if not retry.wait():
                    return
                continue
            retry.reset()
            if announce:
                self._announce()
                announce = False
            self._wait_tick(tick)

    def _wait_tick(self, tick: float) -> None:
        """Wait ``tick`` seconds, or less when a worker of the group joined or left."""
        if self._stop.is_set():
            return
        try:
            got = self._redis.xread({self._keys.rebalance: self._rebalance_after}, count=10,
                                    block=max(1, int(tick * 1000)))
        except self._errors:
            self._stop.wait(tick)
            return
        for _stream, entries in got or []:
            if entries:
                self._rebalance_after = entries[-1][0]

    def _renew(self) -> None:
        with self._owned_lock:
            held = [o for o in self._owned.values() if not o.lost]
        if not held:
            return
        sent = time.monotonic()
        results = self._scripts["renew"](keys=[o.lease_key for o in held],
                                         args=[self._ttl_ms, *(o.value for o in held)])
        lost = []
        for o, ok in zip(held, results, strict=True):
            if ok:
                o.valid_until = sent + self._ttl_ms * 0.0009
            elif self._lose(o, None):
                lost.append(o.partition)
        if lost:
            log.warning("worker %s lost partitions %s (their leases expired or were taken: a pause, or Redis "
                        "away): their entries go to the next owner", self._name, ", ".join(map(str, sorted(lost))))

    def _lose(self, o: Ownership, why: str | None) -> bool:
        """Give a partition up: its entries read and not run are skipped. True when it was held.

        ``why`` is logged at WARNING (None: the caller logs).
        """
        if o.lost:
            return False
        o.lost = True
        with self._owned_lock:
            if self._owned.get(o.partition) is o:
                del self._owned[o.partition]
        if why is not None:
            log.warning("worker %s lost partition %d (%s): its entries go to the next owner", self._name,
                        o.partition, why)
        return True

    def _rebalance(self) -> None:
        members = [m.decode() if isinstance(m, bytes) else str(m) for m in self._scripts["heartbeat"](
            keys=[self._keys.members], args=[self._name, self._ttl_ms, "1"])]
        self.members = members
        desired = {p for p in range(self._partitions) if rendezvous_owner(p, members) == self._name}
        with self._owned_lock:
            owned = dict(self._owned)
        now = time.monotonic()
        for part, o in owned.items():
            if part not in desired and not o.leaving:
                o.leaving = True
                o.leaving_since = now
        missing = sorted(desired - owned.keys())
        if not missing:
            return
        pipe = self._redis.pipeline(transaction=False)
        # Each hold's value is its own even where the fencing token is not: a Redis that lost its
        # data counts tokens from 1 again, and a hold lost before it would pass for the new one.
        owners = [f"{self._instance}.{next(self._holds)}" for _ in missing]
        for part, owner in zip(missing, owners, strict=True):
            self._scripts["acquire"](keys=[self._keys.lease(part), self._keys.fence(part)],
                                     args=[owner, self._ttl_ms], client=pipe)
        sent = time.monotonic()
        tokens = pipe.execute()
        got = False
        for part, owner, token in zip(missing, owners, tokens, strict=True):
            if token:
                o = Ownership(part, int(token), f"{owner}:{int(token)}", self._keys,
                              sent + self._ttl_ms * 0.0009)
                with self._owned_lock:
                    self._owned[part] = o
                got = True
        if got:
            self._wake_reader()

    def _hand_over(self) -> None:
        """Release the leases of the partitions leaving once their entries are finished and acknowledged."""
        with self._owned_lock:
            leaving = [o for o in self._owned.values() if o.leaving and not o.lost]
        if not leaving:
            return
        drain = self._worker.drain_timeout
        now = time.monotonic()
        ready = [o for o in leaving if (o.in_flight == 0 and o.unacked == 0) or now - o.leaving_since > drain]
        if not ready:
            self.acks.wake.set()
            return
        with self._owned_lock:
            for o in ready:
                o.lost = True
                if self._owned.get(o.partition) is o:
                    del self._owned[o.partition]
        self._scripts["release"](keys=[o.lease_key for o in ready], args=[o.value for o in ready])

    # -- reading -----------------------------------------------------------------------------

    def _read_loop(self) -> None:
        retry = RetryWait(self._stop)
        while not self._stop_reading.is_set():
            with self._flight:
                while self._in_flight >= self._max_in_flight and not self._stop_reading.is_set():
                    self._flight.wait(0.1)
                room = self._max_in_flight - self._in_flight
            with self._owned_lock:
                owned = [o for o in self._owned.values() if o.valid() and not o.leaving and not o.full]
            self._wake.clear()
            if not owned or room <= 0:
                self._wake.wait(0.05)
                continue
            try:
                got = self._read(owned, room)
                if not got and not self._stop_reading.is_set():
                    self._wait_for_entries(owned)
            except self._errors as exc:
                log.debug("worker %s: a read failed (%s: %s)", self._name, type(exc).__name__, exc)
                if "NOGROUP" in str(exc):
                    self.create_groups()  # Redis lost its data (a restart without persistence)
                # A read whose answer was lost may have moved entries to the pending list: read
                # the pending entries after the last one taken again, in order, before new ones.
                for o in owned:
                    if o.after == ">":
                        o.after = o.last_id.decode() if o.last_id is not None else "0"
                        o.last_seq = 0
                if not retry.wait():
                    return
                continue
            retry.reset()

    def _read(self, owned: list[Ownership], room: int) -> int:
        """One fenced read of every owned partition; the entries taken (plus partitions that
        finished their pending entries, which want another read at once).

        The room (``max_in_flight`` less what is in flight) goes to the partitions whose last
        read was full; the others read a few entries each, so that a busy partition is read in
        large batches while the idle ones cost little.
        """
        keys: list[str] = []
        args: list[Any] = [self._group]
        hot = sum(1 for o in owned if o.hot) or 1
        for o in owned:
            keys += [o.lease_key, o.stream]
            count = max(_READ_MIN, min(_READ_MAX, room // hot)) if o.hot else _READ_MIN
            count = min(count, self._lane_max)  # one read fills one lane at most to its bound
            o.asked = count
            args += [o.value, f"p{o.partition}", o.after, count, o.partition]
        keys.append(self._keys.seqs)
        results = self._scripts["read"](keys=keys, args=args)
        worker = self._worker
        total = 0
        for o, result in zip(owned, results, strict=True):
            if not result:
                self._lose(o, "it was fenced off at a read")
                continue
            entries, pending, last, prev = result
            entries = entries or []
            if not o.last_seq and o.after == ">":
                # The first new entries of this hold: the group's last read is where a gap starts
                # (or this worker's own, should Redis have lost the group's).
                o.last_seq = int(prev) or self._seen.get(o.partition, 0)
            o.hot = len(entries) >= o.asked
            history = o.after != ">"
            deliveries: dict[bytes, int] = {}
            if history:
                for item in pending or []:
                    deliveries[item[0]] = int(item[3]) + 1  # this read is one more delivery
                if not entries:
                    o.after = ">"
                    o.last_seq = 0  # the first new entry follows the group's last read, not these
                    total += 1  # read new entries at once, without waiting
                    continue
                o.after = entries[-1].split(b"\n", 1)[0].decode()
            elif not entries:
                o.last_id = last if last else o.last_id  # the wait for new entries starts there
                continue
            total += len(entries)
            for entry in entries:
                entry_id, event_id, data = entry.split(b"\n", 2)
                try:
                    self._take(worker, o, entry_id, event_id, data, deliveries.get(entry_id, 1), history)
                except Exception as exc:  # noqa: BLE001 - whatever an entry holds, the reader goes on
                    self._reject(o, entry_id, event_id, data, deliveries.get(entry_id, 1),
                                 f"{type(exc).__name__}: {exc}"[:500])
            if o.last_seq > self._seen.get(o.partition, 0):
                self._seen[o.partition] = o.last_seq
        return total

    def _take(self, worker: FleetWorker, o: Ownership, entry_id: bytes, event_id_raw: bytes, data: bytes,
              deliveries: int, history: bool) -> None:
        """Apply one entry and queue its listeners in its lane (reader thread).

        Raises:
            Exception: The entry cannot be taken (the caller dead-letters it with the reason).
        """
        o.last_id = entry_id
        if not data and not event_id_raw:
            log.error("partition %d: entry %s is lost (trimmed before it was handled): acknowledged unhandled",
                      o.partition, entry_id.decode())
            self.lost_entries += 1
            self.acks.queue(o, entry_id)
            return
        seq = _own_seq(entry_id, event_id_raw, o.partition_ascii)
        if seq is None:
            raise _Unreadable("not an event of an EventPublisher (another program added it to the stream)")
        if not history and o.last_seq and seq > o.last_seq + 1:
            log.warning("partition %d: events %d to %d are missing (trimmed before this group read them, or "
                        "lost by Redis)", o.partition, o.last_seq + 1, seq - 1)
            self.lost_entries += seq - o.last_seq - 1
        if seq > o.last_seq:
            o.last_seq = seq
        event_id = event_id_raw.decode()
        event, key, args = loads(data)
        if not isinstance(event, str) or not isinstance(args, list):
            raise _Unreadable("not an event: [name, key, arguments] expected")
        ctx = EntryContext(o, o.partition, entry_id, event_id, event, data, (o.lease_key, o.value),
                           deliveries)
        ctx.redelivered = history and deliveries > 1
        captured = self.apply(event, args, event_id, state=event in STATE_EVENTS)
        ctx.lane = key if isinstance(key, str) and key else f"\x00p{o.partition}"
        self._queue(o, ctx, functools.partial(self._run_entry, ctx, captured))

    def _reject(self, o: Ownership, entry_id: bytes, event_id: bytes, data: bytes, deliveries: int,
                reason: str) -> None:
        """Queue the dead letter of an entry the reader cannot take (reader thread)."""
        ctx = EntryContext(o, o.partition, entry_id, event_id.decode("utf-8", "backslashreplace"), "(unreadable)", data,
                           (o.lease_key, o.value), deliveries)
        ctx.lane = f"\x00p{o.partition}"
        self._queue(o, ctx, functools.partial(self._run_rejected, ctx, f"unreadable entry: {reason}"))

    def _queue(self, o: Ownership, ctx: EntryContext, run: Any) -> None:
        """Count an entry in flight (in the worker, its partition and its lane) and queue its run."""
        lane = ctx.lane
        with self._flight:
            self._in_flight += 1
            o.in_flight += 1
            held = o.lanes.get(lane, 0) + 1
            o.lanes[lane] = held
            if held == self._lane_max:
                o.full += 1
        self._feed.submit(run, key=lane)

    def _finished(self, o: Ownership, lane: str) -> None:
        """An entry queued by :meth:`_queue` is finished (pool thread)."""
        with self._flight:
            self._in_flight -= 1
            o.in_flight -= 1
            held = o.lanes[lane] - 1
            if held:
                o.lanes[lane] = held
            else:
                del o.lanes[lane]
            if held == self._lane_max - 1:
                o.full -= 1
                if not o.full:
                    self._wake.set()  # its partition is read again
            self._flight.notify_all()

    def _run_rejected(self, ctx: EntryContext, reason: str) -> None:
        try:
            if not ctx.owner.lost:
                self.acks.dead_letter(ctx, None, reason=reason)
        finally:
            self._finished(ctx.owner, ctx.lane)

    def _wait_for_entries(self, owned: list[Ownership]) -> None:
        """Block up to 100 ms for a new entry in an owned partition (nothing is taken)."""
        live = [o for o in owned if o.after == ">"]
        if len(live) != len(owned) or self._wake.is_set():
            return  # a partition still has pending entries to read, or a new one came
        streams: dict[str, Any] = {o.stream: (o.last_id or "$") for o in live}
        streams[self._wake_key] = self._wake_after
        got = self._redis.xread(streams, count=1, block=500)
        for stream, entries in got or []:
            if stream.decode() == self._wake_key and entries:
                self._wake_after = entries[-1][0]

    # -- applying ----------------------------------------------------------------------------

    def apply(self, event: str, args: list[Any], event_id: str, *, state: bool) -> list[Any]:
        """The events the parsers dispatch for one entry (its cache effect applied once)."""
        with self._parse_lock:
            if state and event_id:
                known = self._applied.pop(event_id, None)
                if known is not None:
                    return known  # applied from the shared-state stream already: its events
                self._applied[event_id] = None
                while len(self._applied) > _APPLIED_MAX:
                    self._applied.popitem(last=False)
            return apply_captured(self._feed.apply, event, args, event_id)

    def _apply_state(self, event: str, args: list[Any], event_id: str) -> None:
        with self._parse_lock:
            if event_id in self._applied:
                del self._applied[event_id]  # its partition copy came first
                return
            self._applied[event_id] = apply_captured(self._feed.apply, event, args, event_id)
            while len(self._applied) > _APPLIED_MAX:
                self._applied.popitem(last=False)

    def _state_loop(self) -> None:
        retry = RetryWait(self._stop)
        after = self.state_after
        last_seq = 0
        while not self._stop.is_set():
            try:
                got = self._redis.xread({self._keys.state: after}, count=200, block=500)
            except self._errors:
                if not retry.wait():
                    return
                continue
            retry.reset()
            for entry_id, fields in (got[0][1] if got else []):
                after = entry_id
                seq = int(entry_id.split(b"-", 1)[0])
                if last_seq and seq > last_seq + 1:
                    log.warning("the shared-state stream lost %d events before this worker read them: caches "
                                "may be stale until the next change", seq - last_seq - 1)
                last_seq = seq
                try:
                    event, _key, args = loads(fields[b"d"])
                    self._apply_state(event, args, fields.get(b"i", b"").decode())
                except Exception as exc:  # noqa: BLE001 - a bad entry never stops the caches
                    log.warning("skipped a malformed shared-state entry: %s", type(exc).__name__)

    # -- running (pool threads) --------------------------------------------------------------

    def _run_entry(self, ctx: EntryContext, captured: list[Any]) -> None:
        o: Ownership = ctx.owner
        me = threading.get_ident()
        self._running[me] = (ctx, time.monotonic())
        counted = False
        try:
            if not o.valid():
                if not o.lost:
                    # Its lease was not renewed in time (Redis slow or away), though Redis may still
                    # hold it for this worker: give it up (released by the lease thread), so that
                    # the next owner, this worker or another, reads the skipped entries again.
                    if self._lose(o, "its lease could not be renewed in time"):
                        with self._owned_lock:
                            self._to_release.append(o)
                return  # lost meanwhile: the next owner runs it
            worker = self._worker
            if ctx.redelivered:
                deaths = self._count_run(ctx)
                counted = deaths is not None
                ctx.deliveries = (deaths or 0) + 1
                if deaths and deaths >= max(1, worker.max_deliveries - 1):
                    # Its worker died while running it on every redelivery (and, likely, on its
                    # first delivery): it is not run again. Entries behind it never ran: not counted.
                    self.acks.dead_letter(ctx, None)
                    return
            runs = self._feed.prepare(captured, timeout=_SLOT_WAIT_S)
            hold = worker.poison == "hold"
            dead = False
            delay = 0.05
            replies = 0
            while True:
                ctx.replies = 0
                ctx.failures = []
                run_in(ctx, functools.partial(self._run_once, ctx, runs))
                replies = max(replies, ctx.replies)
                if not ctx.failures:
                    self.handled += 1
                    self.acks.queue(o, ctx.entry_id, ctx.event_id if replies else None, replies)
                    return
                if ctx.deliveries >= worker.max_deliveries:
                    if not dead:
                        self.acks.dead_letter(ctx, ctx.failures[-1], hold=hold)
                        dead = True
                    if not hold:
                        return
                    delay = min(_HOLD_CAP_S, delay * 2)
                else:
                    delay = min(2.0, delay * 2)
                ctx.deliveries += 1
                self._running[me] = None  # waiting to run it again: no listener runs meanwhile
                if self._stop_reading.wait(delay) or not o.valid():
                    return  # stopping, or lost: the next owner delivers it again
                self._running[me] = (ctx, time.monotonic())
        finally:
            if counted:
                self._uncount_run(ctx)
            self._running[me] = None
            self._finished(o, ctx.lane)

    def _count_run(self, ctx: EntryContext) -> int | None:
        """A redelivered entry begins a run: count it in Redis until it ends (:meth:`_uncount_run`).

        Returns:
            Its runs that began and never ended before this one (each one a worker that died while
            running it), or None when Redis failed (the run is not counted).
        """
        o: Ownership = ctx.owner
        try:
            pipe = self._redis.pipeline(transaction=False)
            pipe.hincrby(o.deaths_key, ctx.entry_id, 1)
            pipe.pexpire(o.deaths_key, _DEATHS_TTL_MS)
            began = int(pipe.execute()[0])
        except self._errors:
            return None
        return began - 1

    def _uncount_run(self, ctx: EntryContext) -> None:
        """The run :meth:`_count_run` counted ended (this worker is alive): not a death."""
        try:
            self._redis.hdel(ctx.owner.deaths_key, ctx.entry_id)
        except self._errors as exc:
            log.debug("worker %s: a run's count stayed in Redis (%s)", self._name, type(exc).__name__)

    def _run_once(self, ctx: EntryContext, runs: list[Any]) -> None:
        ctx.failures = list[BaseException](self._feed.run(runs))
