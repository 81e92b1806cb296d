"""A socket client that stops reading is disconnected once it falls a bounded amount behind.

The client is websocket-client with a small receive buffer that, once joined, never reads
again. Events keep coming for it and for a reader that does read. Once the kernel's buffers
and uvicorn's are full, the events wait in the client's Engine.IO send queue; when that holds
``send_queue_bytes`` the emulator disconnects the client and says why in its log, and the
reader is served throughout. The queue itself is checked directly too: its count, its
overflow, and that nothing waits on it once it overflowed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
import websocket
from engineio import packet as eio_packet

from service_client.emulator import Emulator, rt_base
from service_client.emulator.journal import Bounds
from service_client.emulator.send_queue import PACKET_OVERHEAD_BYTES, SendQueue, packet_bytes
from service_client.emulator.wire import MessageRun, RunPacket

#: The smallest bound the emulator accepts: the test fills it quickly.
BOUND = 64 * 1024
#: Deadline of each wait, seconds.
WAIT_S = 30.0


class FellBehind(logging.Handler):
    """Keeps the emulator's "fell behind" log lines and signals the first."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []
        self.seen = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if "fell behind" in record.getMessage():
            self.lines.append(record.getMessage())
            self.seen.set()


@pytest.fixture
def fell_behind() -> Iterator[FellBehind]:
    handler = FellBehind()
    target = logging.getLogger("service_client.emulator.realtime")
    target.addHandler(handler)
    try:
        yield handler
    finally:
        target.removeHandler(handler)


def never_reading(emu: Any, token: str) -> websocket.WebSocket:
    """A websocket-client connection that joins as ``token`` and then reads nothing more (a 4 KiB
    receive buffer, so the kernel holds little for it)."""
    url = emu.socket_url.replace("http://", "ws://") + "/socket.io/?EIO=4&transport=websocket"
    ws = websocket.create_connection(url, timeout=10, sockopt=((socket.SOL_SOCKET, socket.SO_RCVBUF, 4096),))
    assert ws.recv().startswith("0{")
    ws.send("40" + json.dumps({"token": token}))
    assert ws.recv().startswith("40")
    return ws


def wait_until(check: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        assert time.monotonic() < deadline, f"not {what} within {WAIT_S} s"
        time.sleep(0.02)


def test_a_client_that_never_reads_is_disconnected_and_the_others_are_served(world, conns, fell_behind):
    emu = world.emulator
    emu.configure(send_queue_bytes=BOUND)
    reader = conns(world.human_token, world.human["publicId"])
    stalled = never_reading(emu, world.bot_token)
    try:
        assert emu.connection_count() == 2
        payload = {"blob": "x" * 60_000}
        sent = 0
        while not fell_behind.seen.is_set():
            assert sent < 2000, "2000 events of 60 KB queued for a client that reads nothing, and it is still on"
            emu.emit("test:blob", dict(payload, n=sent), to_server=world.server["publicId"])
            sent += 1
        wait_until(lambda: emu.connection_count() == 1, "disconnected")
        (line,) = fell_behind.lines
        assert world.bot["publicId"] in line and f"send_queue_bytes is {BOUND}" in line
        # the reader got every event, in order, and is still served
        for n in range(sent):
            assert reader.wait("test:blob")["n"] == n
        emu.emit("test:after", {"ok": True}, to_user=world.human["publicId"])
        assert reader.wait("test:after") == {"ok": True}
    finally:
        stalled.close(timeout=1)


@pytest.mark.slow
def test_a_bulk_post_waits_for_a_full_queue_then_disconnects_a_client_that_does_not_read(
        world, conns, fell_behind, monkeypatch):
    """A bulk post queues a run of 1,000 messages at a time; past a client's bound it waits for
    the client while it reads (the reader is paced, not dropped), then queues anyway for one
    that reads nothing, which is disconnected. Six runs of about 2.6 MB each: more than the
    kernel's buffers hold for a client that does not read."""
    monkeypatch.setattr(rt_base, "BULK_WAIT_S", 2.0)  # the reader reads at least a run in that time
    emu = world.emulator
    emu.configure(send_queue_bytes=BOUND)
    reader = conns(world.human_token, world.human["publicId"])
    stalled = never_reading(emu, world.bot_token)
    try:
        contents = [f"{i} " + "y" * 2000 for i in range(6000)]
        assert emu.post_messages(world.general["publicId"], world.human["publicId"], contents) == 6000
        # the post's last run may be queued for the stalled client below its bound: the next
        # event finds the queue over it
        emu.emit("test:after", {"ok": True}, to_server=world.server["publicId"])
        assert fell_behind.seen.wait(WAIT_S)
        wait_until(lambda: emu.connection_count() == 1, "disconnected")
        got = [reader.wait("message:new")["content"] for _ in contents]
        assert got == contents  # the reader was served every message, in order
        assert reader.wait("test:after") == {"ok": True}
    finally:
        stalled.close(timeout=1)


def test_the_bound_is_a_setting_in_range_and_reset_restores_it(world):
    emu = world.emulator
    for bad in (1024, 2 * 1024**3):
        with pytest.raises(ValueError, match="send_queue_bytes"):
            emu.configure(send_queue_bytes=bad)
    with pytest.raises(TypeError, match="send_queue_bytes"):
        emu.configure(send_queue_bytes="big")  # type: ignore[arg-type]
    emu.configure(send_queue_bytes=BOUND)
    assert emu.core is not None and emu.core.bounds.send_queue_bytes == BOUND
    emu.reset()
    assert emu.core.bounds.send_queue_bytes == 16 * 1024 * 1024


def _queue(bound: int, overflows: list[tuple[SendQueue, int]]) -> SendQueue:
    server = SimpleNamespace(bounds=Bounds(send_queue_bytes=bound),
                             fell_behind=lambda queue, queued: overflows.append((queue, queued)))
    return SendQueue(server)  # type: ignore[arg-type]


def test_the_send_queue_counts_bytes_and_overflows_once_at_its_bound():
    async def scenario() -> None:
        overflows: list[tuple[SendQueue, int]] = []
        queue = _queue(1000, overflows)
        small = eio_packet.Packet(eio_packet.MESSAGE, "é" * 100)  # 200 bytes of UTF-8
        assert packet_bytes(small) == 200 + PACKET_OVERHEAD_BYTES
        await queue.put(small)
        await queue.put(small)
        assert queue.nbytes == 2 * packet_bytes(small) and not queue.overflowed
        assert await queue.get() is small
        queue.task_done()
        assert queue.nbytes == packet_bytes(small)
        await queue.put(eio_packet.Packet(eio_packet.MESSAGE, "z" * 2000))  # below the bound before: taken
        assert queue.nbytes > 1000 and not overflows
        await queue.put(small)  # at the bound: overflow
        assert queue.overflowed and queue.empty() and queue.nbytes == 0
        assert overflows == [(queue, packet_bytes(small) + 2000 + PACKET_OVERHEAD_BYTES)]
        await asyncio.wait_for(queue.join(), 1)  # nothing is left to wait on
        await queue.put(small)  # dropped
        await queue.put(None)  # the writer's end marker still goes through
        assert queue.qsize() == 1 and await queue.get() is None
        assert len(overflows) == 1

    asyncio.run(scenario())


def test_a_bulk_run_over_the_bound_does_not_overflow_the_events_after_it():
    """A run of a bulk post is paced by its sender and may pass the bound; the events after it are
    measured without it, and only a further run (sent once the client stopped reading) overflows."""
    async def scenario() -> None:
        overflows: list[tuple[SendQueue, int]] = []
        queue = _queue(1000, overflows)
        run = RunPacket(MessageRun([str(i) for i in range(10)], ["r" * 500] * 10, {"pinned": False}))
        assert packet_bytes(run) == run.run.nbytes + 10 * PACKET_OVERHEAD_BYTES > 5000
        await queue.put(run)
        assert queue.nbytes == queue.run_bytes == packet_bytes(run)
        event = eio_packet.Packet(eio_packet.MESSAGE, "e" * 100)
        for _ in range(3):  # 356 bytes each: the third takes the events alone to 1068
            await queue.put(event)
        assert not overflows and queue.qsize() == 4
        await queue.put(event)  # now the events alone are at the bound
        assert overflows and queue.overflowed

        overflows.clear()
        queue = _queue(1000, overflows)
        await queue.put(run)
        await queue.put(run)  # a second run on top of a queue past its bound
        assert overflows and queue.overflowed and queue.run_bytes == 0

    asyncio.run(scenario())


def test_stopping_with_a_client_that_never_reads_logs_no_error():
    """uvicorn would wait for the close frame behind what the client has not read, cancel that
    wait after its grace period and log it as an error: the emulator cuts such clients off."""
    errors: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            errors.append(record.getMessage())

    handler = Keep(logging.ERROR)
    with Emulator() as emu:
        user = emu.create_user("stalled")
        stalled = never_reading(emu, user["token"])
        logging.getLogger("uvicorn.error").addHandler(handler)  # uvicorn sets its loggers up at start
        try:
            for n in range(100):  # about 6 MB: more than the kernel holds for it, less than the bound
                emu.emit("test:blob", {"blob": "x" * 60_000, "n": n}, to_user=user["user"]["publicId"])
            emu.reset()  # its socket.io session ends; its WebSocket stays open, still not read
            emu.stop()
        finally:
            logging.getLogger("uvicorn.error").removeHandler(handler)
            stalled.close(timeout=1)
    assert errors == []
