"""Soak: a bot answers 50 messages per second for 10 minutes while its transport is dropped every minute.

Usage::

    python benchmarks/soak.py [--seconds 600] [--rate 50]

Prints ``name: value`` lines:

- ``sent``: messages a human posted (through the emulator's control plane, paced at ``--rate`` per second);
- ``answered``: those that got a reply from the bot (``Message.reply``, counted in the emulator's store);
- ``lost``: ``sent - answered`` (goal 0); ``duplicated``: extra replies to one message (goal 0);
- ``drops``: transport drops performed (every ``min(60, seconds / 4)`` s), ``reconnects`` seen by the bot;
- ``caught_up``: messages the bot answered from history after a reconnect (posted while it was offline);
- ``threads_start`` / ``threads_end``: live threads of this process after login / before destroy (goal: flat);
- ``threads_added``: names of the threads alive at the end that were not at the start;
- ``rss_mb_start`` / ``rss_mb_end``: resident memory of this process, MB (goal: flat).

The emulator runs in a child process (file-backed sqlite), so this process's memory is the bot's
alone. The service has no replay: messages posted while the bot is offline never arrive as
events (after a reconnect only new events come). The bot is written the way a production bot
should be: on ``reconnect`` it reads the channel history since the disconnect and answers what it
missed, and a reply whose echo was lost in a drop is checked against the history before it is
sent again. Every message id is
claimed once, so nothing is answered twice.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

import psutil
import requests

from service_client import Client, ServiceError

_CHILD = """
import sys
from service_client.emulator import Emulator
emu = Emulator(db=sys.argv[1]).start()
print(emu.port, flush=True)
sys.stdin.read()
emu.stop()
"""

#: Messages fetched per history page (the emulator's maximum).
PAGE = 100
#: History is read back to this long before the disconnect, seconds.
CATCH_UP_MARGIN_S = 5.0


class EmulatorProcess:
    """The emulator in a child process, driven through its JSON control plane."""

    def __init__(self, db: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD, db], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        port = int(self.proc.stdout.readline())
        self.url = f"http://127.0.0.1:{port}"
        self.http = requests.Session()

    def control(self, method: str, path: str, body: Any = None) -> Any:
        response = self.http.request(method, f"{self.url}/_emulator{path}", json=body, timeout=30)
        response.raise_for_status()
        return response.json() if response.content else None

    def close(self) -> None:
        self.http.close()
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


def _parse_time(text: str) -> float:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class SoakBot:
    """A bot that answers every human message exactly once, across drops."""

    def __init__(self, client: Client, channel_id: str) -> None:
        self.client = client
        self.channel_id = channel_id
        self._lock = threading.Lock()
        self._claimed: set[str] = set()
        self.disconnected_at = time.time()
        self.reconnects = 0
        self.caught_up = 0
        self.retried = 0
        self.replied = 0  # replies whose echo came back
        client.on("message_create", self._on_message)
        client.on("disconnect", self._on_disconnect)
        client.on("reconnect", self._on_reconnect)

    def _claim(self, message_id: str) -> bool:
        with self._lock:
            if message_id in self._claimed:
                return False
            self._claimed.add(message_id)
            return True

    def _on_message(self, message: Any) -> None:
        if message.author is None or message.author.bot or message.channel_id != self.channel_id:
            return
        if self._claim(message.id):
            self._reply(message.id, message.content)

    def _reply(self, message_id: str, content: str) -> None:
        for _ in range(20):
            try:
                self.client.send_message(self.channel_id, "re: " + content, reply_to_id=message_id)
                with self._lock:
                    self.replied += 1
                return
            except (ServiceError, TimeoutError):  # the socket dropped: maybe sent, maybe not
                pass
            self.retried += 1
            if not self.client.is_connected:
                try:
                    self.client.wait_for("reconnect", timeout=5)
                except TimeoutError:
                    pass
                except ServiceError:  # destroyed
                    return
            if not self.client.is_connected:
                continue
            try:
                if message_id in self._replied_in_history(self.disconnected_at - CATCH_UP_MARGIN_S):
                    return  # the reply went through before the drop
            except ServiceError:
                continue
        print(f"gave up replying to {message_id}", file=sys.stderr)

    def _on_disconnect(self, reason: str) -> None:
        self.disconnected_at = time.time()

    def _history(self, since: float) -> list[dict[str, Any]]:
        """Messages of the channel created after ``since`` (epoch s), oldest first."""
        out: list[dict[str, Any]] = []
        before: str | None = None
        while True:
            query = f"?limit={PAGE}" + (f"&before={before}" if before else "")
            page = self.client.api_call(f"/chat/{self.channel_id}{query}")["messages"]
            out = page + out
            if len(page) < PAGE or _parse_time(page[0]["createdAt"]) < since:
                return [m for m in out if _parse_time(m["createdAt"]) >= since]
            before = page[0]["publicId"]

    def _replied_in_history(self, since: float) -> set[str]:
        return {m["replyToId"] for m in self._history(since) if m.get("replyToId")}

    def _on_reconnect(self) -> None:
        # Runs before the events that follow the reconnect (they wait for the reconcile after it).
        self.reconnects += 1
        try:
            history = self._history(self.disconnected_at - CATCH_UP_MARGIN_S)
        except ServiceError as exc:
            print(f"catch-up failed: {exc}", file=sys.stderr)
            return
        replied = {m["replyToId"] for m in history if m.get("replyToId")}
        for message in history:
            author = message.get("author") or {}
            if author.get("isBot") or message["publicId"] in replied:
                continue
            if self._claim(message["publicId"]):
                self.caught_up += 1
                self._reply(message["publicId"], message["content"])


def _threads() -> int:
    return threading.active_count()


def _rss_mb() -> float:
    gc.collect()
    return psutil.Process().memory_info().rss / 1e6


def run(seconds: float, rate: float) -> dict[str, Any]:
    """Run the soak; returns the figures."""
    workdir = tempfile.mkdtemp(prefix="soak-")
    emu = EmulatorProcess(os.path.join(workdir, "soak.db"))
    client: Client | None = None
    try:
        human = emu.control("POST", "/users", {"name": "alice"})
        bot_user = emu.control("POST", "/users", {"name": "soakbot", "bot": True})
        created = emu.control("POST", "/servers", {
            "name": "Soak", "ownerId": human["user"]["publicId"], "channels": [{"name": "soak", "type": "TEXT"}],
        })
        server_id = created["server"]["publicId"]
        channel_id = created["channels"][0]["publicId"]
        bot_id = bot_user["user"]["publicId"]
        human_id = human["user"]["publicId"]
        emu.control("POST", f"/servers/{server_id}/members", {"userId": bot_id})

        client = Client(base_url=emu.url + "/api/v2", socket_url=emu.url)
        client.login(bot_user["token"], timeout=30)
        bot = SoakBot(client, channel_id)
        # Warm up (worker threads, connection pools), then take the starting figures.
        emu.control("POST", "/messages", {"channelId": channel_id, "authorId": human_id, "content": "warm-up"})
        client.wait_for("message_create", check=lambda m: m.author is not None and m.author.bot, timeout=10)
        threads_start, rss_start = _threads(), _rss_mb()
        names_start = {t.name for t in threading.enumerate()}

        drop_every = min(60.0, seconds / 4)
        interval = 1.0 / rate
        stop = threading.Event()
        started = time.monotonic()
        next_drop = started + drop_every
        sent = drops = 0
        due = started
        while True:
            now = time.monotonic()
            if now - started >= seconds:
                break
            if now >= next_drop:
                drops += emu.control("POST", "/drop", {"userId": bot_id})["count"]
                next_drop += drop_every
            emu.control("POST", "/messages", {"channelId": channel_id, "authorId": human_id, "content": f"m{sent}"})
            sent += 1
            due += interval
            stop.wait(max(0.0, due - time.monotonic()))

        # Drain: wait until the bot has replied to everything it claimed (or 30 s pass), then take
        # the end figures before reading the whole channel back (that read would inflate the RSS).
        deadline = time.monotonic() + 30
        while bot.replied + bot.retried < sent + 1 and time.monotonic() < deadline:
            stop.wait(0.2)
        stop.wait(1.0)
        threads_end, rss_end = _threads(), _rss_mb()
        names_added = sorted({t.name for t in threading.enumerate()} - names_start)
        deadline = time.monotonic() + 30
        while True:
            stats = _count(emu.control("GET", f"/channels/{channel_id}/messages")["messages"], bot_id)
            if stats["answered"] >= stats["sent"] or time.monotonic() > deadline:
                break
            stop.wait(0.5)
        client.destroy()
        return {
            "seconds": seconds,
            "rate": rate,
            "sent": sent,
            "answered": stats["answered"],
            "lost": max(sent, stats["sent"]) - stats["answered"],
            "duplicated": stats["duplicated"],
            "drops": drops,
            "reconnects": bot.reconnects,
            "caught_up": bot.caught_up,
            "retried_replies": bot.retried,
            "threads_start": threads_start,
            "threads_end": threads_end,
            "threads_added": ",".join(names_added) or "-",
            "rss_mb_start": round(rss_start, 1),
            "rss_mb_end": round(rss_end, 1),
        }
    finally:
        if client is not None:
            client.destroy()
        emu.close()


def _count(messages: list[dict[str, Any]], bot_id: str) -> dict[str, int]:
    human = [
        m["publicId"]
        for m in messages
        if (m.get("author") or {}).get("publicId") != bot_id and m.get("content") != "warm-up"
    ]
    replies: dict[str, int] = {}
    for m in messages:
        if (m.get("author") or {}).get("publicId") == bot_id and m.get("replyToId"):
            replies[m["replyToId"]] = replies.get(m["replyToId"], 0) + 1
    return {
        "sent": len(human),
        "answered": sum(1 for mid in human if mid in replies),
        "duplicated": sum(n - 1 for n in replies.values() if n > 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0, help="length of the run, seconds (default 600)")
    parser.add_argument("--rate", type=float, default=50.0, help="messages per second (default 50)")
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.rate <= 0:
        parser.error("--seconds and --rate must be positive")
    figures = run(args.seconds, args.rate)
    for name, value in figures.items():
        print(f"{name}: {value}")
    if args.json:
        print(json.dumps(figures))
    return 0 if figures["lost"] == 0 and figures["duplicated"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
