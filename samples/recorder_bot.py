"""A recorder bot built only on the public API of service_client (needs the voice extra).

- ``!record`` joins the author's voice channel and writes what each speaker says to its own
  WAV file (48 kHz, 16-bit mono) in the recordings directory (``RECORDINGS_DIR``, default
  ``./recordings``), one sub-directory per recording;
- ``!stop`` stops and lists the files;
- ``!leave`` leaves the voice channel (a recording running stops with it).

Run it against any service (or ``python -m service_client emulator --seed demo``), with
``pip install 'service_client[voice]'``::

    RECORDINGS_DIR=/tmp/rec SERVICE_TOKEN=... SERVICE_BASE_URL=http://127.0.0.1:PORT/api/v2 \\
    SERVICE_SOCKET_URL=http://127.0.0.1:PORT python samples/recorder_bot.py
"""

from __future__ import annotations

import logging
import os
import pathlib
import threading
import time
from typing import Any

from service_client import AudioRecorder, Client, CommandContext, CommandDispatcher

log = logging.getLogger("recorder_bot")


def build_client(*, recordings_dir: str | os.PathLike[str] | None = None, **options: Any) -> Client:
    """Create the recorder bot's client.

    Args:
        recordings_dir: Where recordings go (default ``$RECORDINGS_DIR``, else ``./recordings``).
        **options: Keyword options for :class:`service_client.Client` (``base_url``, ...).

    Returns:
        The client, not yet logged in.
    """
    client = Client(**options)
    root = pathlib.Path(recordings_dir or os.environ.get("RECORDINGS_DIR", "recordings"))
    commands = CommandDispatcher(client, prefix="!")
    lock = threading.Lock()  # guards recording
    recording: list[AudioRecorder] = []

    @commands.command()
    def record(ctx: CommandContext) -> None:
        """Record everyone in your voice channel, one file per speaker."""
        state = client.voice_states.cache.get(ctx.author.id)
        if state is None or state.channel_id is None:
            ctx.reply("Join a voice channel first.")
            return
        with lock:
            if recording:
                ctx.reply("Already recording.")
                return
            connection = client.voice.join(state.channel_id)
            target = root / time.strftime("%Y%m%d-%H%M%S")
            recording.append(connection.record(target))
        ctx.reply(f"Recording to {target}.")

    @commands.command()
    def stop(ctx: CommandContext) -> None:
        """Stop recording and list the files."""
        with lock:
            recorder = recording.pop() if recording else None
        if recorder is None:
            ctx.reply("Not recording.")
            return
        files = recorder.stop()
        if not files:
            ctx.reply("Nobody spoke.")
            return
        ctx.reply("Recorded: " + ", ".join(f"{path.name}" for path in files.values()))

    @commands.command()
    def leave(ctx: CommandContext) -> None:
        """Leave the voice channel (a running recording stops)."""
        with lock:
            recording.clear()
        client.voice.leave()
        ctx.reply("Bye.")

    return client


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    bot = build_client(
        **{key: value for key, value in (("base_url", os.environ.get("SERVICE_BASE_URL")),
                                         ("socket_url", os.environ.get("SERVICE_SOCKET_URL"))) if value}
    )
    bot.run(os.environ["SERVICE_TOKEN"])
