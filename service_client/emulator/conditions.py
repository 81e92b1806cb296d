"""What a test observes of the in-process emulator and the conditions it sets: the REST
journal, injected faults, the rate limiter, outages and the bounds of its settings.

:class:`EmulatorConditions` is the part of :class:`~service_client.emulator.Emulator` that
works on the running core directly (no hop onto the server's loop): each method is
thread-safe through the core's own locks.
"""

from __future__ import annotations

from typing import cast

from .control import EmulatorCore, apply_settings
from .records import RequestRecord


class EmulatorConditions:
    """The journal, faults, limiter and settings of an :class:`~service_client.emulator.Emulator`.

    Not used alone: :class:`~service_client.emulator.Emulator` is built on it and sets
    :attr:`core` while it runs (None when stopped).
    """

    #: The running core, or None when stopped.
    core: EmulatorCore | None

    def requests(self) -> list[RequestRecord]:
        """The REST journal: :class:`RequestRecord` ``{method, path, query, status, startedAt, endedAt,
        headers, body, userId}`` entries.

        ``path`` is the raw path below ``/api/v2``, ``query`` the raw query string, times are epoch
        milliseconds (floats), ``status`` 0 for a reset fault; ``headers`` are lower-cased with
        ``authorization`` redacted; ``body`` is the parsed JSON body with secrets redacted (the
        value of any key naming a token, secret, password or authorization, and the caller's own
        token inside strings, read ``[REDACTED]``; the webhook token of a webhook execution's path
        reads ``***`` inside strings, as in ``path``), None when empty or not JSON; ``userId`` is the
        public id of the user whose valid token came with the request, else None. Every request
        is recorded with both, faults, unknown routes and bodies over the limit (413, ``body``
        None) included. The journal keeps the newest ``journal_entries`` requests, oldest first,
        and a ``body`` longer than ``journal_body_bytes`` as compact JSON reads as a string of
        its first bytes ending ``…[truncated: N bytes in all]`` (see :meth:`configure`).
        """
        assert self.core is not None
        return cast("list[RequestRecord]", self.core.log.snapshot())

    def clear_requests(self) -> None:
        """Empty the journal and reset the in-flight peak."""
        assert self.core is not None
        self.core.log.clear()

    def max_in_flight(self) -> int:
        """The highest number of REST requests in flight at once since the last clear."""
        assert self.core is not None
        return self.core.log.peak()

    def add_fault(self, method: str, path: str, *, status: int | None = None, count: int | None = 1,
                  retry_after: str | int | float | None = None, delay_ms: float = 0, body: str | None = None,
                  content_type: str | None = None) -> str:
        """Add a REST fault rule; returns its id.

        Args:
            method: HTTP method or ``"*"``.
            path: fnmatch glob on the path below ``/api/v2`` (e.g. ``/servers/*``).
            status: Status to answer (429, 500, 502, 503, 504, 200 ... ; 0 resets the connection);
                None with ``delay_ms`` only delays.
            count: Requests affected; None = all until :meth:`clear_faults`.
            retry_after: Raw ``Retry-After`` header value.
            delay_ms: Delay before answering, milliseconds.
            body: Body text instead of ``{"error": ...}`` (e.g. an HTML-looking proxy page, ``""``).
            content_type: ``"application/json"`` (the default) or ``"text/plain"``: a fault
                never answers HTML, which would run on the emulator's own origin.

        Raises:
            TypeError, ValueError: Bad arguments (a ``content_type`` such as ``"text/html"``, a
                NaN delay or ``retry_after``, a ``retry_after`` with control characters).
        """
        assert self.core is not None
        return self.core.faults.add(method, path, status=status, count=count, retry_after=retry_after,
                                    delay_ms=delay_ms, body=body, content_type=content_type).id

    def clear_faults(self) -> None:
        """Remove every fault rule."""
        assert self.core is not None
        self.core.faults.clear()

    def set_rate_limit(self, limit: int | None, window_s: float = 1.0, *, retry_after_fraction: bool = False) -> None:
        """Enforce ``limit`` requests per ``window_s`` seconds per bucket (method plus the first two path segments); None = off.

        Over the limit: 429 with ``Retry-After`` = ceil(seconds left) or, with
        ``retry_after_fraction``, the exact fraction.
        """
        assert self.core is not None
        self.core.limiter.configure(limit, window_s, retry_after_fraction=retry_after_fraction)

    def set_outage(self, seconds: float | None) -> None:
        """Refuse WebSocket upgrades (503) for ``seconds`` (0 to a day); None lifts it.

        Raises:
            TypeError: Not a number. ValueError: NaN, an infinity, negative, or over a day.
        """
        assert self.core is not None
        self.core.set_outage(seconds)

    def configure(self, *, realistic_rooms: bool | None = None, send_errors: bool | None = None,
                  refuse_auth: bool | None = None, voice_url: str | None = None, echo: str | None = None,
                  echo_delay_ms: float | None = None, limits: bool | None = None,
                  journal_entries: int | None = None, journal_body_bytes: int | None = None,
                  max_body_bytes: int | None = None, send_queue_bytes: int | None = None,
                  voice_e2ee_key: str | None = None) -> None:
        """Emulator settings; None leaves a setting unchanged; ``reset()`` restores the defaults.

        Args:
            realistic_rooms: Rooms computed only at connect time.
            send_errors: ``message:error {nonce, error}`` to the sender of a send refused for a
                reason other than the message rules (unknown channel, missing permission); a
                message that breaks the rules is always answered so.
            refuse_auth: Refuse every CONNECT.
            voice_url: Media URL sent in ``voice:livekit-token``.
            echo: What the *sending socket* gets of its own ``message:send``: ``"normal"``,
                ``"drop"`` (nothing; others still get it), ``"duplicate"`` (twice) or ``"delay"``
                (after ``echo_delay_ms``; others at once).
            echo_delay_ms: Delay of the ``"delay"`` echo mode, milliseconds (>= 0).
            limits: Limit mode: content over 4000 characters, more than 10 embeds or an embed
                over the embed limits (title 256, description 4096, 25 fields, field name 256,
                field value 1024, footer 2048, author 256, 6000 in all) is refused, with ``message:error``
                to the sender (the rules of ``service_client._message_rules``).
            journal_entries: Entries each journal keeps, the REST journal (:meth:`requests`) and
                the emit journal (:meth:`emits`): the newest, 1 to 1,000,000 (default 10,000).
            journal_body_bytes: Bytes of a request body or emit payload a journal entry keeps,
                as compact JSON, 16 to 16 MiB (default 8,192): a longer one reads as a string of
                its first bytes ending ``…[truncated: N bytes in all]``.
            max_body_bytes: Largest request body read, REST and control plane, 256 bytes to
                1 GiB (default 16 MiB): a longer one is answered 413 before it is parsed.
            send_queue_bytes: Most bytes of events waiting for one socket client, 64 KiB to 1 GiB
                (default 16 MiB): a client that falls further behind is disconnected.
            voice_e2ee_key: The shared end-to-end encryption key sent in ``voice:livekit-token``
                (``e2eeKey``), which clients with the voice extra encrypt their media with;
                ``reset()`` clears it.

        Raises:
            ValueError: Unknown echo mode, a delay outside 0..600000 ms (NaN included), a size
                out of range. TypeError: A flag is not a bool, a size not an int, ``voice_url``
                or ``voice_e2ee_key`` not a string.
        """
        assert self.core is not None
        apply_settings(self.core, realistic_rooms=realistic_rooms, send_errors=send_errors,
                       refuse_auth=refuse_auth, echo=echo, echo_delay_ms=echo_delay_ms, limits=limits,
                       voice_url=voice_url, journal_entries=journal_entries, journal_body_bytes=journal_body_bytes,
                       max_body_bytes=max_body_bytes, send_queue_bytes=send_queue_bytes,
                       voice_e2ee_key=voice_e2ee_key)
