"""``python -m service_client.emulator [--port N] [--db PATH] [--seed demo] [--json] [--allowed-host NAME]``:
serve the emulator.

Prints the URLs (the web page's too) and, with ``--seed demo``, the demo tokens, then serves
until Ctrl-C. With ``--json`` it prints one line of JSON on stdout instead, for a program that
starts the emulator as a process (see :func:`describe`), and its other lines on stderr. It answers only ``127.0.0.1``, ``localhost`` and ``[::1]`` with its port, plus each
``--allowed-host`` (for instance the name a container or another machine uses to reach it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from typing import Any

from .demo import seed_demo
from .emulator import Emulator


def describe(emu: Emulator, demo: dict[str, Any] | None) -> dict[str, Any]:
    """What ``--json`` prints: the emulator's URLs, the process id and the seeded world.

    Args:
        emu: The running emulator.
        demo: What :func:`~service_client.emulator.seed_demo` returned, or None when nothing
            was seeded.

    Returns:
        ``{"base_url", "socket_url", "control_url", "page_url": str, "media_url": str | None,
        "pid": int, "users":
        [{"id", "name", "bot", "token"}], "server": {"id", "name"} | None, "channels":
        {name: id}}``; ``users`` is empty, ``server`` None and ``channels`` empty without a
        seed. The tokens are the users' login tokens, as ``create_user`` gives them.
    """
    users: list[dict[str, Any]] = []
    server: dict[str, str] | None = None
    channels: dict[str, str] = {}
    if demo is not None:
        for role in ("bot", "human"):
            user = demo[role]
            users.append({"id": user["publicId"], "name": user["name"], "bot": bool(user.get("isBot")),
                          "token": demo[f"{role}_token"]})
        server = {"id": demo["server"]["publicId"], "name": demo["server"]["name"]}
        channels = {name: channel["publicId"] for name, channel in demo["channels"].items()}
    return {
        "base_url": emu.base_url,
        "socket_url": emu.socket_url,
        "control_url": emu.control_url,
        "page_url": emu.page_url,
        "media_url": None if emu.core is None else emu.core.rt.media_url,
        "pid": os.getpid(),
        "users": users,
        "server": server,
        "channels": channels,
    }


def _print_for_people(emu: Emulator, demo: dict[str, Any] | None) -> None:
    """The URLs and, when seeded, the demo world's tokens and ids, one ``name: value`` a line."""
    print(f"base_url:    {emu.base_url}")
    print(f"socket_url:  {emu.socket_url}")
    print(f"control_url: {emu.control_url}")
    print(f"page_url:    {emu.page_url}")
    if emu.core is not None and emu.core.rt.media_url is not None:
        print(f"media_url:   {emu.core.rt.media_url} (voice media; a test fixture)")
    if demo is not None:
        print(f"bot_token:   {demo['bot_token']}")
        print(f"human_token: {demo['human_token']}")
        print(f"bot:         {demo['bot']['publicId']} ({demo['bot']['name']})")
        print(f"human:       {demo['human']['publicId']} ({demo['human']['name']})")
        print(f"server:      {demo['server']['publicId']} ({demo['server']['name']})")
        for name, channel in demo["channels"].items():
            print(f"channel:     #{name} {channel['publicId']}")


def main(argv: list[str] | None = None) -> int:
    """Run the emulator until Ctrl-C.

    Args:
        argv: Command-line arguments (default ``sys.argv[1:]``): ``--port N`` (0 = free port),
            ``--db PATH`` (sqlite3 file; default in memory), ``--seed demo``, ``--json`` (one
            JSON line on stdout, :func:`describe`), ``--allowed-host
            NAME`` (repeatable: ``name``, ``name:port`` or an IPv6 address, see ``Emulator``).

    Returns:
        The process exit status (0 after Ctrl-C, 2 for bad arguments, 1 if it cannot start).
    """
    parser = argparse.ArgumentParser(prog="python -m service_client emulator",
                                     description="Serve a local emulator of the chat service.")
    parser.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--db", default=":memory:", help="sqlite3 database file (default: in memory)")
    parser.add_argument("--seed", choices=["demo"], default=None, help="seed the demo world")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON line on stdout instead: the URLs, the pid and the seeded users "
                             "with their tokens (see describe()); the other lines go to stderr")
    parser.add_argument("--allowed-host", action="append", default=[], metavar="NAME", dest="allowed_hosts",
                        help="also answer this Host (name: any port, name:port: that port); repeatable. "
                             "Every other host but 127.0.0.1, localhost and [::1] gets 421")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        emu = Emulator(port=args.port, db=args.db, allowed_hosts=args.allowed_hosts)
    except (TypeError, ValueError) as exc:
        print(f"emulator: {exc}", file=sys.stderr)
        return 2
    try:
        emu.start()
    except (OSError, RuntimeError) as exc:
        print(f"emulator: cannot start: {exc}", file=sys.stderr)
        return 1
    try:
        demo = seed_demo(emu) if args.seed == "demo" else None
        if not args.json:
            _print_for_people(emu, demo)
        stop = threading.Event()
        try:
            # Announced inside the try: a Ctrl-C sent as soon as this line is read must land in
            # the handler below, never in the few instructions before it.
            if args.json:
                print(json.dumps(describe(emu, demo), separators=(",", ":")), flush=True)
                print("Serving; press Ctrl-C to stop.", file=sys.stderr, flush=True)
            else:
                print("Serving; press Ctrl-C to stop.", flush=True)
            while not stop.wait(1.0):
                if not emu.running:
                    print("emulator: server thread stopped", file=sys.stderr)
                    return 1
        except KeyboardInterrupt:
            pass
        return 0
    finally:
        emu.stop()


if __name__ == "__main__":
    sys.exit(main())
