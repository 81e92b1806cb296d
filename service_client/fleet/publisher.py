"""The publisher: the socket's process adds every event to the partition streams in Redis.

:class:`EventPublisher` taps the client's socket events on the reader thread,
in arrival order (it never blocks it: each event is routed, encoded and
queued in a bounded buffer), and a thread of its own adds them to Redis in
batches, on a connection of its own: it builds and sends the next batch while
Redis runs the one before (two at most unanswered), and reads the answers in
order. It also trims the streams at the acknowledged low-water mark, and runs
the workers' sends (see :mod:`service_client.fleet.sends`).
"""

from __future__ import annotations

import collections
import importlib
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import _defaults, endpoints
from .._secret import Secret
from ..client import Client, ClientState
from ._redis import RetryWait, command_packer, connect, dumps, is_client, redis_errors
from .fence import PublishFence
from .routing import DROPPABLE_EVENTS, PUBLISHED_EVENTS, STATE_EVENTS, EventRouter, FleetKeys, check_name, partition_of
from .scripts import PUBLISH
from .sends import SendRunner
from .trim import Trimmer

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["EventPublisher"]

log = logging.getLogger("service_client.fleet")

#: Events added to Redis in one script call, at most.
_BATCH_MAX = 1000
#: Batches sent to Redis and not answered yet, at most: the next one is built and sent while
#: Redis runs the one before.
_PIPELINE_DEPTH = 2
#: Events that must be waiting before a batch is sent while another one is still running (fewer
#: wait for its answer: a batch has a fixed cost, in both processes).
_PIPELINE_MIN = 100
#: How long the publisher lets a few events gather before it adds them, seconds.
_LINGER_S = 0.002
#: Ordering keys whose partition is remembered (the cache is emptied when full).
_PARTITION_CACHE_MAX = 100_000
#: New-message ids remembered (two generations: at least this many), so none is published twice.
_MESSAGE_IDS_REMEMBERED = 10_000
#: Shortest time between two WARNING lines about dropped events or an unreachable Redis, seconds.
_WARN_EVERY_S = 10.0

_thread_ids = iter(range(1 << 62))

#: A buffered event: (partition, data, a shared-state event, droppable, a new message's id or None).
_Item = tuple[int, bytes, bool, bool, "str | None"]

#: Per published socket event: (a shared-state event, droppable, the start of its frames
#: ``42["<name>",``, the start of its data ``["<name>",``); one lookup on the reader thread.
_KINDS: dict[str, tuple[bool, bool, bytes, bytes]] = {
    event: (event in STATE_EVENTS, event in DROPPABLE_EVENTS, b"42" + start, start)
    for event in PUBLISHED_EVENTS
    for start in (dumps([event])[:-1] + b",",)
}


def _wire() -> tuple[Any, Any]:
    """The struct a ``message:new`` record may be decoded into, and its ``record_of``; (None, None) without msgspec."""
    try:
        from ..models import _message_wire
    except ImportError:  # no msgspec: the reader decodes every record into a dict
        return None, None
    return _message_wire.MessageWire, _message_wire.record_of


def _positive_int(name: str, value: object, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value!r}")
    return value


def _positive_seconds(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number of seconds, got {type(value).__name__}")
    if not value > 0 or value == float("inf"):
        raise ValueError(f"{name} must be a finite number of seconds > 0, got {value!r}")
    return float(value)


class _Batch:
    """One PUBLISH call: its command (packed once, when hiredis packs), its events, how it went."""

    __slots__ = ("command", "count", "first_try", "packed", "sent")

    def __init__(self, command: tuple[Any, ...], count: int,
                 pack: Callable[[tuple[Any, ...]], list[bytes]] | None) -> None:
        self.command = command
        self.count = count
        self.packed = None if pack is None else pack(command)
        self.sent = False
        self.first_try = True  # False once sent again after a failure (entries already there are ours)


class EventPublisher:
    """Publishes a client's socket events to Redis Streams for a fleet of workers.

    Create it in the process that holds the socket, before or after
    ``client.login()``: every event the socket delivers from then on is added
    to one of ``partitions`` streams, chosen by a CRC-32 of its channel id (else
    its server id, else its user id; see :class:`~service_client.fleet.routing.EventRouter`),
    with a per-partition sequence number (the entry id is ``<seq>-0``) and an
    event id (``<epoch>:<partition>:<seq>``) that workers use to tell a
    redelivery and to derive idempotent reply nonces. Events that change shared
    state (servers, channels, roles, members, users, presence) are also added
    to the shared-state stream, which every worker reads to keep its caches
    fresh. The in-process listeners of ``client`` still run: a bot may keep
    some listeners local.

    Memory stays bounded whatever the workers do: every second the partition
    streams are trimmed at the lowest entry some consumer group has not
    acknowledged, and never hold more than ``max_stream_length`` entries (past
    it the oldest go even if a group has not acknowledged them: they are
    counted in :attr:`trimmed_unacknowledged` and logged at WARNING). While
    Redis is away the events wait in a buffer of ``max_buffered_events``; past
    it typing, presence and activity events are dropped first, then the newest
    event, counted in :attr:`dropped_events` and logged at WARNING (one line at
    the first drop, then at most one every 10 s). Retried batches never add an
    event twice, and a new message that reaches the client both live and read
    back by a catch-up (posted as the socket came back) is published once.

    The publisher also runs the workers' ``send_message`` calls on ``client``
    (see :mod:`service_client.fleet.sends`): a reply made while a worker
    handles an event is sent once, however often the event is redelivered.

    Threads (daemons, stopped by :meth:`close`, or once ``client`` is destroyed and what it
    buffered is in Redis): ``service_client-fleet-publisher-<n>``
    (the batches), ``service_client-fleet-trim-<n>``, ``service_client-fleet-commands-<n>``
    and 16 ``service_client-fleet-send-<n>``. Thread-safe.

    Args:
        client: The client whose socket events are published (one publisher per client).
        redis_url: The Redis URL (``redis://[:password@]host:port/db``,
            ``rediss://``, ``unix://``), or a ``redis.Redis`` client whose
            settings are copied (``Sentinel(...).master_for(name)``: the
            publisher follows the primary through a failover). Its password
            never appears in a log line, a repr or an exception.
        partitions: Partition streams (default 64). Every publisher of a
            namespace must use the same number; the first one sets it.
        namespace: The name of the bot's streams (ASCII letters, digits,
            ``_.-``, at most 64); default: the bot's user id, known once the
            client is ready (events wait in the buffer until then). Workers
            use the same default.
        max_buffered_events: Events kept while Redis is away (default 100,000).
        max_stream_length: Entries a partition stream keeps at most (default 10,000).
        nonce_ttl: Seconds a reply's nonce is remembered at most (default
            3,600): an event redelivered later than that may post its reply
            again. Once the event is acknowledged, its replies' nonces are kept
            one more minute only.
        fence: Publish only while a socket lease holds (set by
            :class:`~service_client.fleet.StandbySocket`; None publishes unfenced).
            A refused batch stops the publisher: its events are counted in
            :attr:`dropped_events`.
        wait_for_replicas: Replicas that must acknowledge a batch (Redis ``WAIT``)
            before its events count as published (default 0: none waited for). With 1
            and a Sentinel-managed Redis, a failover loses no published event: a batch
            not acknowledged within ``replica_timeout`` is sent again (its entries
            already there are refused).
        replica_timeout: Seconds a batch waits for its replicas.

    Raises:
        ImportError: The redis package is not installed.
        TypeError: An argument has the wrong type.
        ValueError: A bad URL, number or namespace; or ``client`` already has
            a publisher (or another event tap).
    """

    def __init__(
        self,
        client: Client,
        redis_url: str | Redis,
        *,
        partitions: int = _defaults.DEFAULT_FLEET_PARTITIONS,
        namespace: str | None = None,
        max_buffered_events: int = _defaults.DEFAULT_FLEET_MAX_BUFFERED_EVENTS,
        max_stream_length: int = _defaults.DEFAULT_FLEET_MAX_STREAM_LENGTH,
        nonce_ttl: float = _defaults.DEFAULT_FLEET_NONCE_TTL_S,
        fence: PublishFence | None = None,
        wait_for_replicas: int = 0,
        replica_timeout: float = 1.0,
    ) -> None:
        # The URL may hold a password: from here on only a Secret holds it, so no frame of a
        # traceback this constructor raises shows it among its locals.
        url = Secret(redis_url if isinstance(redis_url, str) else None, shown="***")
        given = None if isinstance(redis_url, str) else redis_url  # a redis.Redis (Sentinel's, say)
        if given is not None and not is_client(given):
            raise TypeError(f"redis_url must be a Redis URL str or a redis.Redis, got {type(redis_url).__name__}")
        del redis_url
        if not isinstance(client, Client):
            raise TypeError(f"client must be a Client, got {type(client).__name__}")
        if client.connection_state.event_tap is not None:
            raise ValueError("this client already has an event publisher (or another event tap)")
        self.partitions = _positive_int("partitions", partitions)
        if partitions > 4096:
            raise ValueError(f"partitions must be at most 4096, got {partitions!r}")
        self._namespace = None if namespace is None else check_name("namespace", namespace)
        self._max_buffered = _positive_int("max_buffered_events", max_buffered_events)
        self._max_stream = _positive_int("max_stream_length", max_stream_length, 10)
        self._nonce_ttl = _positive_seconds("nonce_ttl", nonce_ttl)
        self._redis, self.url = connect(url.get() if given is None else given)
        url.clear()
        self._replicas = _positive_int("wait_for_replicas", wait_for_replicas, 0)
        self._replica_timeout_ms = int(_positive_seconds("replica_timeout", replica_timeout) * 1000)
        self._errors = redis_errors()
        self._redis_error: type[Exception] = importlib.import_module("redis").RedisError
        self._no_script: type[Exception] = importlib.import_module("redis.exceptions").NoScriptError
        self._pack = command_packer()
        self._client = client
        state = client.connection_state
        # A message's later events (a reaction) go where the message went: its channel, from the
        # router's memory of the records it routed (caught up ones), else from the client's own
        # memory of recent messages, which the parsers fill right after the tap.
        self._router = EventRouter(channel_of=state.message_channel)
        self._wire_type, self._record_of = _wire()
        self._parts: dict[str, tuple[int, bytes]] = {}  # ordering key -> (partition, the key's JSON)
        #: Queued events: (partition, data, state event, droppable, new message's id or None); the
        #: taps append, the batch thread pops under _buffer_lock (as the full-buffer path changes it).
        self._buffer: collections.deque[_Item] = collections.deque()
        self._buffer_lock = threading.Lock()
        self._droppable_buffered = 0
        # New messages' ids, two generations: only the batch thread reads and changes them.
        self._message_ids: set[str] = set()
        self._message_ids_old: set[str] = set()
        self._wake = threading.Event()
        self._idle = False  # the batch thread waits for events (on _wake): the next tap wakes it
        self._closing = threading.Event()  # close() began: flush what is buffered, then stop
        self._stop = threading.Event()  # stop every thread now
        self._flushed = threading.Condition(threading.Lock())  # notified when a batch is added
        self._dropped = 0
        self._dropped_unlogged = 0
        self._drop_logged_at = -_WARN_EVERY_S
        self._published = 0
        self._skipped = 0  # new messages not published again (queued twice: live and caught up)
        self._in_batch = 0  # events taken from the buffer and not yet added, guarded by _buffer_lock
        self._epoch = os.urandom(4).hex()
        self._seqs: list[int] = []
        self._state_seq = 0
        self._keys: FleetKeys | None = None
        self._ready = threading.Event()  # the namespace is known and the sequences read
        self._closed = False
        self._fence = fence
        self.trimmer = Trimmer(self)
        self.sends = SendRunner(client, self._redis, nonce_ttl=self._nonce_ttl, stop=self._stop)
        n = next(_thread_ids)
        self._threads = [
            threading.Thread(target=self._flush_loop, name=f"service_client-fleet-publisher-{n}", daemon=True),
            threading.Thread(target=self.trimmer.run, name=f"service_client-fleet-trim-{n}", daemon=True),
        ]
        state.event_tap = self._tap
        state.event_tap_frames = True  # the tap takes the reader's structs and frames as they are
        for thread in self._threads:
            thread.start()

    # -- the tap (socket reader thread) ------------------------------------------------------

    def _tap(self, event: str, args: list[Any], frame: bytes | None = None) -> None:
        """Route, encode and queue one socket event; never blocks, never raises for a bad payload.

        The socket's reader thread calls it, and a catch-up's thread for the messages it reads
        back: the append needs no lock (the batch thread pops, under ``_buffer_lock``, which the
        full-buffer path takes too). A ``message:new`` record may come as the reader's msgspec
        struct: it is routed by its channel, with no dict made for it. A new message's id goes
        with it: the batch thread publishes a message that comes both ways (posted as the socket
        came back: live and read back) once, as whichever came first, so the reader takes no
        lock here. The event's data is its frame's own JSON when the reader gives a frame that
        starts as the service writes them, ``42["<name>",`` (``["<name>",<key>,[<the frame's
        args>]]``, spliced, not encoded again), else its arguments encoded.
        """
        kind = _KINDS.get(event)
        if kind is None or self._closed:
            return
        record: Any = args[0] if args else None
        message_id: str | None = None
        if type(record) is self._wire_type:  # a message:new record, as the reader decoded it
            channel = record.channel_public_id
            message_id = record.public_id
            if channel and message_id:
                # Its later events find its channel in the client's memory: the parsers keep every
                # such record until it is deleted (and the router then remembers it: see __init__).
                key = channel
            else:  # routed as its dict would be
                key = self._router.key(event, [self._record_of(record)])
        else:
            if event == endpoints.ON_MESSAGE_NEW and isinstance(record, dict):
                found = record.get("publicId")
                message_id = found if isinstance(found, str) else None
            key = self._router.key(event, args)
        name = key if key is not None else event
        route = self._parts.get(name)
        if route is None:
            route = (partition_of(name, self.partitions), dumps(name))
            if len(self._parts) >= _PARTITION_CACHE_MAX:
                self._parts.clear()
            self._parts[name] = route
        part = route[0]
        is_state, droppable, frame_start, data_start = kind
        if frame is not None and frame.startswith(frame_start):
            # The args as the frame holds them (it ends with the array's "]"), spliced after the
            # name and key: the same JSON value as encoding them, for the cost of two copies.
            data = b"".join((data_start, b"null" if key is None else route[1], b",[", frame[len(frame_start):], b"]"))
        else:
            data = dumps([event, key, args])
        if len(self._buffer) >= self._max_buffered:
            with self._buffer_lock:
                if len(self._buffer) >= self._max_buffered and not self._make_room(droppable):
                    return
        self._buffer.append((part, data, is_state, droppable, message_id))
        if droppable:
            self._droppable_buffered += 1
        if self._idle:  # read after the append: the batch thread sees the event, or is woken
            self._wake.set()

    def _make_room(self, droppable: bool) -> bool:
        """The buffer is full (``_buffer_lock`` held): drop typing and presence first, else the new event.

        Returns:
            True when there is room for the new event now.
        """
        dropped = 1
        room = False
        if not droppable and self._droppable_buffered:
            buffer = self._buffer
            kept = [item for item in buffer if not item[3]]
            dropped = len(buffer) - len(kept)
            buffer.clear()  # in place: the reader appends to this deque without the lock
            buffer.extend(kept)
            self._droppable_buffered = 0
            room = dropped > 0
        self._dropped += dropped if room else 1
        self._dropped_unlogged += dropped if room else 1
        now = time.monotonic()
        if now - self._drop_logged_at >= _WARN_EVERY_S:
            self._drop_logged_at = now
            count, self._dropped_unlogged = self._dropped_unlogged, 0
            log.warning(
                "the event publisher's buffer is full (%d events: Redis is away or too slow): dropped %d "
                "events (typing, presence and activity first), %d in all", self._max_buffered, count, self._dropped,
            )
        return room

    # -- the batches (the publisher's thread) ------------------------------------------------

    def _take(self) -> list[_Item]:
        """Up to ``_BATCH_MAX`` events from the buffer, counted in ``_in_batch`` until answered."""
        with self._buffer_lock:
            buffer = self._buffer
            count = min(len(buffer), _BATCH_MAX)
            popleft = buffer.popleft
            items = [popleft() for _ in range(count)]
            if self._droppable_buffered:
                # A count the reader's appends race with: a hint for the full-buffer path only.
                self._droppable_buffered = max(0, self._droppable_buffered - sum(1 for item in items if item[3]))
            self._in_batch += count
        return items

    def _first_times(self, items: list[_Item]) -> list[_Item]:
        """``items`` without the new messages queued before (the copy that came first is kept)."""
        ids, old = self._message_ids, self._message_ids_old
        kept: list[_Item] = []
        skipped = 0
        for item in items:
            message_id = item[4]
            if message_id is not None:
                if message_id in ids or message_id in old:
                    skipped += 1
                    continue
                ids.add(message_id)
                if len(ids) >= _MESSAGE_IDS_REMEMBERED:
                    self._message_ids_old = old = ids
                    self._message_ids = ids = set()
            kept.append(item)
        if skipped:
            with self._buffer_lock:
                self._skipped += skipped
                self._in_batch -= skipped
        return kept

    def _build(self, items: list[_Item]) -> tuple[list[str], list[Any], int]:
        """The keys and arguments of one PUBLISH call for ``items``; their sequences are taken now."""
        assert self._keys is not None
        by_part: dict[int, list[bytes]] = {}
        state: list[tuple[int, bytes]] = []
        get = by_part.get
        for part, data, is_state, _, _ in items:
            datas = get(part)
            if datas is None:
                by_part[part] = [data]
            else:
                datas.append(data)
            if is_state:
                state.append((part, data))
        keys: list[str] = []
        args: list[Any] = [self._epoch, len(by_part)]
        seqs = self._seqs
        state_ids: list[str] = []
        for part, datas in by_part.items():
            first = seqs[part] + 1
            seqs[part] += len(datas)
            keys.append(self._keys.stream(part))
            args += [part, first, len(datas)]
            args += datas
        if state:
            # A state event's id is its partition entry's: the k-th event of a partition in this
            # batch has the seq ``first + k``.
            counters = {part: seqs[part] - len(datas) for part, datas in by_part.items()}
            for part, _data, is_state, _, _ in items:
                counters[part] += 1
                if is_state:
                    state_ids.append(f"{self._epoch}:{part}:{counters[part]}")
        keys.append(self._keys.state)
        args += [self._state_seq + 1, len(state)]
        self._state_seq += len(state)
        for eid, (_part, data) in zip(state_ids, state, strict=True):
            args += [eid, data]
        return keys, args, len(items)

    def _batch(self, items: list[_Item], script: Any) -> _Batch:
        """The batch of ``items`` (new messages queued before left out): its command, packed."""
        items = self._first_times(items)
        built = self._build(items)
        if self._fence is not None:
            built = self._fence.extend(built, [item[:4] for item in items])
        keys, args, count = built
        return _Batch(("EVALSHA", script.sha, len(keys), *keys, *args), count, self._pack)

    def _send(self, conn: Any, batch: _Batch) -> None:
        """Send ``batch`` on ``conn`` (and its ``WAIT`` when replicas are waited for); no answer read."""
        if batch.packed is not None:
            conn.send_packed_command(batch.packed, check_health=False)
        else:
            conn.send_command(*batch.command, check_health=False)
        if self._replicas:
            conn.send_command("WAIT", self._replicas, self._replica_timeout_ms, check_health=False)
        batch.sent = True

    def _answer(self, conn: Any) -> Any:
        """The answer to the oldest batch sent; raises as the script (or WAIT) fails."""
        answer = conn.read_response()
        if self._replicas:
            acknowledged = conn.read_response()
            if int(acknowledged) < self._replicas:
                raise self._redis_error(f"{acknowledged} of {self._replicas} replicas acknowledged the batch in time")
        return answer

    def _flush_loop(self) -> None:
        """The batch thread: runs the batches, then gives its connection back to the pool."""
        conns: list[Any] = []  # the thread's own connection, once Redis answered
        try:
            self._run_batches(conns)
        finally:
            pool = self._redis.connection_pool
            for conn in conns:
                try:
                    conn.disconnect()  # answers not read yet (the thread stops) are dropped with it
                finally:
                    pool.release(conn)

    def _run_batches(self, conns: list[Any]) -> None:
        """Build batches and send them on a connection of this thread's own, the next while Redis
        runs the one before; read their answers in order. A failure sends every unanswered batch
        again, in order (their entries already there are refused, so none is added twice)."""
        retry = RetryWait(self._stop)
        fence = self._fence
        script = self._redis.register_script(PUBLISH if fence is None else fence.script)
        batches: collections.deque[_Batch] = collections.deque()  # sent (or to send), unanswered, in order
        failing_since: float | None = None
        load_script = True  # SCRIPT LOAD before the first batch (then EVALSHA)
        while True:
            if not batches and (self._keys is None or not self._ready.is_set()):
                if not self._start(retry):
                    return
                continue
            if (len(batches) < _PIPELINE_DEPTH and self._ready.is_set()
                    and (not batches or len(self._buffer) >= _PIPELINE_MIN)):
                if not batches and len(self._buffer) < _BATCH_MAX // 4:
                    # A few events: linger a little so that a burst goes in one batch (fewer
                    # wake-ups and thread switches for the socket's reader).
                    self._stop.wait(_LINGER_S)
                items = self._take()
                if items:
                    built = self._batch(items, script)
                    if built.count:
                        batches.append(built)
                    else:  # only messages queued before: nothing to send
                        with self._flushed:
                            self._flushed.notify_all()
                    if not batches:
                        continue
                elif not batches:
                    if self._closing.is_set() or self._stop.is_set():
                        return
                    if self._client.state is ClientState.DESTROYED:
                        self._closing.set()  # the client was destroyed: the publisher stops with it
                        self._closed = True
                        self._stop.set()
                        return
                    self._idle = True  # set before the buffer is looked at: see _tap
                    if not self._buffer:
                        self._wake.wait(0.1)
                    self._idle = False
                    self._wake.clear()
                    continue
            batch = batches[0]
            loaded = False
            try:
                if not conns:
                    conns.append(self._redis.connection_pool.get_connection())  # connects (or raises)
                conn = conns[0]
                if load_script:
                    conn.send_command("SCRIPT", "LOAD", script.script, check_health=False)
                    conn.read_response()
                    load_script = False
                    loaded = True
                for waiting in batches:
                    if not waiting.sent:
                        self._send(conn, waiting)
                added, dup, foreign = self._answer(conn)
            except self._errors as exc:
                if conns:
                    # The answers of the batches after it are dropped with the connection: all are
                    # sent again, on one the pool connects afresh (a Sentinel-managed pool asks the
                    # sentinels for the primary then: a reconnect on the socket alone would not).
                    dead = conns.pop()
                    dead.disconnect()
                    self._redis.connection_pool.release(dead)
                for waiting in batches:
                    waiting.sent = False
                    waiting.first_try = False
                if isinstance(exc, self._no_script) and not loaded:
                    load_script = True  # Redis restarted (or flushed its scripts): load it, send again
                    continue
                load_script = True  # a Redis that comes back may be another, or empty
                if failing_since is None:
                    failing_since = time.monotonic()
                    log.warning("the event publisher cannot reach Redis (%s): events wait in its buffer",
                                type(exc).__name__)
                if not retry.wait():
                    return
                continue
            batches.popleft()
            if failing_since is not None:
                log.info("the event publisher reaches Redis again after %.1f s", time.monotonic() - failing_since)
                failing_since = None
            retry.reset()
            if fence is not None and added < 0:
                self._fenced(fence, batch.count + sum(waiting.count for waiting in batches))
                return
            assert self._keys is not None
            if foreign:
                log.warning("removed %d entries that another Redis writer (not an EventPublisher) added to the "
                            "streams of namespace %r: the events go on after them", foreign, self._keys.namespace)
            dropped = 0
            if dup and batch.first_try:
                log.error("%d events were not added: another EventPublisher writes to namespace %r "
                          "(one publisher per bot); sequences read again", dup, self._keys.namespace)
                dropped = min(int(dup), batch.count)
                self._ready.clear()
            # Else every event of the batch is there: an entry refused when the batch was sent again
            # (after a failure) is one the first send added.
            with self._buffer_lock:
                self._dropped += dropped
                self._published += batch.count - dropped
                self._in_batch -= batch.count
            with self._flushed:
                self._flushed.notify_all()

    def _fenced(self, fence: PublishFence, count: int) -> None:
        """A batch was refused under ``fence``: publish nothing more, count what is left as dropped."""
        self._closed = True
        with self._buffer_lock:
            left = count + len(self._buffer)
            self._buffer.clear()
            self._dropped += left
            self._in_batch = 0
        with self._flushed:
            self._flushed.notify_all()
        fence.refused(left)

    def _start(self, retry: RetryWait) -> bool:
        """Learn the namespace, set or check the partition count, read the sequences. False when closed."""
        while self._keys is None:
            if self._stop.is_set():
                return False
            namespace = self._namespace
            user = self._client.user
            if namespace is None and user is not None:
                namespace = user.id
            if namespace is not None:
                self._keys = FleetKeys(check_name("namespace", namespace))
                break
            if self._client.state is ClientState.DESTROYED:
                self._closed = True  # destroyed before it was ever ready: nothing to publish
                self._stop.set()
                return False
            if self._stop.wait(0.05):
                return False
        keys = self._keys
        try:
            redis = self._redis
            redis.hsetnx(keys.meta, "partitions", self.partitions)
            known = int(redis.hget(keys.meta, "partitions") or self.partitions)
            if known != self.partitions:
                log.error("namespace %r has %d partitions, this publisher %d: it publishes nothing "
                          "(use the same count, or another namespace)", keys.namespace, known, self.partitions)
                self._closed = True
                return False
            pipe = redis.pipeline(transaction=False)
            for part in range(self.partitions):
                pipe.xinfo_stream(keys.stream(part))
            pipe.xinfo_stream(keys.state)
            infos = pipe.execute(raise_on_error=False)
        except self._errors:
            return retry.wait()
        seqs = []
        for info in infos:
            last = b"0-0"
            if isinstance(info, dict):
                last = info.get("last-generated-id") or b"0-0"
            elif not isinstance(info, self._errors):
                return retry.wait()
            seqs.append(int(bytes(last).split(b"-")[0]))
        self._state_seq = seqs.pop()
        self._seqs = seqs
        self._ready.set()
        self.sends.start(keys)
        retry.reset()
        return True

    # -- public ------------------------------------------------------------------------------

    @property
    def namespace(self) -> str | None:
        """The namespace of the streams; None until the client is ready when it was not given."""
        keys = self._keys
        return self._namespace if keys is None else keys.namespace

    @property
    def published_events(self) -> int:
        """Events added to the partition streams since the publisher was created."""
        return self._published

    @property
    def dropped_events(self) -> int:
        """Events never added: dropped while the buffer was full (see the class), counted since creation."""
        return self._dropped

    @property
    def buffered_events(self) -> int:
        """Events waiting in the buffer now."""
        return len(self._buffer)

    @property
    def trimmed_unacknowledged(self) -> int:
        """Entries trimmed at ``max_stream_length`` before every consumer group acknowledged them."""
        return self.trimmer.lost

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every event queued before this call is in Redis.

        Args:
            timeout: Seconds to wait at most.

        Returns:
            True when they are, False when ``timeout`` passed first.
        """
        with self._buffer_lock:  # the batch thread moves events from one count to the next under it
            target = self._published + self._dropped + self._skipped + self._in_batch + len(self._buffer)
        deadline = time.monotonic() + timeout
        with self._flushed:
            while self._published + self._dropped + self._skipped < target:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._wake.set()
                self._flushed.wait(min(left, 0.1))
        return True

    def close(self, timeout: float = 5.0) -> None:
        """Stop publishing: the tap is removed, the buffer flushed (within ``timeout``), the threads stopped.

        Idempotent. Sends of workers still running end with their own outcome;
        later ones wait for another publisher (or time out). Events left in the
        buffer at the end are counted in :attr:`dropped_events` and logged.

        Args:
            timeout: Seconds for the whole close.
        """
        if self._stop.is_set():
            return
        deadline = time.monotonic() + timeout
        state = self._client.connection_state
        if state.event_tap == self._tap:
            state.event_tap = None
            state.event_tap_frames = False
        self._closed = True
        self._closing.set()
        self.flush(max(0.0, deadline - time.monotonic() - 0.5))
        self._stop.set()
        self._wake.set()
        self.sends.close(max(0.1, deadline - time.monotonic()))
        for thread in self._threads:
            thread.join(max(0.05, deadline - time.monotonic()))
        left = len(self._buffer) + self._in_batch
        if left:
            self._dropped += left
            log.warning("the event publisher closed with %d events not added to Redis", left)
        try:
            self._redis.close()
        except self._errors:
            pass

    def __enter__(self) -> EventPublisher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        if not hasattr(self, "_buffer"):  # while the constructor runs
            return f"<EventPublisher url={getattr(self, 'url', None)!r}>"
        return (f"<EventPublisher url={self.url!r} namespace={self.namespace!r} partitions={self.partitions} "
                f"published={self._published} buffered={len(self._buffer)} dropped={self._dropped}>")

    def __reduce__(self) -> Any:
        raise TypeError("an EventPublisher cannot be pickled: it holds live connections")
