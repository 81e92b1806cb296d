"""A bot whose events are handled by a fleet of worker processes through Redis.

Two kinds of process share one Redis:

- the **socket process** (one): a :class:`~service_client.Client` that holds the
  socket and an :class:`~service_client.fleet.EventPublisher` that adds every
  event it delivers to Redis Streams, and runs the workers' sends; or two or
  more **standby socket processes** (:class:`~service_client.fleet.StandbySocket`):
  one publishes, the others take over within about 2 s when it dies, and
  catch up the messages posted meanwhile;
- **workers** (any number, on any machine that reaches the Redis): each a
  :class:`~service_client.fleet.FleetWorker` with the bot's listeners and
  commands. Events of one channel are handled in order; a worker that dies
  loses nothing (its partitions move to the others); a reply is posted once
  even when its event is handled again.

The commands: ``!ping`` (answers "Pong!"), ``!slow <seconds>`` (a heavy handler:
it works that long, at most 10 s, then answers; other channels go on
meanwhile), and ``!who`` (which worker answered, to watch the partitions move).
Every REST call shares one rate-limit table through a ``RedisBucketStore``.

Run (with ``pip install 'service_client[redis]'`` and a Redis)::

    export SERVICE_TOKEN=... REDIS_URL=redis://127.0.0.1:6379/0
    export SERVICE_BASE_URL=http://127.0.0.1:PORT/api/v2 SERVICE_SOCKET_URL=http://127.0.0.1:PORT
    python samples/fleet_bot.py socket          # once (or: standby, two or more times)
    python samples/fleet_bot.py worker w1       # as many as you like, each with its own name
    python samples/fleet_bot.py worker w2
"""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import Any

from service_client import CatchUp, Client, CommandContext, CommandDispatcher, RedisBucketStore
from service_client.fleet import EventPublisher, FleetWorker, StandbySocket

#: The consumer group of the workers.
GROUP = "fleet-bot"

log = logging.getLogger("fleet_bot")


def build_socket_process(redis_url: str, **options: Any) -> tuple[Client, EventPublisher]:
    """The socket process's client (not logged in) and its publisher (it stops with the client).

    Args:
        redis_url: The Redis URL the workers use too.
        **options: Keyword options for :class:`service_client.Client` (``base_url``, ``socket_url``...).

    Returns:
        ``(client, publisher)``.
    """
    client = Client(bucket_store=RedisBucketStore(redis_url), **options)
    return client, EventPublisher(client, redis_url)


def build_standby(redis_url: str, token: str, **options: Any) -> StandbySocket:
    """A standby socket process (not started): it publishes while it holds the socket lease.

    Args:
        redis_url: The Redis URL the workers use too.
        token: The bot token.
        **options: Keyword options for :class:`service_client.Client` (``base_url``, ``socket_url``...).

    Returns:
        The standby; each takeover builds a new client with the process's ``RedisBucketStore``
        and a catch-up.
    """
    store = RedisBucketStore(redis_url)

    def make_client() -> Client:
        return Client(bucket_store=store, catch_up=CatchUp(), **options)

    return StandbySocket(make_client, redis_url, token)


def build_worker(redis_url: str, token: str, name: str | None = None, **options: Any) -> FleetWorker:
    """A worker with the bot's commands; not started.

    Args:
        redis_url: The Redis URL of the socket process.
        token: The bot token (for REST calls; it never goes to Redis).
        name: The worker's name in the group (unique among the live workers).
        **options: Keyword options for :class:`~service_client.fleet.FleetWorker` (``base_url``...).

    Returns:
        The worker.
    """
    worker = FleetWorker(redis_url, token, group=GROUP, name=name, **options)
    commands = CommandDispatcher(worker.client, prefix="!")  # a dispatcher attaches to the worker's client

    @commands.command()
    def ping(ctx: CommandContext) -> None:
        """Check that the bot is alive."""
        ctx.reply("Pong!")

    @commands.command()
    def slow(ctx: CommandContext, seconds: float) -> None:
        """Work a while (at most 10 s), then answer: other channels go on meanwhile."""
        time.sleep(max(0.0, min(10.0, seconds)))
        ctx.reply(f"Done after {seconds:g} s.")

    @commands.command()
    def who(ctx: CommandContext) -> None:
        """Name the worker that handles this channel."""
        ctx.reply(f"Worker {worker.name} handles this channel.")

    @worker.event
    def error(exc: Exception) -> None:
        log.warning("a listener failed: %s", exc)

    return worker


def main(argv: list[str]) -> int:
    """``socket``, ``standby`` or ``worker [name]``; settings from the environment (see the module)."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    token = os.environ.get("SERVICE_TOKEN", "")
    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    urls = {k: v for k, v in (("base_url", os.environ.get("SERVICE_BASE_URL")),
                              ("socket_url", os.environ.get("SERVICE_SOCKET_URL"))) if v}
    if argv[:1] == ["socket"]:
        client, publisher = build_socket_process(redis_url, **urls)
        try:
            client.run(token)
        finally:
            publisher.close()
        return 0
    if argv[:1] == ["standby"]:
        build_standby(redis_url, token, **urls).run()
        return 0
    if argv[:1] == ["worker"]:
        name = argv[1] if len(argv) > 1 else None
        urls.pop("socket_url", None)
        build_worker(redis_url, token, name, **urls).run()
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
