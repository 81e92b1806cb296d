"""Heap cost of the caches, and login time for a bot in 1,000 servers.

Run: ``python benchmarks/cache_bench.py [--count N] [--servers N] [--skip-login]``

Prints ``name: value`` lines:

- ``bytes_per_user``, ``bytes_per_member``, ``bytes_per_channel``,
  ``bytes_per_message``: bytes of Python heap (tracemalloc) still allocated
  per model after 100,000 of each went from **JSON text** through the real
  path (``json.loads``, then the manager builder or the socket handler) into
  a cache (messages: into a list a listener keeps). Everything the cache
  keeps alive is counted: the model, its strings and numbers, what it keeps
  of its record, the cache's key and slot, interned-string table growth.
  Members: 1,000 per server over 100 cached servers, each with its
  ``@everyone`` role embedded as the emulator sends it (and cached in
  ``guild.roles``); their users were cached first (counted in
  ``bytes_per_user``). Messages: authors are 1,000 cached users.
  Goal: ``bytes_per_member`` <= 600.
- ``bytes_per_message_struct``: ``bytes_per_message`` for the same messages
  as a default install's reader hands them on (frames with every key of the
  service's record, read into msgspec structs); printed only when msgspec is
  the reader's decoder.
- ``bytes_per_cached_message``: what the connection state's message cache
  (``Client(max_messages=...)``) holds per message it keeps whole, when
  nothing else keeps the message: the heap after 100,000 ``message:new``
  events with ``max_messages`` of 100,000 (every message kept) less the heap
  after the same events with ``max_messages=None``, per message.
- ``bytes_per_message_channel``: what the channel of each recent message id
  (kept whatever ``max_messages`` is, 20,000 ids at most) holds per id, once
  its message is gone: after the run with ``max_messages=None``, the size of
  its two dicts and of the id strings, which only they still hold
  (``sys.getsizeof``; the channel ids are shared), per id.
- ``login_1000_bare_ratio``: ``client.login`` time for a bot in 1,000
  servers (``/auth/me``, ``/servers``, then the 1,000 bot-member fetches
  through the session's 5 slots, caches filled), divided by the time of the
  same 1 + 1 + 1,000 requests made with bare ``requests`` sessions, the
  member fetches from 5 threads on warm connections: the cost of the
  library's queue, models and caches over plain HTTP with 5 requests in
  flight. The emulator runs in a separate process (``python -m
  service_client emulator``), so it does not share the client's GIL.
  Goal <= 1.1. Also printed: ``login_1000_s`` and ``login_1000_bare_s``
  (seconds).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from _emulator_process import EmulatorProcess

from service_client.gateway import decoder
from service_client.managers.channels import build_channel
from service_client.models.guild import Guild
from service_client.models.role import Role
from service_client.state.connection import ConnectionState
from service_client.state.parsers import Parsers


class _Keep:
    """An event registry that keeps each event's first argument (a listener that keeps every message)."""

    def __init__(self, kept: list[Any]) -> None:
        self.kept = kept

    def emit(self, event: str, *args: Any, key: Any = None) -> None:
        self.kept.append(args[0])

    def emit_one(self, event: str, arg: Any, key: Any) -> None:
        self.kept.append(arg)


class _NoEvents:
    """An event registry that drops every event (no listener pool)."""

    def emit(self, event: str, *args: Any, key: Any = None) -> None:
        pass

    def emit_one(self, event: str, arg: Any, key: Any) -> None:
        pass


def _BenchClient(max_messages: int | None = 1000) -> ConnectionState:  # noqa: N802 - reads as the stand-in it is
    """A connection state with the real managers and no transport: enough for caching models."""
    return ConnectionState(None, rest=None, events=_NoEvents(), pool=None, site_url="",  # type: ignore[arg-type]
                           max_messages=max_messages)


def _uid(i: int) -> str:
    return str(200_000_000_000_000_000 + i)


def _sid(i: int) -> str:
    return str(300_000_000_000_000_000 + i % 100)


def _rid(i: int) -> str:
    return str(400_000_000_000_000_000 + i % 100)


def user_record(i: int) -> dict[str, Any]:
    """A user record as the emulator sends it."""
    return {"publicId": _uid(i), "name": f"user{i}", "tag": f"{i % 10000:04d}", "image": None,
            "isBot": False, "status": "offline"}


def role_record(i: int) -> dict[str, Any]:
    """The ``@everyone`` role of server ``i % 100``."""
    return {"publicId": _rid(i), "name": "@everyone", "color": None, "hoist": False,
            "serverPublicId": _sid(i), "position": 0, "permissions": "552448"}


def member_record(i: int) -> dict[str, Any]:
    """A nested member record as the emulator sends it."""
    return {"publicId": str(100_000_000_000_000_000 + i), "userId": _uid(i), "user": user_record(i),
            "serverPublicId": _sid(i), "roles": [role_record(i)],
            "joinedAt": f"2026-01-02T03:{i // 60 % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z",
            "nickname": None, "isOwner": False}


def channel_record(i: int) -> dict[str, Any]:
    """A channel record."""
    return {"publicId": str(500_000_000_000_000_000 + i), "name": f"channel-{i}", "type": "TEXT",
            "serverPublicId": _sid(i), "categoryId": None, "position": i % 50,
            "isPrivate": False, "description": None}


def message_record(i: int) -> dict[str, Any]:
    """A ``message:new`` payload, escaped content included."""
    return {"publicId": str(600_000_000_000_000_000 + i), "content": f"message number {i} &amp; more",
            "author": user_record(i % 1000), "channelPublicId": str(500_000_000_000_000_000 + i % 100),
            "serverPublicId": _sid(i), "createdAt": f"2026-01-02T03:04:{i % 60:02d}.{i % 1000:03d}Z",
            "embeds": [], "fileUrl": None}


def _measure(make: Callable[[], Any]) -> int:
    """Bytes of traced heap still allocated after ``make()`` (its result kept alive)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        kept = make()
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    total = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    del kept
    return total


def _texts(record: Callable[[int], dict[str, Any]], count: int) -> list[str]:
    return [json.dumps(record(i)) for i in range(count)]


def heap_figures(count: int) -> dict[str, float]:
    """``bytes_per_user``, ``bytes_per_member``, ``bytes_per_channel``, ``bytes_per_message``."""
    figures: dict[str, float] = {}
    loads = json.loads

    # Users: the manager's upsert (what message authors, members, DMs go through).
    client = _BenchClient()
    texts = _texts(user_record, count)

    def make_users() -> Any:
        upsert = client.users.upsert
        for text in texts:
            upsert(loads(text))
        return client

    figures["bytes_per_user"] = _measure(make_users) / count
    del client, texts

    # Members: the builder behind members.fetch, guilds.fetch_all and member_add.
    client = _BenchClient()
    for i in range(100):
        guild = client.guilds._store(Guild(client, {"publicId": _sid(i), "name": f"s{i}",
                                                    "ownerId": _uid(999_999), "memberCount": count // 100}))
        guild.roles.cache[_rid(i)] = Role(client, role_record(i))  # type: ignore[arg-type]
    for i in range(count):
        client.users.upsert(user_record(i))
    texts = _texts(member_record, count)

    def make_members() -> Any:
        build = client.members.from_record
        for text in texts:
            build(loads(text), None, cache=True)
        return client

    figures["bytes_per_member"] = _measure(make_members) / count
    del client, texts

    # Channels: channels.fetch's builder into the channel cache.
    client = _BenchClient()
    texts = _texts(channel_record, count)

    def make_channels() -> Any:
        cache = client.channels.cache
        for text in texts:
            channel = build_channel(client, loads(text))
            cache[channel.id] = channel
        return client

    figures["bytes_per_channel"] = _measure(make_channels) / count
    del client, texts

    # Messages: the message:new socket handler; a listener keeps every message.
    client = _BenchClient()
    handlers = Parsers(client)
    for i in range(1000):
        client.users.upsert(user_record(i))
    kept: list[Any] = []
    client.events = _Keep(kept)  # type: ignore[assignment]
    texts = _texts(message_record, count)

    def make_messages() -> Any:
        handle = handlers.handle
        for text in texts:
            handle("message:new", [loads(text)])
        return kept

    figures["bytes_per_message"] = _measure(make_messages) / count
    if len(kept) != count:
        print(f"bytes_per_message_check: {len(kept)} of {count} messages built", file=sys.stderr)

    # The same messages as a default install's reader hands them on: frames with every key of
    # the service's record, read into msgspec structs (when msgspec is the decoder).
    client = _BenchClient()
    handlers = Parsers(client)
    decode = handlers.frame_decoders(decoder.NAME).get("message:new")
    if decode is not None:
        for i in range(1000):
            client.users.upsert(user_record(i))
        kept = []
        client.events = _Keep(kept)  # type: ignore[assignment]
        frames = [json.dumps(["message:new", dict(message_record(i), replyToId=None, editedAt=None, pinned=False)],
                             separators=(",", ":")).encode() for i in range(count)]

        def make_struct_messages() -> Any:
            handle = handlers.handle
            for frame in frames:
                items = decode(frame)
                handle(items[0], items[1:])
            return kept

        figures["bytes_per_message_struct"] = _measure(make_struct_messages) / count
        if len(kept) != count:
            print(f"bytes_per_message_struct_check: {len(kept)} of {count} messages built", file=sys.stderr)
    figures.update(message_cache_figures(count))
    return figures


def message_cache_figures(count: int) -> dict[str, float]:
    """``bytes_per_cached_message`` and ``bytes_per_message_channel`` (see the module docstring).

    Each run has a connection state of its own, dropped before the next one starts; a first,
    unmeasured run takes the one-off growth of the interpreter's tables (the interned strings).
    """
    loads = json.loads
    texts = _texts(message_record, count)

    def run(max_messages: int | None, figures: dict[str, float]) -> int:
        """Heap held after ``count`` events (the counts checked, the channel map's cost noted)."""
        state = _BenchClient(max_messages)
        for i in range(1000):
            state.users.upsert(user_record(i))

        def make() -> Any:
            handle = state.parsers.handle
            for text in texts:
                handle("message:new", [loads(text)])
            return state

        held = _measure(make)
        whole = len(state._messages) + len(state._messages_old)
        if whole != (max_messages or 0):
            print(f"bytes_per_cached_message_check: {whole} kept, not {max_messages}", file=sys.stderr)
        if max_messages is None:  # the ids are held by the channel map alone
            maps = (state._message_channels, state._message_channels_old)
            size = sum(map(sys.getsizeof, maps)) + sum(sys.getsizeof(key) for one in maps for key in one)
            figures["bytes_per_message_channel"] = size / sum(map(len, maps))
        return held

    figures: dict[str, float] = {}
    run(None, {})
    nothing = run(None, figures)
    everything = run(count, figures)
    return {"bytes_per_cached_message": (everything - nothing) / count, **figures}

# -- login --------------------------------------------------------------------------


def login_figures(servers: int) -> dict[str, float]:
    """Login figures for a bot in ``servers`` servers (see the module docstring).

    Raises:
        RuntimeError: The emulator process did not start, or login left the caches incomplete.
    """
    import requests

    from service_client import Client

    emu = EmulatorProcess()
    try:
        post = emu.post
        bot = post("/users", {"name": "bench-bot", "bot": True})
        bot_id = bot["user"]["publicId"]
        owner_id = post("/users", {"name": "owner"})["user"]["publicId"]
        server_ids: list[str] = []
        for i in range(servers):
            server = post("/servers", {"name": f"s{i}", "ownerId": owner_id})["server"]
            server_ids.append(server["publicId"])
            post(f"/servers/{server_ids[-1]}/members", {"userId": bot_id})

        headers = {"Authorization": f"Bearer {bot['token']}"}
        session = requests.Session()
        member_url = f"{emu.base_url}/servers/{server_ids[0]}/members/{bot_id}"
        for _ in range(5):  # open the connection of the sequential requests
            session.get(member_url, headers=headers, timeout=30).raise_for_status()

        # The same 1 + 1 + N requests with bare requests sessions (5 threads).
        local = threading.local()

        def member(sid: str) -> None:
            sess = getattr(local, "session", None)
            if sess is None:
                sess = local.session = requests.Session()
            sess.get(f"{emu.base_url}/servers/{sid}/members/{bot_id}", headers=headers,
                     timeout=30).raise_for_status()

        with ThreadPoolExecutor(5) as pool:
            list(pool.map(member, server_ids[:10]))  # open the 5 connections
            start = time.perf_counter()
            session.get(emu.base_url + "/auth/me", headers=headers, timeout=30).raise_for_status()
            session.get(emu.base_url + "/servers", headers=headers, timeout=30).raise_for_status()
            list(pool.map(member, server_ids))
            bare = time.perf_counter() - start
        session.close()

        client = Client(base_url=emu.base_url, socket_url=emu.root)
        try:
            start = time.perf_counter()
            client.login(bot["token"])
            elapsed = time.perf_counter() - start
            complete = len(client.guilds.cache) == servers and len(client.members.cache) == servers
        finally:
            client.destroy()
        if not complete:
            raise RuntimeError("login left the guild or member cache incomplete")
        return {
            f"login_{servers}_s": elapsed,
            f"login_{servers}_bare_s": bare,
            f"login_{servers}_bare_ratio": elapsed / bare,
        }
    finally:
        emu.stop()


def main(argv: list[str] | None = None) -> int:
    """Print the figures as ``name: value`` lines."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--count", type=int, default=100_000, help="models of each kind (default 100000)")
    parser.add_argument("--servers", type=int, default=1000, help="servers for the login figure (default 1000)")
    parser.add_argument("--skip-login", action="store_true", help="do not measure the login_* figures (no emulator process)")
    parser.add_argument("--skip-heap", action="store_true", help="do not measure the bytes_per_* figures")
    args = parser.parse_args(argv)
    if not args.skip_heap:
        for name, value in heap_figures(args.count).items():
            print(f"{name}: {value:.0f}", flush=True)
    if not args.skip_login:
        import warnings

        warnings.simplefilter("ignore")  # the insecure-host warning for the local emulator
        for name, value in login_figures(args.servers).items():
            print(f"{name}: {value:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
