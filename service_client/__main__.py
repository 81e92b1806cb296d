"""Command line: ``python -m service_client demo`` and ``python -m service_client emulator``.

``demo`` starts the emulator in-process with a demo server, runs the demo bot
(:mod:`service_client.demo_bot`) against it, posts ``!ping`` and ``!echo hello
world`` as the human user ``alice`` and prints the conversation. It exits 0
when every expected reply arrived, 1 otherwise. ``--serve`` then keeps
everything running until Ctrl-C, prints the URLs (the emulator's web page
first, where a person can chat with the bot in a browser), alice's token and
user id and a ``curl`` command that posts as alice, and prints the
conversation as it goes on.

``emulator`` serves the emulator alone (``--port``, ``--db``, ``--seed demo``, and
``--json`` for one machine-readable line: the URLs, the pid, the seeded users and tokens).

Both need the ``emulator`` extra; without it they print one line with the
``pip`` command that installs it and exit 2. ``--version`` prints the
package's version.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import threading
import warnings
from collections.abc import Sequence
from functools import partial
from typing import Any

from ._version import __version__
from .client import Client
from .demo_bot import build_client
from .errors import InsecureHostWarning

__all__ = ["main", "run_demo"]

#: The messages the demo posts, and the replies it expects, in order.
DEMO_SCRIPT: tuple[tuple[str, str], ...] = (
    ("!ping", "Pong!"),
    ("!echo hello world", "hello world"),
)
#: Seconds the demo waits for each reply.
DEMO_REPLY_TIMEOUT_S = 10.0
#: Exit status for a missing optional dependency (as for a usage error).
EXIT_MISSING_EXTRA = 2
#: The command that installs the emulator's dependencies.
EMULATOR_PIP = "pip install 'service_client[emulator]'"


def _grew(items: list[Any], size: int) -> bool:
    return len(items) > size


def _emulator_missing() -> str | None:
    """The name of the emulator dependency that cannot be imported, or None when all are there."""
    try:
        import service_client.emulator  # noqa: F401 - imported to see whether it can be
    except ModuleNotFoundError as exc:
        missing = (exc.name or "?").split(".")[0]
        if missing == "service_client":
            raise  # a broken installation of this package, not a missing extra
        return missing
    return None


def _demo_curl(control_url: str, channel_id: str, user_id: str) -> str:
    """A ``curl`` command posting ``!ping`` as ``user_id`` through the emulator's control plane."""
    from .emulator.control import CONTROL_POST_MESSAGE  # the optional emulator extra, running here

    body = json.dumps({"channelId": channel_id, "authorId": user_id, "content": "!ping"})
    return " ".join(
        [
            "curl -s -X POST",
            shlex.quote(control_url + CONTROL_POST_MESSAGE),
            "-H 'Content-Type: application/json'",
            "-d",
            shlex.quote(body),
        ]
    )


def _follow(transcript: list[str], arrived: threading.Condition, printed: int, out: Any) -> None:
    """Print transcript lines from index ``printed`` on as they arrive, until Ctrl-C."""
    while True:
        with arrived:
            arrived.wait_for(partial(_grew, transcript, printed), 1.0)
            new = transcript[printed:]
        printed += len(new)
        for line in new:  # printed by this thread only, with no lock held
            print(line, file=out, flush=True)


def run_demo(*, serve: bool = False, out: Any = None) -> int:
    """Run the demo conversation and print its transcript.

    Args:
        serve: Keep the emulator and the bot running until Ctrl-C afterwards,
            printing the conversation as it goes on.
        out: Text stream for the transcript (default ``sys.stdout``).

    Returns:
        0 when every expected reply arrived, 1 otherwise.

    Raises:
        ImportError: The emulator extra is not installed.
    """
    from .emulator import Emulator, seed_demo  # the optional emulator extra

    out = out or sys.stdout
    with Emulator() as emu:
        demo = seed_demo(emu)
        general = demo["channels"]["general"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InsecureHostWarning)
            bot = build_client(base_url=emu.base_url, socket_url=emu.socket_url)
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
            line = f"#{general['name']}  {author}: {message.content}"
            with arrived:
                transcript.append(line)
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
                human_id = demo["human"]["publicId"]
                try:
                    # Announced inside the try: a Ctrl-C sent as soon as this is read lands in the
                    # handler below.
                    print(
                        f"\nserving until Ctrl-C\n  page:    {emu.page_url}  (chat with the bot in a browser)\n"
                        f"  REST:    {emu.base_url}\n  socket:  {emu.socket_url}\n"
                        f"  control: {emu.control_url}\n  human token: {demo['human_token']}\n"
                        f"  human user id: {human_id}\n"
                        f"  channel #general: {general['publicId']}\n"
                        f"  post as {demo['human']['name']}: "
                        f"{_demo_curl(emu.control_url, general['publicId'], human_id)}\n"
                        "the conversation goes on below:",
                        file=out,
                        flush=True,
                    )
                    _follow(transcript, arrived, len(lines), out)
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
    parser = argparse.ArgumentParser(
        prog="python -m service_client",
        description="service_client: a demo of a bot on a local emulator of the service, or the emulator alone.",
    )
    parser.add_argument("--version", action="version", version=f"service_client {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser(
        "demo",
        help="run the sample bot against the emulator and print the conversation",
        description=(
            "Start the emulator in this process with a demo server, run the demo bot (commands !ping "
            "and !echo) against it, post '!ping' and '!echo hello world' as the user alice and print "
            "the conversation. Exits 0 when every reply arrived, 1 otherwise, 2 without the "
            "emulator extra."
        ),
        epilog=(
            "With --serve, everything keeps running until Ctrl-C: the emulator's web page (chat with "
            "the bot in a browser), its URLs, alice's token and user id and a curl command that posts "
            "as alice are printed, then the conversation as it goes on."
        ),
    )
    demo.add_argument(
        "--serve", action="store_true",
        help="after the demo, keep the emulator and the bot running until Ctrl-C and print how to reach them",
    )
    sub.add_parser("emulator", help="serve the emulator (see its --help)", add_help=False)
    args, rest = parser.parse_known_args(argv)
    missing = _emulator_missing()
    if missing is not None:
        print(
            f"python -m service_client {args.command}: the emulator extra is not installed "
            f"(no module {missing!r}); install it with: {EMULATOR_PIP}",
            file=sys.stderr,
        )
        return EXIT_MISSING_EXTRA
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
