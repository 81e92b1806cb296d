"""Each socket client's send queue, bounded: a client that falls too far behind is disconnected.

Every event the emulator sends a client waits in that client's Engine.IO send queue until the
connection's writer takes it. python-engineio makes that queue an ``asyncio.Queue`` without a
bound and offers no option for one; below it, uvicorn's transport stops taking frames once its
buffer passes its high-water mark (64 KiB, asyncio's default), so a client that never reads would
have the queue grow for as long as events come. :class:`SendQueue` counts the bytes it holds and
refuses a packet once they reach ``Bounds.send_queue_bytes`` (16 MiB by default): the queue is
emptied at once and the owner's ``on_overflow`` hook disconnects the client (and logs why).
Everyone else is served as before.

The writer takes every queued packet at once, so a client holds at most about twice the bound:
what the writer is still writing, and what waits behind it. :class:`BoundedEngineServer` is the
python-engineio server that gives each socket such a queue.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import engineio  # type: ignore[import-untyped]

from .journal import Bounds

__all__ = ["PACKET_OVERHEAD_BYTES", "BoundedEngineServer", "SendQueue", "packet_bytes"]

#: What one queued packet counts besides its text: about what it costs in memory (the packet
#: object and its queue slot), so that many tiny events are bounded as well as a few large ones.
PACKET_OVERHEAD_BYTES = 256


def packet_bytes(item: Any) -> int:
    """The bytes an Engine.IO packet counts in a :class:`SendQueue`: its text as UTF-8 (a binary
    packet's length; a run of messages, :class:`~.wire.RunPacket`, all of its packets) plus
    :data:`PACKET_OVERHEAD_BYTES`. None, the queue's end marker, counts 0."""
    if item is None:
        return 0
    run = getattr(item, "run", None)
    if run is not None:
        return int(run.nbytes) + PACKET_OVERHEAD_BYTES * len(run)
    data = getattr(item, "data", None)
    if isinstance(data, str):
        return (len(data) if data.isascii() else len(data.encode("utf-8"))) + PACKET_OVERHEAD_BYTES
    if isinstance(data, (bytes, bytearray)):
        return len(data) + PACKET_OVERHEAD_BYTES
    return PACKET_OVERHEAD_BYTES


class SendQueue(asyncio.Queue[Any]):
    """One Engine.IO socket's send queue, counting the bytes it holds (:func:`packet_bytes`).

    A packet offered while the queue holds ``server.bounds.send_queue_bytes`` or more is not
    queued: the queue is *overflowed*. It drops everything it holds at once (so nothing waits on
    it any longer), calls ``server.fell_behind(self)``, and from then on takes only the end marker
    (None) that lets the socket's writer finish. Not thread-safe: the event loop's.

    Runs of a bulk post (:class:`~.wire.RunPacket`) are paced by their sender, which queues one
    only while the queue is under its bound, or once the client has stopped reading
    (:meth:`~.rt_base.RealtimeBase.emit_run`); a run may thus take the queue past its bound. So
    another packet is measured against the bound without the runs queued before it: an event
    that follows a large bulk post does not disconnect a client that is reading it.

    Args:
        server: The engine server whose socket this queue serves.

    Attributes:
        nbytes: Bytes held now.
        run_bytes: Bytes of them in runs of bulk posts.
        taken: Packets the socket's writer has taken so far.
        overflowed: Whether the bound was passed (the client is being disconnected).
    """

    def __init__(self, server: BoundedEngineServer) -> None:
        super().__init__()
        self._server = server
        self.nbytes = 0
        self.run_bytes = 0
        self.taken = 0
        self.overflowed = False
        self._room = asyncio.Event()
        self._room.set()

    @property
    def bound(self) -> int:
        """The bound, bytes (``Bounds.send_queue_bytes`` of the server, read at each use)."""
        return self._server.bounds.send_queue_bytes

    def put_nowait(self, item: Any) -> None:
        """Queue a packet, or overflow (see the class docstring); never blocks, never raises QueueFull."""
        if item is not None:
            if self.overflowed:
                return
            behind = self.nbytes if _is_run(item) else self.nbytes - self.run_bytes
            if behind >= self.bound:
                queued = self.nbytes
                self.overflowed = True
                self._discard()
                self._server.fell_behind(self, queued)
                return
        super().put_nowait(item)

    def _put(self, item: Any) -> None:
        super()._put(item)
        size = packet_bytes(item)
        self.nbytes += size
        if _is_run(item):
            self.run_bytes += size
        if self.nbytes >= self.bound:
            self._room.clear()

    def _get(self) -> Any:
        item = super()._get()
        self.taken += 1
        size = packet_bytes(item)
        self.nbytes -= size
        if _is_run(item):
            self.run_bytes -= size
        if self.nbytes < self.bound:
            self._room.set()
        return item

    def _discard(self) -> None:
        """Drop every queued packet, each marked done (so ``join()`` returns)."""
        while not self.empty():
            self.get_nowait()
            self.task_done()
        self.nbytes = self.run_bytes = 0
        self._room.set()

    async def room(self, timeout: float) -> bool:
        """Wait until the queue holds less than its bound, at most ``timeout`` seconds; whether it does."""
        if self.nbytes < self.bound or self.overflowed:
            return True
        try:
            await asyncio.wait_for(self._room.wait(), timeout)
        except asyncio.TimeoutError:
            return False
        return True


def _is_run(item: Any) -> bool:
    """Whether a queued item is a run of a bulk post (:class:`~.wire.RunPacket`)."""
    return getattr(item, "run", None) is not None


class BoundedEngineServer(engineio.AsyncServer):  # type: ignore[misc]
    """python-engineio's asyncio server with a :class:`SendQueue` for every socket.

    Takes python-engineio's ``AsyncServer`` arguments.

    Attributes:
        bounds: Where the queues read their bound (``send_queue_bytes``); the owner sets its own.
        on_overflow: Called as ``on_overflow(engine.io sid, bytes queued)`` on the event loop when
            a socket's queue overflows; it must disconnect that client (None: :meth:`abort`).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bounds = Bounds()
        self.on_overflow: Callable[[str, int], None] | None = None
        self._closing: set[asyncio.Task[Any]] = set()

    def create_queue(self, *args: Any, **kwargs: Any) -> SendQueue:
        """A new socket's send queue (python-engineio asks for one per socket)."""
        return SendQueue(self)

    def fell_behind(self, queue: SendQueue, queued: int) -> None:
        """A socket's queue overflowed with ``queued`` bytes: hand its sid to :attr:`on_overflow`."""
        eio_sid = next((sid for sid, sock in self.sockets.items() if sock.queue is queue), None)
        if eio_sid is None:
            return  # a socket already gone
        if self.on_overflow is not None:
            self.on_overflow(eio_sid, queued)
        else:
            self.abort(eio_sid)

    def abort(self, eio_sid: str) -> None:
        """Close an Engine.IO socket without a close packet, in a task of the running loop (a
        socket already gone is left alone)."""
        sock = self.sockets.get(eio_sid)
        if sock is None:
            return
        task = asyncio.get_running_loop().create_task(
            sock.close(wait=False, abort=True, reason=self.reason.TRANSPORT_ERROR))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)
