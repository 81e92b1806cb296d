"""``python -m service_client.emulator [--port N] [--db PATH] [--seed demo] [--allowed-host NAME]``:
serve the emulator.

Prints the URLs (the web page's too) and, with ``--seed demo``, the demo tokens, then serves
until Ctrl-C. It answers only ``127.0.0.1``, ``localhost`` and ``[::1]`` with its port, plus each
``--allowed-host`` (for instance the name a container or another machine uses to reach it).
"""

from __future__ import annotations

import argparse
import sys
import threading

from .demo import seed_demo
from .emulator import Emulator


def main(argv: list[str] | None = None) -> int:
    """Run the emulator until Ctrl-C.

    Args:
        argv: Command-line arguments (default ``sys.argv[1:]``): ``--port N`` (0 = free port),
            ``--db PATH`` (sqlite3 file; default in memory), ``--seed demo``, ``--allowed-host
            NAME`` (repeatable: ``name``, ``name:port`` or an IPv6 address, see ``Emulator``).

    Returns:
        The process exit status (0 after Ctrl-C, 2 for bad arguments, 1 if it cannot start).
    """
    parser = argparse.ArgumentParser(prog="python -m service_client emulator",
                                     description="Serve a local emulator of the chat service.")
    parser.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--db", default=":memory:", help="sqlite3 database file (default: in memory)")
    parser.add_argument("--seed", choices=["demo"], default=None, help="seed the demo world")
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
        print(f"base_url:    {emu.base_url}")
        print(f"socket_url:  {emu.socket_url}")
        print(f"control_url: {emu.control_url}")
        print(f"page_url:    {emu.page_url}")
        if emu.core is not None and emu.core.rt.media_url is not None:
            print(f"media_url:   {emu.core.rt.media_url} (voice media; a test fixture)")
        if args.seed == "demo":
            demo = seed_demo(emu)
            print(f"bot_token:   {demo['bot_token']}")
            print(f"human_token: {demo['human_token']}")
            print(f"bot:         {demo['bot']['publicId']} ({demo['bot']['name']})")
            print(f"human:       {demo['human']['publicId']} ({demo['human']['name']})")
            print(f"server:      {demo['server']['publicId']} ({demo['server']['name']})")
            for name, channel in demo["channels"].items():
                print(f"channel:     #{name} {channel['publicId']}")
        stop = threading.Event()
        try:
            # Announced inside the try: a Ctrl-C sent as soon as this line is read must land in
            # the handler below, never in the few instructions before it.
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
