"""The REST session: the scheduling of every HTTP request of the library.

How a call travels::

    submit() --validate, build headers, no token -> ServiceAuthError
       |
       v
    bucket blocked? --yes--> DelayQueue (timer thread; holds no slot) --due--+
       | no                                                                  |
       v                                                                     |
    FifoQueue (strict FIFO) <------------------------------------------------+
       |
       v
    one of N worker threads (N = 5: the slots) re-checks the bucket, sends,
    reads the body within the per-attempt deadline, releases the slot, then:
    result / error on the Future, or a retry parked on the DelayQueue
    (after a 429 the bucket is blocked first), back at the end of the FIFO.

This module schedules: the queue, the slots, the buckets, the retries and the
Futures. One attempt on the wire (connect, send, headers and body within one
deadline, and what kind of failure ended it) is :mod:`.transport`'s; the
argument checks are :mod:`.validation`'s.

Threads: ``<name>-rest-<n>`` workers, one ``<name>-rest-timer-1`` timer and the
transport's ``<name>-rest-watchdog-1`` (it ends attempts at their deadline), all
daemons, started by the first call and stopped by :meth:`RestSession.close`.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from .._defaults import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_RETRY_AFTER_S,
    DEFAULT_TIMEOUT_MS,
    DESTROY_JOIN_S,
    MAX_CONCURRENT_REQUESTS,
)
from .._secret import Secret
from ..errors import (
    RateLimitError,
    ServiceAuthError,
    ServiceError,
    ServiceTimeoutError,
)
from .answer import classify, has_path_secret, refusal_error
from .buckets import BucketStore, MemoryBucketStore, PaceWait, bucket_scope
from .queue import DelayQueue, FifoQueue, Job
from .retry import DEFAULT_RETRY, RetryPolicy, parse_retry_after, resolve_retry
from .route import Route
from .seam import AttemptError, Transport
from .transport import HttpTransport, chained, final_error, prepare_base_url, sanitized
from .validation import (
    check_count,
    check_headers,
    check_seconds,
    check_timeout_ms,
    check_token,
    request_body,
    validate_api_call_args,
)

__all__ = ["RestSession", "validate_api_call_args"]

_log = logging.getLogger("service_client.rest")

_CLOSED = "the REST session is closed (the client was destroyed); create a new Client"

#: Longest single wait of ``request()`` before it re-checks the session, seconds.
_RESULT_POLL_S = 1.0


# --------------------------------------------------------------------------- the session


class RestSession:
    """A thread-safe REST session with a 5-slot strict FIFO, retries and buckets.

    At most ``max_concurrency`` requests are on the wire at once; further calls
    wait in a strict first-in first-out queue. A call whose rate-limit bucket is
    blocked waits holding no slot; network failures, timeouts and the statuses of
    its :class:`~.retry.RetryPolicy` are retried after ``Retry-After`` or the
    policy's backoff, a 429 blocking its bucket first. Thread-safe: any thread may call :meth:`submit`,
    :meth:`request` and :meth:`close`.

    The token is held by :attr:`token` and never appears in a repr, a log
    line or an exception. Closed sessions cannot be reopened.
    """

    def __init__(
        self,
        base_url: str,
        *,
        user_agent: str,
        max_concurrency: int = MAX_CONCURRENT_REQUESTS,
        max_retry_after: float = DEFAULT_MAX_RETRY_AFTER_S,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        bucket_store: BucketStore | None = None,
        retry: RetryPolicy = DEFAULT_RETRY,
        transport: Transport | None = None,
        wall_clock: Callable[[], float] = time.time,
        name: str = "service_client",
    ) -> None:
        """Configure the session; no thread starts and nothing is sent yet.

        Args:
            base_url: The REST base, e.g. ``https://api.service-chat.app/v2``
                (a trailing ``/`` is ignored).
            user_agent: The ``User-Agent`` header, e.g. ``service_client/0.1.0``.
            max_concurrency: Requests on the wire at once (worker threads).
            max_retry_after: Longest ``Retry-After`` waited out, seconds; a
                longer one ends the call at once: :class:`RateLimitError` for a
                429, :class:`ServiceAPIError` for any other status.
            max_body_bytes: Largest answer body read, bytes once decoded (gzip,
                deflate); a call whose answer is longer ends with
                :class:`ServiceAPIError` (16 MiB by default).
            bucket_store: Where blocked buckets are recorded (any
                :class:`BucketStore`, e.g. a ``RedisBucketStore`` shared by
                several processes); a private :class:`MemoryBucketStore` by
                default. Calls carry a hash of the token as their scope.
            retry: The retry policy of every call that names none (see
                :class:`~.retry.RetryPolicy`).
            transport: What sends each attempt (see :class:`~.seam.Transport`):
                :class:`~.transport.HttpTransport` over the network by default, a
                :class:`~.seam.MockTransport` in unit tests. The session closes it.
            wall_clock: Current UTC time, epoch seconds; used only to turn an
                HTTP-date ``Retry-After`` into a delay (tests inject it).
            name: Prefix of the thread names.

        Raises:
            TypeError: An argument has the wrong type (``retry`` not a
                :class:`~.retry.RetryPolicy`).
            ValueError: ``base_url`` is not an http(s) URL, ``max_concurrency``
                or ``max_body_bytes`` < 1, or a delay is negative or not finite.
        """
        if not isinstance(base_url, str):
            raise TypeError(f"base_url must be a str, not {type(base_url).__name__}")
        if not isinstance(user_agent, str) or not user_agent:
            raise TypeError("user_agent must be a non-empty str")
        check_count("max_concurrency", max_concurrency, minimum=1)
        self._max_retry_after = check_seconds("max_retry_after", max_retry_after)
        if not isinstance(retry, RetryPolicy):
            raise TypeError(f"retry must be a RetryPolicy, not {type(retry).__name__}")
        self._retry = retry
        #: The bound of each attempt of a call that names none, ms: read here only.
        self._timeout_ms = float(DEFAULT_TIMEOUT_MS)
        check_count("max_body_bytes", max_body_bytes, minimum=1)
        if not isinstance(name, str) or not name:
            raise TypeError("name must be a non-empty str")
        self._base_url = prepare_base_url(base_url)
        self._max_concurrency = max_concurrency
        self._wall_clock = wall_clock
        self._name = name
        if bucket_store is not None and not isinstance(bucket_store, BucketStore):
            raise TypeError(
                "bucket_store must implement BucketStore (wait_time, acquire, block), "
                f"not {type(bucket_store).__name__}"
            )
        self._buckets: BucketStore = bucket_store if bucket_store is not None else MemoryBucketStore()
        self._scope = ""  # the token's bucket scope (a hash), set with the token

        # The requests.Session is configured once, never mutated afterwards.
        self._transport: Transport = transport if transport is not None else HttpTransport(
            self._base_url,
            user_agent=user_agent,
            pool_maxsize=max(max_concurrency, 5),
            max_body_bytes=max_body_bytes,
            name=name,
        )

        self._state_lock = threading.Lock()
        self._closed = False
        self._token: Secret | None = None
        self._live: set[Job] = set()
        self._fifo: FifoQueue[Job] = FifoQueue()
        self._delays: DelayQueue[Job] = DelayQueue(
            self._redispatch, thread_name=f"{name}-rest-timer-1"
        )
        self._workers: list[threading.Thread] = []

    # ------------------------------------------------------------------ token

    @property
    def token(self) -> str | None:
        """The bot token sent as ``Authorization: Bearer <token>``, or None.

        Set by the client at login and cleared at destroy. Without a token
        every call raises :class:`ServiceAuthError` and nothing is sent
        (never an ``Authorization: Bearer None``).

        Raises:
            TypeError: (setter) the value is neither a ``str`` nor None.
            ValueError: (setter) the token is empty or holds characters not
                allowed in a header (the message never quotes it).
        """
        secret = self._token
        return None if secret is None else secret.get()

    @token.setter
    def token(self, value: str | None) -> None:
        """Set or clear the token (validated; never echoed in errors)."""
        if value is None:
            self._token = None
            return
        check_token(value)
        self._scope = bucket_scope(value)
        self._token = Secret(value)

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    @property
    def base_url(self) -> str:
        """The REST base URL, without a trailing ``/``."""
        return self._base_url

    @property
    def retry(self) -> RetryPolicy:
        """The retry policy of every call that names none."""
        return self._retry

    @property
    def bucket_store(self) -> BucketStore:
        """The bucket table in use."""
        return self._buckets

    # ------------------------------------------------------------------ public calls

    def submit(
        self,
        route: Route,
        *,
        params: Mapping[str, Any] | None = None,
        body: str | bytes | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        timeout_ms: float | None = None,
        retry: RetryPolicy | int | None = None,
        authorized: bool = True,
    ) -> concurrent.futures.Future[Any]:
        """Queue one call and return its Future at once.

        The Future is already running (it cannot be cancelled); its result is what
        :meth:`request` returns or raises.

        Args:
            route: Method and encoded path (:class:`Route`).
            params: Query parameters, form-encoded; ``None`` values omitted,
                never a bare ``?``.
            body: An already serialised JSON body (``str`` sent as UTF-8, or
                ``bytes``), sent as is.
            json: For the library's own methods: a value serialised to JSON
                here (``None`` values inside it kept as given); ``json=None``
                means no body. Not together with ``body``.
            headers: Extra headers merged on top of the defaults; any
                ``Authorization`` variant (any letter case) is dropped.
            timeout_ms: Bound of each whole attempt (connect, send, headers
                and body), milliseconds; None (the default) the session's, 15,000
                (every layer above passes None on, so the default is read here only).
            retry: This call's :class:`~.retry.RetryPolicy`; an int ``n`` is the
                session's policy with ``n`` retries after the first attempt (1 + n
                requests at most); None (the default) the session's :attr:`retry`.
            authorized: False sends no ``Authorization`` header at all and
                needs no token (webhook execution, whose token is in the
                path); the call still goes through the queue, the buckets
                and the retries.

        Returns:
            A Future resolving to the parsed JSON, or None for a 204 or an
            empty 2xx body. It fails with the errors :meth:`request` raises
            once the call is queued (ServiceAPIError, RateLimitError,
            ServiceTimeoutError, ServiceError, or ValueError for a malformed
            request, never retried).

        Raises:
            TypeError: ``route`` is not a :class:`Route`; ``body`` is not
                ``str``/``bytes``; ``json`` cannot be serialised; ``headers``,
                ``params``, ``timeout_ms`` or ``retry`` have a wrong type.
            ValueError: ``body`` and ``json`` both given; a bad header name or
                a header value HTTP does not allow (a control character, a
                character outside Latin-1, whitespace at either end: the message
                names the header, never the value); ``timeout_ms`` <= 0;
                ``retry`` a negative int.
            ServiceAuthError: No token is set (``authorized`` calls only), or
                the session is closed (nothing is sent).
        """
        if not isinstance(route, Route):
            raise TypeError(f"route must be a Route, not {type(route).__name__}")
        data = request_body(body, json)
        caller_headers = check_headers(headers)
        timeout_ms = self._timeout_ms if timeout_ms is None else check_timeout_ms(timeout_ms)
        policy = resolve_retry(retry, self._retry)
        if params is not None:
            route = route.with_query(params)

        # Only the Secret (its repr is [REDACTED]) is held here: no local of this frame
        # ever holds the token, whatever is raised from it.
        secret = self._token
        if self._closed:
            raise ServiceAuthError(_CLOSED)
        if secret is None and authorized:
            raise ServiceAuthError("no token: log in before making REST calls")
        prepared = self._transport.prepare(route, data, caller_headers, secret if authorized else None)
        job = Job(route, prepared, timeout_ms, policy, secret if authorized else None)
        del prepared
        job.future.set_running_or_notify_cancel()
        with self._state_lock:
            closed = self._closed  # close() may have run since the check above
            if not closed:
                self._live.add(job)
                if not self._workers:
                    self._start_workers()
        if closed:
            del job  # its request carries the Authorization header
            raise ServiceAuthError(_CLOSED)
        self._dispatch(job)
        return job.future

    def request(
        self,
        route: Route,
        *,
        params: Mapping[str, Any] | None = None,
        body: str | bytes | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        timeout_ms: float | None = None,
        retry: RetryPolicy | int | None = None,
        authorized: bool = True,
    ) -> Any:
        """Make one call and wait for its result (``submit(...)`` then its result).

        Arguments are those of :meth:`submit`.

        Returns:
            The parsed JSON body, or None for a 204 or an empty 2xx body.

        Raises:
            TypeError, ValueError, ServiceAuthError: As :meth:`submit`, before
                anything is sent.
            ServiceAPIError: A non-OK answer after retries (``str(e)`` starts
                ``"API Error <status>: "``); a redirect (3xx, never followed;
                the message names the method, the path and the ``Location``);
                an answer whose body is over ``max_body_bytes``; or a 2xx whose
                body is not JSON or is JSON nested too deeply to parse.
            RateLimitError: A 429 after retries, or a 429 whose ``Retry-After``
                is longer than ``max_retry_after`` (any other status asking for
                longer raises :class:`ServiceAPIError` with its status).
            ServiceTimeoutError: The last attempt timed out.
            ServiceError: A network failure after the last retry (cause
                chained), or the session was closed meanwhile.
            ValueError: A malformed request, found when it was sent (never retried).
        """
        future = self.submit(
            route,
            params=params,
            body=body,
            json=json,
            headers=headers,
            timeout_ms=timeout_ms,
            retry=retry,
            authorized=authorized,
        )
        closed_polls = 0
        while True:
            done, _ = concurrent.futures.wait([future], timeout=_RESULT_POLL_S)
            if done:
                return future.result()
            if self._closed:
                closed_polls += 1
                if closed_polls > 1:  # close() ends every Future; this is a safety net
                    raise ServiceError("the REST session was closed; the call was cancelled")

    def close(self) -> None:
        """End the session (what ``Client.destroy()`` does to REST). Idempotent.

        Queued calls, bucket waits and retry sleeps end at once with
        :class:`ServiceError`, as do calls on the wire (their sockets are shut
        down); the token is cleared; every REST thread has stopped when this
        returns (joined within 1 s). Later calls raise :class:`ServiceAuthError`.
        """
        with self._state_lock:
            first = not self._closed
            self._closed = True
            self._token = None
            jobs = list(self._live)
            self._live.clear()
            workers = list(self._workers)
        if first:
            for job in jobs:
                self._set_exception(job, ServiceError("the REST session was closed; the call was cancelled"))
            self._fifo.close()
            self._delays.close()
            self._transport.close()
        deadline = time.monotonic() + DESTROY_JOIN_S
        current = threading.current_thread()
        for thread in workers:
            if thread is not current:
                thread.join(max(0.0, deadline - time.monotonic()))
        self._delays.join(max(0.0, deadline - time.monotonic()))
        self._transport.join(max(0.0, deadline - time.monotonic()))

    def __enter__(self) -> RestSession:  # noqa: PYI034 - typing.Self needs Python 3.11
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return (
            f"<RestSession {state} base_url={self._base_url!r} "
            f"queued={len(self._fifo)} parked={len(self._delays)} calls={len(self._live)}>"
        )

    def __reduce__(self) -> NoReturn:
        raise TypeError("RestSession cannot be pickled")

    # ------------------------------------------------------------------ internals

    def _start_workers(self) -> None:
        """Start the worker threads (called once, under ``_state_lock``)."""
        for n in range(1, self._max_concurrency + 1):
            thread = threading.Thread(target=self._work, name=f"{self._name}-rest-{n}", daemon=True)
            self._workers.append(thread)
            thread.start()

    def _bucket_wait(self, job: Job, *, acquire: bool = False) -> float:
        """Seconds ``job`` must still wait for its bucket (0 when clear; a :class:`PaceWait` for a pace slot).

        With ``acquire`` (a worker about to send) the store may count the
        request; otherwise it is a look that takes nothing.
        """
        store = self._buckets
        key = job.route.bucket
        try:
            if acquire:
                wait = job.acquire(store, self._scope)
            else:
                wait = store.wait_time(key, scope=self._scope)
        except Exception as exc:  # noqa: BLE001 - a failing store must not wedge calls
            _log.warning("bucket store %s(%r) failed; treating the bucket as clear",
                         "acquire" if acquire else "wait_time", key, exc_info=sanitized(exc))
            return 0.0
        return wait if wait > 0 else 0.0

    def _block_bucket(self, key: str, delay: float) -> None:
        try:
            self._buckets.block(key, delay, scope=self._scope)
        except Exception as exc:  # noqa: BLE001
            _log.warning("bucket store block(%r) failed", key, exc_info=sanitized(exc))

    def _dispatch(self, job: Job) -> None:
        """Send ``job`` to the back of the FIFO, or park it while its bucket is blocked.

        Runs on the submitting thread, the timer thread and the workers; takes
        no slot, so calls stuck behind one blocked bucket never stall the others.
        The bucket is checked again after every wake-up (it may have been
        blocked again meanwhile).
        """
        if job.future.done():
            return
        wait = self._bucket_wait(job)
        if wait > 0:
            self._park_on_bucket(job, wait)
        elif not self._fifo.put(job):
            self._end_closed(job)

    def _park_on_bucket(self, job: Job, wait: float) -> None:
        """Park ``job`` for ``wait`` seconds, or end it when it may not wait that long.

        A block (a 429's) longer than ``max_retry_after`` ends the call with
        :class:`RateLimitError`; a :class:`PaceWait` (no pace slot yet) that would
        end past the attempt's own timeout ends it with :class:`ServiceTimeoutError`.
        """
        if isinstance(wait, PaceWait):
            now = time.monotonic()
            if job.pace_deadline is None:
                job.pace_deadline = now + job.timeout_ms / 1000.0
            if now + wait > job.pace_deadline:
                self._set_exception(
                    job,
                    ServiceTimeoutError(
                        f"no rate-limit slot on bucket {job.route.bucket} within the call's timeout of "
                        f"{job.timeout_ms:g} ms (the shared pace has the next one in {float(wait):.2f} s)"
                    ),
                )
                return
        elif wait > self._max_retry_after:
            self._set_exception(
                job,
                RateLimitError(
                    429,
                    job.route.display_path,
                    retry_after=wait,
                    message=(
                        f"API Error 429: bucket {job.route.bucket} is rate limited for {wait:.1f} s more, "
                        f"over the {self._max_retry_after:g} s this session waits"
                    ),
                ),
            )
            return
        if not self._delays.put(time.monotonic() + wait, job):
            self._end_closed(job)

    def _end_closed(self, job: Job) -> None:
        self._set_exception(job, ServiceError("the REST session was closed; the call was cancelled"))

    def _settle(self, job: Job) -> bool:
        """Claim the right to complete ``job`` (exactly once)."""
        with self._state_lock:
            if job not in self._live:
                return False
            self._live.discard(job)
            return True

    def _set_result(self, job: Job, value: Any) -> None:
        if self._settle(job):
            try:
                job.future.set_result(value)
            except concurrent.futures.InvalidStateError:
                pass

    def _set_exception(self, job: Job, exc: BaseException) -> None:
        # close() removed every job from _live before failing them itself.
        if self._settle(job) or not job.future.done():
            try:
                job.future.set_exception(exc)
            except concurrent.futures.InvalidStateError:
                pass

    def _work(self) -> None:
        """Worker loop: one worker is one slot: take a job, send it, classify, free the slot."""
        while True:
            job = self._fifo.get()
            if job is None:
                if self._fifo.closed:
                    return
                continue
            if job.future.done():
                continue
            wait = self._bucket_wait(job, acquire=True)
            if wait > 0:  # blocked while it sat in the FIFO: park again, free the slot
                self._park_on_bucket(job, wait)
                continue
            try:
                self._attempt(job)
            except Exception as exc:  # noqa: BLE001 - a worker never dies of one call
                self._fail_unexpected(job, exc, "a REST worker")

    def _redispatch(self, job: Job) -> None:
        """The timer's callback for a parked job now due; a failure ends its call, never the timer."""
        try:
            self._dispatch(job)
        except Exception as exc:  # noqa: BLE001
            self._fail_unexpected(job, exc, "the REST timer")

    def _fail_unexpected(self, job: Job, exc: Exception, where: str) -> None:
        """End ``job`` with ``ServiceError("unexpected error: <type>")``, ``exc`` chained, and log it.

        The frames' locals are cleared before the ERROR line is logged (a handler may record
        them, and they hold the Authorization header); it has no traceback for a route with a
        secret in its path (a traceback may quote the URL).
        """
        error = chained(ServiceError(f"unexpected error: {type(exc).__name__}"), sanitized(exc), job.route, job.bearer)
        _log.error("unexpected error in %s", where, exc_info=None if has_path_secret(job.route) else exc)
        self._set_exception(job, error)

    def _attempt(self, job: Job) -> None:
        """Send one attempt of ``job`` and act on the outcome: result, error or a retry later.

        A 429 blocks its bucket for ``Retry-After`` (else the backoff); the other
        statuses of the call's policy are retried without blocking it; a
        ``Retry-After`` over ``max_retry_after`` ends the call at once.
        """
        job.attempts += 1
        job.pace_deadline = None  # the next attempt waits for a pace slot within its own timeout
        route = job.route
        started = time.monotonic()
        waited_ms = (started - job.ready_since) * 1000.0
        try:
            reply = self._transport.send_once(job.prepared, job.timeout_ms)
        except AttemptError as err:
            self._log_attempt(job, err.kind, waited_ms, started)
            self._after_failure(job, err)
            return
        finally:
            job.ready_since = time.monotonic()
        self._log_attempt(job, reply.status, waited_ms, started)
        policy = job.retry
        answer = classify(reply, route, job.bearer, policy.statuses)
        if answer.error is not None:
            self._set_exception(job, answer.error)
            return
        if not answer.retryable:
            self._set_result(job, answer.value)
            return

        retry_after = parse_retry_after(reply.retry_after, now=self._wall_clock()) if policy.respect_retry_after else None
        delay = retry_after if retry_after is not None else policy.backoff(job.attempts - 1)
        now = time.monotonic()
        if answer.status == 429:
            self._block_bucket(route.bucket, delay)
        error = refusal_error(
            answer, route, retry_after,
            retries_left=job.attempts <= policy.max_retries and answer.status in policy.statuses,
            max_retry_after=self._max_retry_after,
        )
        if error is None:
            self._retry_later(job, now + delay)
        else:
            self._set_exception(job, error)

    def _after_failure(self, job: Job, err: AttemptError) -> None:
        """Retry a timed-out or broken attempt later while retries remain, else fail the call."""
        if self._closed:
            self._end_closed(job)
            return
        if err.retryable and job.attempts <= job.retry.max_retries:
            self._retry_later(job, time.monotonic() + job.retry.backoff(job.attempts - 1))
            return
        self._set_exception(job, final_error(err, job.route, job.attempts, job.timeout_ms, job.bearer))

    def _retry_later(self, job: Job, due: float) -> None:
        """Park ``job`` until ``due``; it then goes through the bucket check and the FIFO again."""
        if _log.isEnabledFor(logging.DEBUG):
            # Logged before the job is parked: once parked, the timer may start its next attempt
            # at once (and count it), so this line always comes before that attempt's own.
            route = job.route
            _log.debug("%s %s: attempt %d/%d in %.0f ms", route.method, route.display_path, job.attempts + 1,
                       job.retry.attempts, max(0.0, due - time.monotonic()) * 1000.0)
        if not self._delays.put(due, job):
            self._end_closed(job)

    def _log_attempt(self, job: Job, outcome: int | str, waited_ms: float, started: float) -> None:
        if _log.isEnabledFor(logging.DEBUG):
            route = job.route
            _log.debug(
                "%s %s -> %s (attempt %d/%d, bucket %s, waited %.0f ms, took %.0f ms)",
                route.method,
                route.display_path,
                outcome,
                job.attempts,
                job.retry.attempts,
                route.bucket,
                waited_ms,
                (time.monotonic() - started) * 1000.0,
            )
