"""Heap cost of the caches, and login time for a bot in 1,000 servers (issue 4 benchmark).

Run: ``python benchmarks/cache_bench.py [--count N] [--servers N] [--skip-login]``

Prints ``name: value`` lines:

- ``bytes_per_user``, ``bytes_per_member``, ``bytes_per_channel``,
  ``bytes_per_message``: Python heap (tracemalloc) retained per cached model,
  100,000 of each, measured from already-decoded wire records to models in
  their manager's cache (what caching adds on top of the records the socket
  or REST layer produced; models keep a reference to their record, never a copy).
- ``bytes_per_*_with_record``: the same measured from the JSON text, so the
  decoded records the models keep alive are counted too (the whole retained cost).
- ``login_1000_ratio``: ``login`` time for a bot in 1,000 servers on the
  in-process emulator, divided by the ideal (one round trip for ``/auth/me``,
  one for ``/servers``, then 1,000 member fetches 5 at a time, the round trip
  measured in the same run). Goal <= 1.3. Also ``login_1000_s`` and
  ``login_1000_vs_bare_ratio``: login time over the same 1 + 1 + 1,000
  requests made with bare ``requests`` sessions (the member fetches from 5
  threads). The emulator shares this process (and its GIL) and serves one
  request at a time, so 5 concurrent fetches do not take 1/5 of the time:
  the ``vs_bare`` figure shows what the client itself adds. Skipped (not
  printed) when the client or emulator cannot run here.

Members are spread over 100 servers (1,000 each), each with the ``@everyone``
role embedded as the emulator sends it; their users are cached beforehand
(they are counted in ``bytes_per_user``).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tracemalloc
from collections.abc import Callable
from typing import Any

from service_client.gateway.handlers import WireHandlers
from service_client.managers.channels import ChannelManager
from service_client.managers.guilds import GuildManager
from service_client.managers.members import MemberManager
from service_client.managers.users import UserManager
from service_client.managers.voice_states import VoiceStateManager
from service_client.models.channel import Channel


class _BenchClient:
    """The managers and no-op transport hooks: enough for caching models."""

    def __init__(self) -> None:
        self.user = None
        self.users = UserManager(self)  # type: ignore[arg-type]
        self.guilds = GuildManager(self)  # type: ignore[arg-type]
        self.channels = ChannelManager(self)  # type: ignore[arg-type]
        self.members = MemberManager(self)  # type: ignore[arg-type]
        self.voice_states = VoiceStateManager(self)  # type: ignore[arg-type]

    def _dispatch(self, event: str, *args: Any, key: Any = None) -> None:
        pass

    def _resolve_nonce(self, nonce: str, message: Any) -> None:
        pass


def _uid(i: int) -> str:
    return str(200_000_000_000_000_000 + i)


def user_record(i: int) -> dict[str, Any]:
    return {"publicId": _uid(i), "name": f"user{i}", "tag": f"{i % 10000:04d}", "image": None,
            "isBot": False, "status": "offline"}


def member_record(i: int) -> dict[str, Any]:
    sid = str(300_000_000_000_000_000 + i % 100)
    return {"publicId": str(100_000_000_000_000_000 + i), "userId": _uid(i), "user": user_record(i),
            "serverPublicId": sid, "roles": [{"publicId": str(400_000_000_000_000_000 + i % 100), "name": "@everyone",
                                              "color": None, "hoist": False, "serverPublicId": sid, "position": 0,
                                              "permissions": "552448"}],
            "joinedAt": "2026-01-02T03:04:05.678Z", "nickname": None, "isOwner": False}


def channel_record(i: int) -> dict[str, Any]:
    return {"publicId": str(500_000_000_000_000_000 + i), "name": f"channel-{i}", "type": "TEXT",
            "serverPublicId": str(300_000_000_000_000_000 + i % 100), "categoryId": None, "position": i % 50,
            "isPrivate": False, "description": None}


def message_record(i: int) -> dict[str, Any]:
    return {"publicId": str(600_000_000_000_000_000 + i), "content": f"message number {i} &amp; more",
            "author": user_record(i % 1000), "channelPublicId": str(500_000_000_000_000_000 + i % 100),
            "serverPublicId": str(300_000_000_000_000_000 + i % 100), "createdAt": "2026-01-02T03:04:05.678Z",
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


def heap_figures(count: int) -> dict[str, float]:
    """The per-model byte figures (see the module docstring)."""
    figures: dict[str, float] = {}
    kinds: dict[str, tuple[Callable[[int], dict[str, Any]], Callable[[_BenchClient, dict[str, Any]], Any]]] = {}

    def add_user(client: _BenchClient, rec: dict[str, Any]) -> Any:
        return client.users._upsert(rec)

    def add_member(client: _BenchClient, rec: dict[str, Any]) -> Any:
        return client.members._build(rec, None, cache=True)

    def add_channel(client: _BenchClient, rec: dict[str, Any]) -> Any:
        ch = Channel(client, rec)  # type: ignore[arg-type]
        client.channels.cache[ch.id] = ch
        return ch

    kinds["user"] = (user_record, add_user)
    kinds["member"] = (member_record, add_member)
    kinds["channel"] = (channel_record, add_channel)

    for name, (record, add) in kinds.items():
        for with_record in (False, True):
            client = _BenchClient()
            if name == "member":  # users are counted in bytes_per_user
                for i in range(count):
                    client.users._upsert(user_record(i))
            texts = [json.dumps(record(i)) for i in range(count)]
            if with_record:
                def make(client: _BenchClient = client, texts: list[str] = texts, add: Any = add) -> Any:
                    for text in texts:
                        add(client, json.loads(text))
                    return client
            else:
                records = [json.loads(t) for t in texts]

                def make(client: _BenchClient = client, records: list[dict[str, Any]] = records, add: Any = add) -> Any:
                    for rec in records:
                        add(client, rec)
                    return client
            size = _measure(make)
            key = f"bytes_per_{name}" + ("_with_record" if with_record else "")
            figures[key] = size / count
            del client, texts
            if not with_record:
                del records

    # Messages are not cached by a manager: a bot keeps them (e.g. in a list)
    # as message_create hands them out; authors are cached users (1,000 here).
    for with_record in (False, True):
        key = "bytes_per_message" + ("_with_record" if with_record else "")
        figures[key] = _message_heap(count, with_record) / count
    return figures


def _message_heap(count: int, with_record: bool) -> int:
    client = _BenchClient()
    handlers = WireHandlers(client)  # type: ignore[arg-type]
    for i in range(1000):
        client.users._upsert(user_record(i))
    kept: list[Any] = []
    client._dispatch = lambda event, *args, key=None: kept.append(args[0])  # type: ignore[method-assign]
    texts = [json.dumps(message_record(i)) for i in range(count)]
    records = [] if with_record else [json.loads(t) for t in texts]

    def make() -> Any:
        if with_record:
            for text in texts:
                handlers.handle("message:new", [json.loads(text)])
        else:
            for rec in records:
                handlers.handle("message:new", [rec])
        return kept

    return _measure(make)


def login_figures(servers: int) -> dict[str, float] | None:
    """Login figures for a bot in ``servers`` servers (see the module docstring).

    Returns:
        ``login_<N>_s`` (seconds), ``login_<N>_ratio`` (over the ideal from
        the sequential ``/auth/me`` round trip) and ``login_<N>_vs_bare_ratio``
        (over the same 2 + N requests made with bare ``requests`` sessions, the
        N member fetches from 5 threads), or None when the client or emulator
        cannot be imported.
    """
    try:
        from service_client import Client
        from service_client.emulator import Emulator
    except ImportError:
        return None
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    import requests

    emu = Emulator()
    emu.start()
    try:
        bot = emu.create_user("bench-bot", bot=True)
        bot_id = bot["user"]["publicId"]
        owner = emu.create_user("owner")
        server_ids = []
        for i in range(servers):
            server = emu.create_server(f"s{i}", owner["user"]["publicId"])
            server_ids.append(server["server"]["publicId"])
            emu.add_member(server_ids[-1], bot_id)
        headers = {"Authorization": f"Bearer {bot['token']}"}
        session = requests.Session()
        url = emu.base_url + "/auth/me"
        session.get(url, headers=headers).raise_for_status()
        rounds = 50
        start = time.perf_counter()
        for _ in range(rounds):
            session.get(url, headers=headers).raise_for_status()
        rtt = (time.perf_counter() - start) / rounds
        ideal = rtt * (2 + (servers + 4) // 5)

        local = threading.local()

        def member(sid: str) -> None:
            sess = getattr(local, "session", None)
            if sess is None:
                sess = local.session = requests.Session()
            sess.get(f"{emu.base_url}/servers/{sid}/members/{bot_id}", headers=headers).raise_for_status()

        with ThreadPoolExecutor(5) as pool:
            list(pool.map(member, server_ids[:10]))  # warm the 5 connections
            start = time.perf_counter()
            session.get(url, headers=headers).raise_for_status()
            session.get(emu.base_url + "/servers", headers=headers).raise_for_status()
            list(pool.map(member, server_ids))
            bare = time.perf_counter() - start

        client = Client(base_url=emu.base_url, socket_url=emu.socket_url)
        start = time.perf_counter()
        client.login(bot["token"])
        elapsed = time.perf_counter() - start
        complete = len(client.guilds.cache) == servers and len(client.members.cache) == servers
        client.destroy()
        if not complete:
            print(f"login_{servers}_check: caches incomplete", file=sys.stderr)
        return {
            f"login_{servers}_s": elapsed,
            f"login_{servers}_ratio": elapsed / ideal,
            f"login_{servers}_vs_bare_ratio": elapsed / bare,
        }
    finally:
        emu.stop()


def main(argv: list[str] | None = None) -> int:
    """Print the figures as ``name: value`` lines."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--count", type=int, default=100_000, help="models of each kind (default 100000)")
    parser.add_argument("--servers", type=int, default=1000, help="servers for the login figure (default 1000)")
    parser.add_argument("--skip-login", action="store_true", help="do not measure login_1000_ratio")
    args = parser.parse_args(argv)
    for name, value in heap_figures(args.count).items():
        print(f"{name}: {value:.0f}")
    if not args.skip_login:
        figures = login_figures(args.servers)
        for name, value in (figures or {}).items():
            print(f"{name}: {value:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
