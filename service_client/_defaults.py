"""Library-wide defaults and limits: request concurrency, timeouts, retries, backoff, reconnection.

Every constant carries its unit in its ``#:`` comment. How the REST limits work together is told in
the rate-limits guide (``docs/guides/rate-limits.rst``).
"""

from __future__ import annotations

from typing import Any, ClassVar

#: Default REST base URL (ends in the API version segment).
DEFAULT_BASE_URL = "https://api.service-chat.app/v2"
#: Default socket host.
DEFAULT_SOCKET_URL = "https://rt.service-chat.app"
#: The service's own hosts: a client pointed at any other host (except :data:`LOCAL_HOSTS`)
#: warns with ``InsecureHostWarning`` at construction.
SERVICE_HOSTS = frozenset({"api.service-chat.app", "rt.service-chat.app"})
#: Hosts that are always accepted, also over plain HTTP.
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1"})

#: REST requests on the wire at once; further calls wait in a first-in first-out queue.
MAX_CONCURRENT_REQUESTS = 5
#: Default per-attempt REST timeout (connect, send and body read), milliseconds.
DEFAULT_TIMEOUT_MS = 15_000
#: Default number of retries after the first attempt (so at most 1 + 3 = 4 attempts).
DEFAULT_MAX_RETRIES = 3
#: First computed backoff delay, seconds (doubles per retry).
BACKOFF_BASE_S = 0.5
#: Cap of the computed backoff, seconds (never applied to Retry-After).
BACKOFF_CAP_S = 30.0
#: Longest Retry-After waited out; longer ones raise RateLimitError at once, seconds.
DEFAULT_MAX_RETRY_AFTER_S = 60.0
#: Largest REST answer body read, bytes once decoded (gzip, deflate): 16 MiB. A longer body is
#: not read further and ends the call with ServiceAPIError.
DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024

#: Wait for the message:new echo of a send, seconds; then ``TimeoutError``.
SEND_TIMEOUT_S = 10.0
#: Wait for the answer (ack) to a socket emit that asks for one, seconds.
ACK_TIMEOUT_S = 10.0
#: Wait for the namespace CONNECT answer, seconds (generous: a short wait fails slow networks).
CONNECT_TIMEOUT_S = 15.0
#: Wait for voice credentials (``voice:livekit-token``) after ``voice:join``, seconds.
VOICE_JOIN_TIMEOUT_S = 15.0
#: First reconnect delay, seconds; it doubles per attempt up to RECONNECT_CAP_S, attempts unlimited.
RECONNECT_BASE_S = 1.0
#: Longest reconnect delay, seconds.
RECONNECT_CAP_S = 30.0
#: Randomisation factor of the reconnect delay (0.5 = +/- 50 %).
RECONNECT_JITTER = 0.5
#: Time destroy() allows threads to stop, seconds.
DESTROY_JOIN_S = 1.0
#: Longest wait of destroy() for the ``client_close`` listeners, seconds.
CLOSE_LISTENERS_S = 5.0

#: Default number of event worker threads.
DEFAULT_WORKERS = 8
#: Default bound of the events waiting for listeners (queued on the worker pool or being run), in
#: all; one ordering key (a channel, else a server) may hold at most this divided by the number of
#: workers (12,500 with 8). Events past it are dropped, newest first, counted and logged.
DEFAULT_MAX_QUEUED_EVENTS = 100_000
#: Shortest time between two log lines about dropped events, seconds (the counts add up meanwhile).
EVENT_DROP_LOG_INTERVAL_S = 10.0
#: Activity name limit, characters; longer names are cut without error.
ACTIVITY_NAME_MAX = 128
#: Activity details limit, characters; longer details are cut without error.
ACTIVITY_DETAILS_MAX = 64
#: Messages whose reactions the tracker remembers (least recently used first out); an evicted
#: message's next reaction snapshot is diffed against nothing, so its reactions come out as adds.
REACTION_TRACKER_MAX = 10_000
#: Message ids whose channel is remembered, so that reaction events keep their channel's order
#: and carry their channel and server: at least the last this many, fewer than twice as many at
#: most (kept in two generations). Kept whatever ``max_messages`` is, None included.
MESSAGE_CHANNELS_MAX = 10_000
#: Default ``max_messages`` of a client: recent messages its connection state keeps whole (as
#: received), so that a reaction event carries its message: at least the last this many, fewer
#: than twice as many at most (kept in two generations). A thousand, as discord.py keeps by
#: default.
DEFAULT_MAX_MESSAGES = 1_000
#: Default bound of one socket emit (waiting for the socket, then writing), seconds.
EMIT_TIMEOUT_S = 10.0
#: Per-attempt timeout of a request an event waits for before it is dispatched (the member
#: refetch behind ``guild_member_update``, a channel listing refresh), milliseconds.
EVENT_FETCH_TIMEOUT_MS = 10_000
#: Retries of such a request after the first attempt (it holds up its server's later events).
EVENT_FETCH_MAX_RETRIES = 2

# -- the events fleet (service_client.fleet) -----------------------------------------------
#: Partition streams an :class:`~service_client.fleet.EventPublisher` spreads a bot's events over.
DEFAULT_FLEET_PARTITIONS = 64
#: Events a publisher keeps while Redis is away (or slow), in all; past it typing, presence and
#: activity events are dropped first, then the newest event, each counted and logged.
DEFAULT_FLEET_MAX_BUFFERED_EVENTS = 100_000
#: Entries a partition stream keeps at most, acknowledged or not; past it the oldest are trimmed
#: (those not yet acknowledged are lost for their group, counted and logged), entries.
DEFAULT_FLEET_MAX_STREAM_LENGTH = 10_000
#: Entries the stream of shared-state events (servers, channels, roles, members, presence) keeps.
DEFAULT_FLEET_MAX_STATE_LENGTH = 10_000
#: How often the publisher trims the partition streams at their acknowledged low-water mark, seconds.
FLEET_TRIM_INTERVAL_S = 1.0
#: How long a reply nonce (an event's reply, sent once) is remembered in Redis, seconds.
DEFAULT_FLEET_NONCE_TTL_S = 3_600.0
#: A partition lease's time to live, milliseconds: a worker that stops renewing (dead, paused)
#: loses its partitions this long after its last renewal. Renewed every third of it.
DEFAULT_FLEET_LEASE_TTL_MS = 1_200
#: Deliveries of an event whose listeners raise before it goes to the dead-letter stream.
DEFAULT_FLEET_MAX_DELIVERIES = 5
#: Entries a worker has read and not yet acknowledged (its lanes' backlog), at most.
DEFAULT_FLEET_MAX_IN_FLIGHT = 2_000
#: How long a worker's ``stop()`` waits for its lanes to finish before it gives their events up
#: to the next owner, seconds.
DEFAULT_FLEET_DRAIN_TIMEOUT_S = 10.0
#: A fleet worker's listener running this long is logged at WARNING with its lane, seconds.
FLEET_HUNG_LISTENER_S = 10.0
#: Entries the dead-letter stream of a group keeps (approximately), entries.
FLEET_DEAD_LETTER_MAX_LENGTH = 10_000
#: Entries the command stream (workers' sends to the socket's process) keeps (approximately).
FLEET_COMMAND_MAX_LENGTH = 10_000
#: Threads of the socket's process that run the workers' sends at once.
FLEET_COMMAND_THREADS = 16
#: Bound of each Redis reply and connect of the fleet (a blocking read waits less), seconds.
FLEET_REDIS_TIMEOUT_S = 5.0
#: Longest wait between two attempts while Redis is away, seconds (the waits start at 0.05 s
#: and double).
FLEET_RETRY_CAP_S = 0.5


class _MissingType:
    """Type of :data:`MISSING`: a singleton."""

    _instance: ClassVar[_MissingType | None] = None

    def __new__(cls) -> _MissingType:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "MISSING"


#: The one sentinel for "argument not given", where None means something else (``set_presence``
#: clears the activity with None; ``edit(name=...)`` methods send only the keywords given).
#: Falsy; ``repr`` ``MISSING``; pickles to itself.
MISSING: Any = _MissingType()
