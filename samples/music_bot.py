"""A music bot built only on the public API of service_client (needs the voice extra).

Commands (prefix ``!``), for members in a voice channel of the server:

- ``!play <file>`` joins the author's voice channel and plays a file of the music directory,
  or queues it when something is playing;
- ``!pause``, ``!resume``;
- ``!skip`` plays the next file of the queue, ``!stop`` stops and empties the queue;
- ``!volume <0-200>`` sets the volume in percent (100 plays files as they are);
- ``!queue`` lists what is playing and what comes next;
- ``!leave`` leaves the voice channel.

Files are taken only from the music directory (``MUSIC_DIR``, default ``./music``): any
format FFmpeg reads (PyAV decodes it; no ``ffmpeg`` program needed). One playback runs at a
time: the bot keeps its own queue and starts the next file when ``player_finish`` says the
current one is over.

Run it against any service (or ``python -m service_client emulator --seed demo``), with
``pip install 'service_client[voice]'``::

    MUSIC_DIR=~/Music SERVICE_TOKEN=... SERVICE_BASE_URL=http://127.0.0.1:PORT/api/v2 \\
    SERVICE_SOCKET_URL=http://127.0.0.1:PORT python samples/music_bot.py
"""

from __future__ import annotations

import logging
import os
import pathlib
import threading
from collections import deque
from typing import Any

from service_client import AudioPlayback, Client, CommandContext, CommandDispatcher, ServiceError

log = logging.getLogger("music_bot")


class Player:
    """The queue of one bot: what plays, what comes next, at which volume. Thread-safe."""

    def __init__(self, client: Client, music_dir: pathlib.Path) -> None:
        self.client = client
        self.music_dir = music_dir.resolve()
        self.volume = 1.0
        self._lock = threading.Lock()  # guards _queue and _current
        self._queue: deque[pathlib.Path] = deque()
        self._current: AudioPlayback | None = None

    def find(self, name: str) -> pathlib.Path | None:
        """The file ``name`` of the music directory, or None (nothing outside it is played)."""
        path = (self.music_dir / name).resolve()
        if path.parent != self.music_dir and self.music_dir not in path.parents:
            return None
        return path if path.is_file() else None

    def add(self, path: pathlib.Path) -> bool:
        """Queue a file; True when it starts at once."""
        with self._lock:
            self._queue.append(path)
            idle = self._current is None or self._current.done
        if idle:
            self.next()
        return idle

    def next(self) -> None:
        """Play the next file of the queue, if any (the current playback, if any, stops)."""
        connection = self.client.voice.connection
        with self._lock:
            path = self._queue.popleft() if self._queue else None
        if path is None or connection is None:
            return
        try:
            playback = connection.play(path, volume=self.volume)
        except (ValueError, ServiceError) as exc:  # a bad file, the media gone: skip it
            log.warning("cannot play %s: %s", path.name, exc)
            self.next()
            return
        with self._lock:
            self._current = playback

    def finished(self, playback: AudioPlayback) -> None:
        """``player_finish``: the current file is over; start the next (not after ``!stop``)."""
        with self._lock:
            if playback is not self._current:
                return  # one replaced by !skip, or stopped by !stop
            self._current = None
        self.next()

    def stop(self) -> None:
        """Stop and forget the queue."""
        with self._lock:
            self._queue.clear()
            current, self._current = self._current, None
        if current is not None:
            current.stop()

    def skip(self) -> None:
        """Stop the current file and play the next, if any."""
        with self._lock:
            current, self._current = self._current, None
            more = bool(self._queue)
        if more:
            self.next()  # play() stops the current one
        elif current is not None:
            current.stop()

    def current(self) -> AudioPlayback | None:
        """The running playback, or None."""
        with self._lock:
            current = self._current
        return current if current is not None and not current.done else None

    def queued(self) -> list[str]:
        """The names of the files waiting."""
        with self._lock:
            return [path.name for path in self._queue]


def build_client(*, music_dir: str | os.PathLike[str] | None = None, **options: Any) -> Client:
    """Create the music bot's client.

    Args:
        music_dir: The directory files are played from (default ``$MUSIC_DIR``, else ``./music``).
        **options: Keyword options for :class:`service_client.Client` (``base_url``, ...).

    Returns:
        The client, not yet logged in.
    """
    client = Client(**options)
    player = Player(client, pathlib.Path(music_dir or os.environ.get("MUSIC_DIR", "music")))
    commands = CommandDispatcher(client, prefix="!")
    client.on("player_finish", player.finished)

    def join_author(ctx: CommandContext) -> bool:
        state = client.voice_states.cache.get(ctx.author.id)
        if state is None or state.channel_id is None:
            ctx.reply("Join a voice channel first.")
            return False
        client.voice.join(state.channel_id)
        return True

    @commands.command()
    def play(ctx: CommandContext, *, name: str) -> None:
        """Play a file of the music directory, or queue it: !play song.mp3."""
        path = player.find(name)
        if path is None:
            ctx.reply(f"No file {name!r} in the music directory.")
            return
        if not join_author(ctx):
            return
        if player.add(path):
            ctx.reply(f"Playing {path.name}.")
        else:
            ctx.reply(f"Queued {path.name} ({len(player.queued())} waiting).")

    @commands.command()
    def pause(ctx: CommandContext) -> None:
        """Pause the music."""
        current = player.current()
        if current is None:
            ctx.reply("Nothing is playing.")
            return
        current.pause()
        ctx.reply(f"Paused at {current.position:.1f} s.")

    @commands.command()
    def resume(ctx: CommandContext) -> None:
        """Resume the music."""
        current = player.current()
        if current is None:
            ctx.reply("Nothing is playing.")
            return
        current.resume()
        ctx.reply("Resumed.")

    @commands.command()
    def skip(ctx: CommandContext) -> None:
        """Play the next file of the queue."""
        player.skip()
        ctx.reply("Skipped.")

    @commands.command()
    def stop(ctx: CommandContext) -> None:
        """Stop the music and empty the queue."""
        player.stop()
        ctx.reply("Stopped.")

    @commands.command()
    def volume(ctx: CommandContext, percent: int) -> None:
        """Set the volume, 0 to 200 percent: !volume 50."""
        if not 0 <= percent <= 200:
            ctx.reply("The volume goes from 0 to 200.")
            return
        player.volume = percent / 100
        current = player.current()
        if current is not None:
            current.volume = player.volume
        ctx.reply(f"Volume {percent}%.")

    @commands.command()
    def queue(ctx: CommandContext) -> None:
        """List what plays and what comes next."""
        current = player.current()
        playing = f"Playing {current.source} ({current.position:.1f} s)." if current else "Nothing is playing."
        waiting = player.queued()
        ctx.reply(playing + (" Next: " + ", ".join(waiting) + "." if waiting else ""))

    @commands.command()
    def leave(ctx: CommandContext) -> None:
        """Leave the voice channel."""
        player.stop()
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
