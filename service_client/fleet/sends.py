"""Workers' sends, run by the socket's process: the command stream and its answers.

Sending a message is a socket operation (``message:send`` and its echo), so a
worker's ``send_message`` (and ``Message.reply``) adds a command to the
namespace's command stream and waits, within the same 10 s bound as a
client's, for the answer on a list of its own. In the socket's process the
publisher's :class:`SendRunner` reads the commands, runs each one with the
client's own ``send_message`` on one of its threads, and pushes back the
message record or the error (:func:`encode_error`, :func:`decode_error`: the
same exception type and attributes, rebuilt only for the library's errors and
a few builtins).

A reply made while a worker handles an event carries a nonce derived from the
event id and the reply's index within that handling, and the lease the worker
holds on the event's partition. The runner claims the nonce once in Redis,
checking the lease in the same step (:data:`~service_client.fleet.scripts.CLAIM`):
a redelivered event's reply returns the first one's result instead of posting
again; a worker that lost the partition (a paused "zombie") cannot reply any
more. The result is kept with the nonce for ``nonce_ttl``; a send that failed
before anything was written (a refused channel, a socket not connected)
releases its nonce, so a retry may send.

Each socket's process keeps a liveness key in Redis (renewed every second, 3 s
TTL). When it dies (a crash, a restart) the claims it was sending and the
commands it had taken are resolved by the next runner at once: it takes over
the dead process's pending commands, and a claim whose process is gone is
looked up in the channel's last messages (a message of the bot with the same
content and reply, posted after the claim): found, it is the result; else it
is sent now.
"""

from __future__ import annotations

import builtins
import enum
import hashlib
import logging
import queue
import threading
import time
import uuid
from concurrent.futures import Future
from concurrent.futures import TimeoutError as _FutureTimeout
from typing import TYPE_CHECKING, Any

from .. import _defaults, endpoints, errors
from ..models.message import Message
from ..permissions import Permissions
from ..rest.route import Route
from ._redis import RetryWait, dumps, loads, redis_errors
from .scripts import CLAIM

if TYPE_CHECKING:
    from ..client import Client
    from .routing import FleetKeys

__all__ = ["SendClient", "SendRunner", "decode_error", "encode_error", "reply_nonce"]

log = logging.getLogger("service_client.fleet")

#: The consumer group of the socket's processes on the command stream.
GATEWAY_GROUP = "gateway"
#: How long a claimed nonce waits for its result before a new claim may send, milliseconds.
_CLAIM_TTL_MS = 60_000
#: How long an answer list lives after its last answer, milliseconds.
_REPLY_TTL_MS = 60_000
#: A socket process's liveness key: its TTL, and how often it is renewed (seconds).
_ALIVE_TTL_MS = 3_000
_ALIVE_EVERY_S = 1.0
#: Messages of a channel looked at for a send whose process died, and the clock slack allowed (ms).
_ORPHAN_HISTORY = 50
_ORPHAN_SLACK_MS = 5_000
#: The errors rebuilt from their name (anything else comes back as a ServiceError with its text).
_ERRORS: dict[str, type[BaseException]] = {
    cls.__name__: cls for cls in (
        errors.ServiceError, errors.ServiceAPIError, errors.RateLimitError, errors.ServiceAuthError,
        errors.ServiceTimeoutError, errors.GatewayError, errors.GatewayTimeoutError, errors.ChannelAccessError,
        errors.EmptyMessageError,
        builtins.TimeoutError, builtins.ValueError, builtins.TypeError, builtins.PermissionError,
    )
}
#: Errors after which nothing was sent: the nonce is released so that a retry may send.
_NOTHING_SENT = (errors.ChannelAccessError, errors.ServiceAuthError, ValueError, TypeError)
_ids = iter(range(1 << 62))


def reply_nonce(group: str, event_id: str, index: int) -> str:
    """The nonce of a reply: the ``index``-th send (from 0) made while consumer group ``group`` handled
    event ``event_id``.

    Each group handles every event (another application on the same bot): its replies are its
    own, so the group is part of the nonce.
    """
    return hashlib.sha256(f"{group}/{event_id}/{index}".encode()).hexdigest()[:32]


def _embeds_key(embeds: Any) -> list[tuple[Any, Any, Any]]:
    """What tells embeds apart, as sent and as stored: each one's title, description and field count."""
    return [(e.get("title"), e.get("description"), len(e.get("fields") or ())) if isinstance(e, dict) else (None,) * 3
            for e in embeds or ()]


def _compact(answer: dict[str, Any]) -> dict[str, Any]:
    """The answer as a claim keeps it: the message record without its send nonce and null fields."""
    record = answer.get("ok")
    if not isinstance(record, dict):
        return answer
    return {**answer, "ok": {k: v for k, v in record.items() if v is not None and k != "nonce"}}


def encode_error(exc: BaseException) -> dict[str, Any]:
    """An exception as JSON: its type name, text and plain attributes."""
    state: dict[str, Any] = {}
    for key, value in getattr(exc, "__dict__", {}).items():
        if isinstance(value, enum.IntFlag):
            value = int(value)
        if value is None or isinstance(value, (str, int, float, bool)):
            state[key] = value
    name = type(exc).__name__ if type(exc).__name__ in _ERRORS else "ServiceError"
    return {"type": name, "message": str(exc), "state": state}


def decode_error(data: Any) -> BaseException:
    """The exception :func:`encode_error` described (a ServiceError for anything unexpected)."""
    if not isinstance(data, dict):
        return errors.ServiceError("the socket's process answered a send with something unreadable")
    cls = _ERRORS.get(str(data.get("type")), errors.ServiceError)
    message = str(data.get("message", ""))
    if not issubclass(cls, errors.ServiceError):
        return cls(message)
    err = cls.__new__(cls)
    Exception.__init__(err, message)
    state = data.get("state")
    if isinstance(state, dict):
        err.__dict__.update({str(k): v for k, v in state.items()})
        if isinstance(err.__dict__.get("missing"), int):
            err.__dict__["missing"] = Permissions(err.__dict__["missing"])
    return err


class SendRunner:
    """Runs the workers' sends in the socket's process (part of an :class:`EventPublisher`).

    Args:
        client: The client that sends.
        redis: The publisher's Redis client.
        nonce_ttl: Seconds a reply's nonce and result are kept.
        stop: Set when the publisher stops.
    """

    def __init__(self, client: Client, redis: Any, *, nonce_ttl: float, stop: threading.Event) -> None:
        self._client = client
        self._redis = redis
        self._nonce_ttl_ms = int(nonce_ttl * 1000)
        self._stop = stop
        self._errors = redis_errors()
        self._queue: queue.Queue[tuple[bytes, dict[bytes, bytes]] | None] = queue.Queue(
            _defaults.FLEET_COMMAND_THREADS * 4)
        self._threads: list[threading.Thread] = []
        self._threads_lock = threading.Lock()  # guards _threads
        self._keys: FleetKeys | None = None
        self._consumer = f"gateway-{uuid.uuid4().hex[:12]}"
        self._alive_at = -_ALIVE_EVERY_S
        self._inflight_lock = threading.Lock()  # guards _inflight
        self._inflight: dict[str, Future[dict[str, Any]]] = {}  # nonce -> the answer of the send running it
        self._offset_ms = 0.0  # Redis time minus this process's time, ms
        self.handled = 0

    def start(self, keys: FleetKeys) -> None:
        """Start reading the command stream of ``keys`` (idempotent)."""
        with self._threads_lock:
            if self._threads or self._stop.is_set():
                return
            self._keys = keys
            n = next(_ids)
            threads = [threading.Thread(target=self._read_loop, name=f"service_client-fleet-commands-{n}",
                                        daemon=True)]
            for i in range(_defaults.FLEET_COMMAND_THREADS):
                threads.append(threading.Thread(
                    target=self._run_loop, name=f"service_client-fleet-send-{n * 100 + i}", daemon=True))
            for thread in threads:
                thread.start()
            self._threads = threads

    def close(self, timeout: float) -> None:
        """Stop the threads (the publisher's ``stop`` is set already)."""
        with self._threads_lock:
            threads = list(self._threads)
        for _ in threads[1:]:
            try:
                self._queue.put_nowait(None)
            except queue.Full:
                break
        deadline = time.monotonic() + timeout
        for thread in threads:
            thread.join(max(0.01, deadline - time.monotonic()))

    def _read_loop(self) -> None:
        keys = self._keys
        assert keys is not None
        redis = self._redis
        retry = RetryWait(self._stop)
        created = False
        after = "0"  # this consumer's pending commands first (a restarted process), then new ones
        clock_at = 0.0
        while not self._stop.is_set():
            try:
                if not created:
                    try:
                        redis.xgroup_create(keys.commands, GATEWAY_GROUP, id="$", mkstream=True)
                    except redis_errors()[0] as exc:
                        if "BUSYGROUP" not in str(exc):
                            raise
                    created = True
                if time.monotonic() - clock_at > 60:
                    seconds, micros = redis.time()
                    self._offset_ms = seconds * 1000 + micros / 1000 - time.time() * 1000
                    clock_at = time.monotonic()
                if self._keep_alive():
                    self._adopt(keys)
                got = redis.xreadgroup(GATEWAY_GROUP, self._consumer, {keys.commands: after}, count=64,
                                       block=None if after != ">" else 500)
            except self._errors as exc:
                if "NOGROUP" in str(exc):
                    created = False  # Redis lost its data (a restart without persistence)
                if not retry.wait():
                    return
                continue
            retry.reset()
            entries = got[0][1] if got else []
            if after != ">" and not entries:
                after = ">"
                continue
            for entry_id, fields in entries:
                if after != ">":
                    after = entry_id.decode()
                self._put(entry_id, fields)

    def _put(self, entry_id: bytes, fields: dict[bytes, bytes]) -> None:
        """Queue a command for the send threads (the reader thread waits while they are busy)."""
        while not self._stop.is_set():
            try:
                self._queue.put((entry_id, fields), timeout=0.25)
                return
            except queue.Full:
                try:
                    self._keep_alive()
                except self._errors:
                    pass

    def _alive_key(self, consumer: str) -> str:
        assert self._keys is not None
        return f"{self._keys.prefix}gateway:{consumer}"

    def _keep_alive(self) -> bool:
        """Renew this process's liveness key when it is due; True when it was renewed.

        Raises:
            redis.RedisError, OSError: Redis failed.
        """
        now = time.monotonic()
        if now - self._alive_at < _ALIVE_EVERY_S:
            return False
        self._redis.set(self._alive_key(self._consumer), "1", px=_ALIVE_TTL_MS)
        self._alive_at = now
        return True

    def _adopt(self, keys: FleetKeys) -> None:
        """Take over the pending commands of socket processes that are gone, and forget those processes.

        Raises:
            redis.RedisError, OSError: Redis failed.
        """
        redis = self._redis
        summary = redis.xpending(keys.commands, GATEWAY_GROUP)
        for row in summary.get("consumers") or []:
            name = row["name"].decode() if isinstance(row["name"], bytes) else str(row["name"])
            if name == self._consumer or redis.exists(self._alive_key(name)):
                continue
            rows = redis.xpending_range(keys.commands, GATEWAY_GROUP, min="-", max="+", count=64,
                                        consumername=name)
            if rows:
                ids = [r["message_id"] for r in rows]
                taken = redis.xclaim(keys.commands, GATEWAY_GROUP, self._consumer, 0, ids)
                log.info("took over %d sends of a socket process that is gone (%s)", len(taken), name)
                for entry_id, fields in taken:
                    if fields:
                        self._put(entry_id, fields)
                    else:
                        self._ack(entry_id)
            if len(rows) < 64:
                redis.xgroup_delconsumer(keys.commands, GATEWAY_GROUP, name)

    def _run_loop(self) -> None:
        while True:
            try:
                item = self._queue.get(timeout=0.5)
            except queue.Empty:
                if self._stop.is_set():
                    return
                continue
            if item is None or self._stop.is_set():
                return
            entry_id, fields = item
            try:
                self._run(entry_id, fields)
            except Exception:  # noqa: BLE001 - a bad command never stops the runner
                log.exception("running a worker's send failed")

    def _run(self, entry_id: bytes, fields: dict[bytes, bytes]) -> None:
        keys = self._keys
        assert keys is not None
        command = loads(fields.get(b"c", b"null"))
        if not isinstance(command, dict):
            self._ack(entry_id)
            return
        reply_to = str(command.get("w", ""))
        cid = command.get("id")
        answer = self._answer(entry_id, command)
        self.handled += 1
        deadline = self._deadline(entry_id, command)
        retry = RetryWait(self._stop)
        while True:
            try:
                pipe = self._redis.pipeline(transaction=False)
                if reply_to:
                    key = keys.reply(reply_to)
                    pipe.lpush(key, dumps({"id": cid, **answer}))
                    pipe.pexpire(key, _REPLY_TTL_MS)
                pipe.xack(keys.commands, GATEWAY_GROUP, entry_id)
                pipe.execute()
                return
            except self._errors as exc:
                if time.monotonic() >= deadline or not retry.wait():
                    log.warning("could not answer a worker's send (%s): it times out", type(exc).__name__)
                    return

    def _deadline(self, entry_id: bytes, command: dict[str, Any]) -> float:
        """The ``time.monotonic()`` at which the worker stops waiting for this command's answer.

        The command's time budget ``b`` (ms) counts from the entry's id (the time Redis added it)
        and is capped at a send's own bound (10 s), as is the time left: a command written by
        another Redis writer with a huge budget or an id in the future holds a send thread no longer.
        """
        cap_ms = _defaults.SEND_TIMEOUT_S * 1000
        budget = command.get("b")
        budget_ms = float(budget) if isinstance(budget, (int, float)) and not isinstance(budget, bool) else cap_ms
        budget_ms = cap_ms if budget_ms != budget_ms else min(max(budget_ms, 0.0), cap_ms)  # NaN: the default
        try:
            added_ms = int(entry_id.split(b"-")[0])
        except ValueError:
            added_ms = 0
        left = (added_ms + budget_ms - self._offset_ms) / 1000 - time.time()
        return time.monotonic() + min(left, budget_ms / 1000)

    def _ack(self, entry_id: bytes) -> None:
        assert self._keys is not None
        try:
            self._redis.xack(self._keys.commands, GATEWAY_GROUP, entry_id)
        except self._errors:
            pass

    def _answer(self, entry_id: bytes, command: dict[str, Any]) -> dict[str, Any]:
        """Run one send; ``{"ok": message record}`` or ``{"error": encoded error}``."""
        keys = self._keys
        assert keys is not None
        left = self._deadline(entry_id, command) - time.monotonic()
        if left <= 0.05:
            return {"error": encode_error(TimeoutError(
                "send_message timeout after 10s: the socket's process took the send too late to run it"))}
        nonce = command.get("n") or None
        if nonce is not None:
            nonce = str(nonce)
            claim_keys = [keys.nonce(nonce)]
            args: list[Any] = [_CLAIM_TTL_MS, self._consumer, self._alive_key("")]
            lease = command.get("l")
            if lease:
                claim_keys.append(str(lease[0]))
                args.append(str(lease[1]))
            deadline = time.monotonic() + left
            while True:
                try:
                    outcome = self._redis.eval(CLAIM, len(claim_keys), *claim_keys, *args)
                except self._errors as exc:
                    return {"error": encode_error(errors.ServiceError(
                        f"the reply could not be claimed in Redis ({type(exc).__name__}); nothing was sent"))}
                state = outcome[0].decode() if isinstance(outcome[0], bytes) else str(outcome[0])
                if state != "pending":
                    break
                # Another live call sends it: its answer (from this process, else from Redis).
                other = self._await_other(nonce, deadline)
                if other is not None:
                    return other
            if state == "fenced":
                return {"error": encode_error(errors.ServiceError(
                    "the worker no longer holds the event's partition (another worker handles it now): "
                    "its reply was not sent"))}
            if state == "done":
                return dict(loads(outcome[1]))
            if state == "orphan":
                found = self._posted(command, int(outcome[1]))
                if found is not None:
                    answer = {"ok": found}
                    self._settle(nonce, answer, event=bool(lease))
                    return answer
            left = deadline - time.monotonic()
        fut: Future[dict[str, Any]] = Future()
        if nonce is not None:
            with self._inflight_lock:
                self._inflight[nonce] = fut
        try:
            answer = self._send(command, left)
            if nonce is not None:
                self._settle(nonce, answer, event=bool(command.get("l")))
            fut.set_result(answer)
            return answer
        finally:
            if nonce is not None:
                with self._inflight_lock:
                    self._inflight.pop(nonce, None)

    def _send(self, command: dict[str, Any], left: float) -> dict[str, Any]:
        args = command.get("a")
        if not isinstance(args, dict):
            return {"error": encode_error(errors.ServiceError("a malformed send reached the socket's process"))}
        try:
            message = self._client.send_message(
                str(args.get("channel")), content=args.get("content"), embeds=args.get("embeds"),
                reply_to_id=args.get("replyTo"),
            )
        except Exception as exc:  # noqa: BLE001 - handed back to the worker as its own error
            return {"error": encode_error(exc), "sent": not isinstance(exc, _NOTHING_SENT)}
        return {"ok": message.raw}

    def _settle(self, nonce: str, answer: dict[str, Any], *, event: bool) -> None:
        """Keep the result with the nonce, or release it when nothing was sent (retried for up to
        the claim's TTL while Redis is away).

        A reply made while handling an event (``event``) is kept for ``nonce_ttl`` (the worker
        shortens it to a minute once the event is acknowledged); another send's nonce only
        guards its own command added twice, and is kept for a minute.
        """
        assert self._keys is not None
        key = self._keys.nonce(nonce)
        ttl_ms = self._nonce_ttl_ms if event else min(self._nonce_ttl_ms, _CLAIM_TTL_MS)
        retry = RetryWait(self._stop)
        deadline = time.monotonic() + _CLAIM_TTL_MS / 1000
        while True:
            try:
                if "error" in answer and not answer.get("sent", True):
                    self._redis.delete(key)
                else:
                    self._redis.set(key, dumps(_compact(answer)), px=ttl_ms)
                return
            except self._errors as exc:
                if time.monotonic() >= deadline or not retry.wait():
                    log.warning("could not record a reply's result (%s): a redelivery may send it again",
                                type(exc).__name__)
                    return

    def _await_other(self, nonce: str, deadline: float) -> dict[str, Any] | None:
        """Another live call holds the nonce: its answer when it is in this process; else None after
        a short wait (the caller claims again: a result, a release or a process gone), or the
        timeout error at ``deadline``."""
        left = deadline - time.monotonic()
        if left > 0 and not self._stop.is_set():
            with self._inflight_lock:
                fut = self._inflight.get(nonce)
            if fut is not None:
                try:
                    return fut.result(max(0.0, left))
                except _FutureTimeout:
                    pass
            elif not self._stop.wait(min(0.05, left)):
                return None
        return {"error": encode_error(TimeoutError(
            "send_message timeout after 10s: the same reply is still being sent by another call"))}

    def _posted(self, command: dict[str, Any], claimed_ms: int) -> dict[str, Any] | None:
        """The message a dead process sent for ``command`` (claimed at ``claimed_ms``, Redis time),
        looked up in its channel's last messages; None when it is not there (or cannot be read)."""
        args = command.get("a")
        me = self._client.user
        if not isinstance(args, dict) or me is None:
            return None
        channel = str(args.get("channel"))
        state = self._client.connection_state
        try:
            data = state.request(Route(endpoints.GET_HISTORY, channel_id=channel),
                                 params={"limit": _ORPHAN_HISTORY})
        except errors.ServiceError as exc:
            log.warning("could not read channel %s to see whether a send of a socket process that is gone "
                        "was posted (%s): it is sent again", channel, type(exc).__name__)
            return None
        items = data.get("messages") if isinstance(data, dict) else data
        since = claimed_ms - self._offset_ms - _ORPHAN_SLACK_MS
        for item in items if isinstance(items, list) else ():
            if not isinstance(item, dict):
                continue
            try:
                message = Message(state, item)
            except ValueError:
                continue
            created = message.created_at
            if (message.author is not None and message.author.id == me.id
                    and message.content == (args.get("content") or "")
                    and (message.reply_to_id or None) == (args.get("replyTo") or None)
                    and _embeds_key(message.embeds) == _embeds_key(args.get("embeds"))
                    and (created is None or created.timestamp() * 1000 >= since)):
                return item
        return None


class SendClient:
    """A worker's side of the command stream: sends a command, waits for its answer.

    Args:
        redis: The worker's Redis client.
        keys: The namespace's keys.
        instance: This worker instance's unique name (its answer list).
        stop: Set when the worker stops.
    """

    def __init__(self, redis: Any, keys: FleetKeys, instance: str, stop: threading.Event) -> None:
        self._redis = redis
        self._keys = keys
        self._instance = instance
        self._stop = stop
        self._errors = redis_errors()
        self._waiters_lock = threading.Lock()  # guards _waiters
        self._waiters: dict[str, Future[dict[str, Any]]] = {}
        self._thread: threading.Thread | None = None
        #: The worker's consumer group (part of its replies' nonces).
        self.group = keys.group or ""

    def start(self) -> None:
        """Start the answer reader ``service_client-fleet-answers-<n>``."""
        self._thread = threading.Thread(target=self._answers, name=f"service_client-fleet-answers-{next(_ids)}",
                                        daemon=True)
        self._thread.start()

    def join(self, timeout: float) -> None:
        """Wait for the answer reader to end (``stop`` is set); pending sends fail."""
        if self._thread is not None:
            self._thread.join(timeout)
        with self._waiters_lock:
            waiters, self._waiters = self._waiters, {}
        for fut in waiters.values():
            if not fut.done():
                fut.set_exception(errors.ServiceError("the worker stopped before the send was answered"))

    def _answers(self) -> None:
        key = self._keys.reply(self._instance)
        retry = RetryWait(self._stop)
        while not self._stop.is_set():
            try:
                got = self._redis.brpop([key], timeout=1)
            except self._errors:
                if not retry.wait():
                    return
                continue
            retry.reset()
            if not got:
                continue
            try:
                answer = loads(got[1])
                with self._waiters_lock:
                    fut = self._waiters.pop(str(answer.get("id")), None)
            except Exception:  # noqa: BLE001 - an unreadable answer is nobody's
                log.warning("dropped an unreadable answer on the command stream")
                continue
            if fut is not None and not fut.done():
                fut.set_result(answer)

    def send(self, args: dict[str, Any], *, nonce: str | None, lease: tuple[str, str] | None,
             timeout: float = _defaults.SEND_TIMEOUT_S) -> dict[str, Any]:
        """Send one message through the socket's process; the echoed message record.

        Args:
            args: ``{"channel", "content", "embeds", "replyTo"}`` (checked already).
            nonce: The reply's nonce, or None for a send outside an event (it gets one of its own).
            lease: ``(lease key, lease value)`` of the event's partition, or None.
            timeout: Seconds for the whole send.

        Raises:
            TimeoutError: No answer within ``timeout``.
            ServiceError: Redis failed, or the worker stopped; or the error the send raised
                in the socket's process (same type and attributes).
        """
        cid = uuid.uuid4().hex
        fut: Future[dict[str, Any]] = Future()
        with self._waiters_lock:
            self._waiters[cid] = fut
        # A send outside an event gets a nonce of its own: a command added twice (a retry after a
        # connection lost mid-call) is still sent once.
        command = {"id": cid, "w": self._instance, "a": args, "n": nonce or cid, "l": list(lease) if lease else None,
                   "b": int(timeout * 1000)}
        deadline = time.monotonic() + timeout
        retry = RetryWait(self._stop)
        try:
            while True:
                try:
                    self._redis.xadd(self._keys.commands, {"c": dumps(command)},
                                     maxlen=_defaults.FLEET_COMMAND_MAX_LENGTH, approximate=True)
                    break
                except self._errors as exc:
                    if time.monotonic() + 0.05 >= deadline or not retry.wait():
                        raise errors.ServiceError(
                            f"send_message could not reach Redis ({type(exc).__name__}) within {timeout:g}s; "
                            "nothing was sent") from None
            try:
                answer = fut.result(max(0.0, deadline - time.monotonic()))
            except _FutureTimeout:
                raise TimeoutError(
                    f"send_message timeout after {timeout:g}s: no answer from the socket's process (is its "
                    f"EventPublisher running?) for a send to channel {args.get('channel')}") from None
        finally:
            with self._waiters_lock:
                self._waiters.pop(cid, None)
        if "error" in answer:
            raise decode_error(answer["error"])
        record = answer.get("ok")
        if not isinstance(record, dict):
            raise errors.ServiceError("the socket's process answered a send without a message")
        return record
