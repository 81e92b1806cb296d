"""Bulk posts reach every reader in exactly the emulator's order, whatever the reader's transport.

Every reader here is an ordered reader: websocket-client through :class:`fuzzkit.RawSocket` (one
thread, packets queued in wire order), the ``websockets`` package's synchronous client (one
``recv`` loop, with permessage-deflate negotiated), or an Engine.IO long-polling loop made of
sequential HTTP requests. A bulk post is written as whole runs of frames to a plain websocket,
through the compressor to a deflate one, and packet by packet to a polling client; each must
see the same sequence.
"""

from __future__ import annotations

import json
import socket
import threading
from typing import Any

import pytest
import requests
import websocket
from websockets.sync.client import connect as ws_connect

from .fuzzkit import MARKER, Conn

#: More than two runs of the emulator's bulk writer (1,000 messages each), the last one partial.
BULK = 2500


def _script(world: Any, sender: Conn) -> list[tuple[str, Any]]:
    """Interleave ordinary sends, raw events and bulk posts; return what every member must see,
    as ``(event, content or payload)`` in order (``sender`` has already read its own first echo)."""
    emu = world.emulator
    cid, human_id, sid = world.general["publicId"], world.human["publicId"], world.server["publicId"]
    sender.emit("message:send", {"channelPublicId": cid, "content": "first <a>", "embeds": [], "nonce": "n1"})
    sender.wait("message:new", check=lambda d: d.get("nonce") == "n1")  # handled before what follows
    emu.emit("test:between", {"n": 1}, to_server=sid)
    emu.post_messages(cid, human_id, [f"bulk {i} & <{i}>" for i in range(BULK)])
    emu.post_message(cid, human_id, "single")
    emu.emit("test:between", {"n": 2}, to_server=sid)
    emu.post_messages(cid, human_id, [f"tail {i}" for i in range(5)])
    return ([("message:new", "first &lt;a&gt;"), ("test:between", {"n": 1})]
            + [("message:new", f"bulk {i} &amp; &lt;{i}&gt;") for i in range(BULK)]
            + [("message:new", "single"), ("test:between", {"n": 2})]
            + [("message:new", f"tail {i}") for i in range(5)])


def _seen(pairs: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    return [(event, data["content"] if event == "message:new" else data) for event, data in pairs
            if event in ("message:new", "test:between")]


def test_bulk_interleaved_with_sends_and_events_in_exact_order_on_websocket_client(world, conns):
    bot = conns(world.bot_token, world.bot["publicId"])
    human = conns(world.human_token, world.human["publicId"])
    expected = _script(world, human)
    assert _seen(bot.before_marker()) == expected
    assert _seen(human.before_marker()) == expected[1:]  # its own echo was read by _script


def test_bulk_records_equal_single_post_records_field_for_field(world, conns):
    emu = world.emulator
    bot = conns(world.bot_token, world.bot["publicId"])
    cid, human_id = world.general["publicId"], world.human["publicId"]
    emu.post_message(cid, human_id, "one")
    emu.post_messages(cid, human_id, ["two", "three"])
    single, *bulk = [data for event, data in bot.before_marker() if event == "message:new"]
    for record in bulk:
        assert list(record) == list(single)
        assert {k: v for k, v in record.items() if k not in ("publicId", "content", "createdAt")} == \
            {k: v for k, v in single.items() if k not in ("publicId", "content", "createdAt")}
    assert [int(r["publicId"]) for r in [single, *bulk]] == sorted(int(r["publicId"]) for r in [single, *bulk])
    assert [m["publicId"] for m in emu.messages(cid)] == [r["publicId"] for r in [single, *bulk]]


def test_sends_during_a_bulk_post_land_before_or_after_it_and_readers_follow_the_history(world, conns):
    emu = world.emulator
    cid, human_id = world.general["publicId"], world.human["publicId"]
    bot = conns(world.bot_token, world.bot["publicId"])
    human = conns(world.human_token, world.human["publicId"])
    posted = threading.Event()
    failure: list[BaseException] = []

    def bulk() -> None:
        try:
            emu.post_messages(cid, human_id, [f"x{i}" for i in range(3000)])
        except BaseException as exc:  # reported by the test thread
            failure.append(exc)
        finally:
            posted.set()

    poster = threading.Thread(target=bulk, name="test-bulk-poster", daemon=True)
    poster.start()
    for j in range(40):
        bot.emit("message:send", {"channelPublicId": cid, "content": f"y{j}", "embeds": []})
    assert posted.wait(30) and not failure, failure
    poster.join(10)
    bot.probe()  # the emulator has handled every send above
    history = [m["content"] for m in emu.messages(cid)]
    assert sorted(history) == sorted([f"x{i}" for i in range(3000)] + [f"y{j}" for j in range(40)])
    start = history.index("x0")
    assert history[start:start + 3000] == [f"x{i}" for i in range(3000)], "a bulk post is stored contiguously"
    assert [h for h in history if h.startswith("y")] == [f"y{j}" for j in range(40)]
    for reader in (bot, human):
        assert [content for event, content in _seen(reader.before_marker()) if event == "message:new"] == history


def test_bulk_in_exact_order_to_a_deflate_websocket_reader(world, conns):
    url = world.emulator.socket_url.replace("http://", "ws://") + "/socket.io/?EIO=4&transport=websocket"
    with ws_connect(url, compression="deflate", open_timeout=10, max_size=None) as ws:
        assert "permessage-deflate" in (ws.response.headers.get("Sec-WebSocket-Extensions") or "")
        assert ws.recv(timeout=10).startswith("0")
        ws.send("40" + json.dumps({"token": world.bot_token}))
        assert ws.recv(timeout=10).startswith("40")
        human = conns(world.human_token, world.human["publicId"])
        expected = _script(world, human)
        world.emulator.emit(MARKER, {"n": "deflate"}, to_user=world.bot["publicId"])
        seen = []
        while True:
            frame = ws.recv(timeout=20)
            if frame == "2":
                ws.send("3")
                continue
            assert frame.startswith("42"), frame[:80]
            event, data = json.loads(frame[2:])
            if event == MARKER:
                break
            seen.append((event, data))
    assert _seen(seen) == expected


class _PollingReader:
    """An Engine.IO v4 long-polling client: sequential GETs, packets split on the record separator."""

    def __init__(self, root: str, token: str) -> None:
        self.url = root + "/socket.io/?EIO=4&transport=polling"
        self.http = requests.Session()
        opened = self._get(self.url)
        assert opened[0].startswith("0"), opened
        self.url += "&sid=" + json.loads(opened[0][1:])["sid"]
        self._post("40" + json.dumps({"token": token}))
        self.pending = [p for p in self._get(self.url) if p != "6"]
        assert self.pending and self.pending[0].startswith("40"), self.pending
        self.pending.pop(0)

    def _get(self, url: str) -> list[str]:
        response = self.http.get(url, timeout=20)
        assert response.status_code == 200, response.text[:200]
        return response.text.split("\x1e")

    def _post(self, packet: str) -> None:
        assert self.http.post(self.url, data=packet.encode(), timeout=10).status_code == 200

    def until(self, marker: dict[str, Any]) -> list[tuple[str, Any]]:
        """Every event before the ``MARKER`` event with payload ``marker``, in order."""
        seen = []
        while True:
            while self.pending:
                packet = self.pending.pop(0)
                if packet == "2":
                    self._post("3")
                elif packet.startswith("42"):
                    event, data = json.loads(packet[2:])
                    if event == MARKER and data == marker:
                        return seen
                    seen.append((event, data))
            self.pending = self._get(self.url)

    def close(self) -> None:
        self._post("1")
        self.http.close()


def test_bulk_in_exact_order_to_a_long_polling_reader(world, conns):
    reader = _PollingReader(world.emulator.socket_url, world.bot_token)
    try:
        human = conns(world.human_token, world.human["publicId"])
        expected = _script(world, human)
        world.emulator.emit(MARKER, {"n": "polling"}, to_user=world.bot["publicId"])
        assert _seen(reader.until({"n": "polling"})) == expected
    finally:
        reader.close()


@pytest.mark.parametrize("contents", [
    ["quote \" backslash \\ slash /", "new\nline\ttab\r", "é😀 \u2028 \ufeff", "&amp; already", "<b>&</b>"],
    ["nul \x00 inside", "after a nul", "control \x01\x1f"],
], ids=["json-path", "with-nul"])
def test_bulk_contents_round_trip_exactly(world, conns, contents):
    emu = world.emulator
    bot = conns(world.bot_token, world.bot["publicId"])
    cid = world.general["publicId"]
    assert emu.post_messages(cid, world.human["publicId"], contents) == len(contents)
    escaped = [c.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") for c in contents]
    assert [data["content"] for event, data in bot.before_marker() if event == "message:new"] == escaped
    assert [m["content"] for m in emu.messages(cid)] == escaped
    assert [m["content"] for m in emu.messages(cid, decoded=True)] == contents


def test_bulk_post_that_cannot_be_stored_changes_nothing(world, conns):
    emu = world.emulator
    bot = conns(world.bot_token, world.bot["publicId"])
    cid = world.general["publicId"]
    body = json.dumps({"channelId": cid, "authorId": world.human["publicId"], "contents": ["fine", "x"]})
    body = body.replace('"x"', '"lone \\ud800 surrogate"')  # JSON that decodes to a lone surrogate
    response = requests.post(emu.control_url + "/messages/bulk", data=body,
                             headers={"Content-Type": "application/json"}, timeout=10)
    assert response.status_code == 400
    assert emu.messages(cid) == []
    assert bot.none("message:new")


def test_bulk_keeps_its_place_behind_a_backlog_of_a_slow_reader(world):
    """A reader that stops reading: the emulator's buffers for it fill up and later events wait
    in its queue; a bulk post must still arrive after them, not jump ahead."""
    emu = world.emulator
    cid, human_id = world.general["publicId"], world.human["publicId"]
    url = emu.socket_url.replace("http://", "ws://") + "/socket.io/?EIO=4&transport=websocket"
    ws = websocket.create_connection(url, timeout=30, sockopt=((socket.SOL_SOCKET, socket.SO_RCVBUF, 65_536),),
                                   skip_utf8_validation=True)
    try:
        assert ws.recv().startswith("0")
        ws.send("40" + json.dumps({"token": world.bot_token}))
        assert ws.recv().startswith("40")
        big = "z" * 60_000
        # about 7 MB: more than the kernel holds for this reader (a fixed 64 KiB receive buffer, a
        # send buffer of at most 4 MiB) plus the emulator's transport buffer before it pauses
        backlog = 120
        for i in range(backlog):
            emu.post_message(cid, human_id, f"{i} {big}")
        emu.post_messages(cid, human_id, [f"bulk {i}" for i in range(BULK)])
        emu.post_message(cid, human_id, "after")
        emu.emit(MARKER, {"n": "slow"}, to_user=world.bot["publicId"])
        seen = []
        while True:
            frame = ws.recv()
            if frame == "2":
                ws.send("3")
                continue
            event, data = json.loads(frame[2:])
            if event == MARKER:
                break
            seen.append(data["content"].split(" ", 1)[0] if len(data["content"]) > 1000 else data["content"])
    finally:
        ws.close()
    assert seen == [str(i) for i in range(backlog)] + [f"bulk {i}" for i in range(BULK)] + ["after"]
