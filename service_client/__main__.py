"""Command line: ``python -m service_client demo`` and ``python -m service_client emulator``.

``demo`` starts the emulator in-process with a demo server, runs the sample bot
``samples/ping_bot.py`` against it, posts ``!ping`` and ``!echo hello world``
as the human user ``alice`` and prints the conversation. It exits 0 when every
expected reply arrived, 1 otherwise. ``--serve`` then keeps everything running
until Ctrl-C.

``emulator`` serves the emulator alone (``--port``, ``--db``, ``--seed demo``).
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import sys
import threading
from collections.abc import Sequence
from functools import partial
from types import ModuleType
from typing import Any

__all__ = ["main", "run_demo"]

#: The messages the demo posts, and the replies it expects, in order.
DEMO_SCRIPT: tuple[tuple[str, str], ...] = (
    ("!ping", "Pong!"),
    ("!echo hello world", "hello world"),
)
#: Seconds the demo waits for each reply.
DEMO_REPLY_TIMEOUT_S = 10.0


def _grew(items: list[Any], size: int) -> bool:
    return len(items) > size


def _load_sample_bot() -> ModuleType:
    path = pathlib.Path(__file__).resolve().parent.parent / "samples" / "ping_bot.py"
    if not path.is_file():
        raise FileNotFoundError(
            f"the sample bot was not found at {path}; run the demo from a source checkout "
            "(pip install -e '.[emulator]')"
        )
    spec = importlib.util.spec_from_file_location("service_client_sample_ping_bot", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_demo(*, serve: bool = False, out: Any = None) -> int:
    """Run the demo conversation and print its transcript.

    Args:
        serve: Keep the emulator and the bot running until Ctrl-C afterwards.
        out: Text stream for the transcript (default ``sys.stdout``).

    Returns:
        0 when every expected reply arrived, 1 otherwise.

    Raises:
        ImportError: The emulator extra is not installed.
        FileNotFoundError: ``samples/ping_bot.py`` is missing (not a source checkout).
    """
    import warnings

    from . import Client, InsecureHostWarning
    from .emulator import Emulator, seed_demo

    out = out or sys.stdout
    bot_module = _load_sample_bot()
    with Emulator() as emu:
        demo = seed_demo(emu)
        general = demo["channels"]["general"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InsecureHostWarning)
            bot = bot_module.build_client(base_url=emu.base_url, socket_url=emu.socket_url)
            human = Client(base_url=emu.base_url, socket_url=emu.socket_url, workers=1)
        transcript: list[str] = []
        replies: list[Any] = []
        arrived = threading.Condition()

        @human.on("message_create")
        def record(message: Any) -> None:
            """Keep the demo channel's messages as transcript lines (worker pool)."""
            if message.channel_id != general["publicId"]:
                return
            author = message.author.username if message.author is not None else "(system)"
            with arrived:
                transcript.append(f"#{general['name']}  {author}: {message.content}")
                if message.author is not None and message.author.bot:
                    replies.append(message)
                arrived.notify_all()

        ok = True
        try:
            bot.login(demo["bot_token"])
            human.login(demo["human_token"])
            for sent, expected in DEMO_SCRIPT:
                with arrived:
                    before = len(replies)
                human.send_message(general["publicId"], sent)
                with arrived:
                    got = arrived.wait_for(partial(_grew, replies, before), DEMO_REPLY_TIMEOUT_S)
                    reply = replies[before].content if got else None
                if reply != expected:
                    ok = False
                    why = "no reply" if reply is None else f"got {reply!r}"
                    print(f"demo: expected {expected!r} in reply to {sent!r} within "
                          f"{DEMO_REPLY_TIMEOUT_S:.0f}s, {why}", file=sys.stderr)
                    break
            with arrived:
                lines = list(transcript)
            for line in lines:
                print(line, file=out)
            if ok:
                print(f"demo: all {len(DEMO_SCRIPT)} replies arrived", file=out)
            out.flush()
            if serve:
                print(f"\nserving until Ctrl-C\n  REST:    {emu.base_url}\n  socket:  {emu.socket_url}\n"
                      f"  control: {emu.control_url}\n  human token: {demo['human_token']}\n"
                      f"  channel #general: {general['publicId']}", file=out, flush=True)
                try:
                    threading.Event().wait()
                except KeyboardInterrupt:
                    pass
        finally:
            human.destroy()
            bot.destroy()
    return 0 if ok else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m service_client`` and the ``service-client`` script.

    Args:
        argv: Arguments (default ``sys.argv[1:]``).

    Returns:
        The process exit code.
    """
    parser = argparse.ArgumentParser(prog="python -m service_client")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the sample bot against the emulator and print the conversation")
    demo.add_argument("--serve", action="store_true", help="keep running until Ctrl-C afterwards")
    sub.add_parser("emulator", help="serve the emulator (see its --help)", add_help=False)
    args, rest = parser.parse_known_args(argv)
    if args.command == "emulator":
        from .emulator.__main__ import main as emulator_main

        return int(emulator_main(list(rest)) or 0)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    try:
        return run_demo(serve=args.serve)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
