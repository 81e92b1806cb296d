"""The events fleet: a bot's socket events consumed by worker processes through Redis Streams.

One process holds the socket and publishes every event it delivers; any number
of worker processes, on any machines that reach the same Redis, consume them
in consumer groups, in order per channel, at least once, with nothing lost
when a worker dies. It needs the ``redis`` extra
(``pip install 'service_client[redis]'``); msgspec's JSON (installed with the
client on CPython) and hiredis's Redis protocol make it faster::

    # the socket's process
    client = Client(bucket_store=RedisBucketStore(REDIS_URL))
    publisher = EventPublisher(client, REDIS_URL)
    client.run(TOKEN)

    # each worker process
    worker = FleetWorker(REDIS_URL, TOKEN, group="bot")

    @worker.event
    def message_create(message):
        if message.content == "!ping":
            message.reply("pong")

    worker.run()

- :mod:`.publisher`: :class:`EventPublisher`, in the socket's process;
- :mod:`.leader`: :class:`StandbySocket`, standby socket processes (:mod:`.fence`: the fenced publish);
- :mod:`.worker`: :class:`FleetWorker`, a worker holding a client whose events come from the streams;
- :mod:`.consumer`: a worker's partitions: membership, leases, reads, lanes, acknowledgements;
- :mod:`.sends`: the workers' sends, run by the socket's process, replies claimed once;
- :mod:`.fetches`: the requests shared-state events need, made once per fleet;
- :mod:`.routing`: partitions, rendezvous hashing, ordering keys, Redis key names (pure);
- :mod:`.scripts`: the Lua scripts; :mod:`.trim`: the streams' trimming.

The "Scaling out" guide tells when to use it, what it guarantees and how to run it.
"""

from __future__ import annotations

from .leader import StandbySocket
from .publisher import EventPublisher
from .routing import EventRouter, FleetKeys, partition_of, rendezvous_owner
from .worker import FleetWorker

__all__ = ["EventPublisher", "EventRouter", "FleetKeys", "FleetWorker", "StandbySocket", "partition_of",
           "rendezvous_owner"]
