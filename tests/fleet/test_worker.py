"""Workers against a real redis-server and the emulator: lanes, takeover, fencing, dead letters,
replies sent once, typed events and fresh caches, graceful hand-off.

The socket's process is the ``gateway`` fixture (a Client logged in as the world's bot, with an
EventPublisher of 8 partitions); the human posts through the emulator's control plane. Tests
wait on Events and Futures, never on sleeps. Marked ``redis``.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future
from typing import Any

import pytest

from service_client import ChannelAccessError, Message, ServiceError
from service_client.fleet import partition_of
from service_client.fleet.scripts import ACK, ACQUIRE, READ, RENEW
from service_client.fleet.state import EntryContext, run_in

pytestmark = pytest.mark.redis

pytest.importorskip("redis")


def _wait(predicate: Any, what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def _say(world: Any, channel: dict[str, Any], text: str) -> None:
    world.emulator.post_message(channel["publicId"], world.human["publicId"], text)


def _random(world: Any) -> dict[str, Any]:
    return next(c for c in world.channels if c["name"] == "random")


def test_a_worker_gets_typed_messages_and_replies_through_the_socket_process(
        world: Any, gateway: Any, make_worker: Any) -> None:
    worker = make_worker()
    got: Future[tuple[Message, Message]] = Future()

    @worker.event
    def message_create(message: Message) -> None:
        if message.author is not None and message.author.id == world.human["publicId"]:
            got.set_result((message, message.reply(f"pong {message.content}")))

    worker.start(timeout=15)
    _say(world, world.general, "ping")
    message, reply = got.result(15)
    assert isinstance(message, Message) and message.author is not None
    assert message.author.username == "alice" and message.content == "ping"
    assert message.guild is not None and message.guild.id == world.server["publicId"]
    assert isinstance(reply, Message) and reply.reply_to_id == message.id and reply.content == "pong ping"
    assert [m["content"] for m in world.emulator.messages(world.general["publicId"])][-1] == "pong ping"


def test_a_worker_holds_a_client_and_offers_its_listening_api(world: Any, gateway: Any, make_worker: Any) -> None:
    from service_client import Client, CommandContext, CommandDispatcher

    worker = make_worker()
    assert isinstance(worker.client, Client) and not isinstance(worker, Client)
    commands = CommandDispatcher(worker.client, prefix="!")  # a dispatcher attaches to the worker's client
    answered: Future[Message] = Future()

    @commands.command()
    def where(ctx: CommandContext) -> None:
        guild = worker.guilds.get(world.server["publicId"])  # the worker's caches are its client's
        answered.set_result(ctx.reply(f"in {guild.name if guild else '?'}"))

    with pytest.raises(AttributeError, match=r"use worker\.client\.add_cog"):
        worker.add_cog  # noqa: B018 - the client's, not the worker's
    worker.start(timeout=15)
    assert worker.state is worker.client.state and worker.is_connected
    assert worker.user is not None and worker.user.id == world.bot["publicId"]
    assert worker.guilds is worker.client.guilds and world.server["publicId"] in worker.guilds.cache
    _say(world, world.general, "!where")
    assert answered.result(15).content == "in Test Server"


def test_one_channel_runs_in_order_while_another_goes_on(world: Any, gateway: Any, make_worker: Any) -> None:
    worker = make_worker(workers=4)
    release = threading.Event()
    seen: dict[str, list[str]] = {"general": [], "random": []}
    random_done = threading.Event()
    general_done = threading.Event()

    @worker.on("message_create")
    def on_message(message: Message) -> None:
        if message.author is None or message.author.id != world.human["publicId"]:
            return
        name = "general" if message.channel_id == world.general["publicId"] else "random"
        if message.content == "g0":
            assert release.wait(15)  # holds general's lane only
        seen[name].append(message.content)
        if len(seen["random"]) == 5:
            random_done.set()
        if len(seen["general"]) == 5:
            general_done.set()

    worker.start(timeout=15)
    for i in range(5):
        _say(world, world.general, f"g{i}")
    for i in range(5):
        _say(world, _random(world), f"r{i}")
    assert random_done.wait(15)  # random's lane ran while general's first event blocked
    assert seen["general"] == []
    release.set()
    assert general_done.wait(15)
    assert seen["general"] == [f"g{i}" for i in range(5)]
    assert seen["random"] == [f"r{i}" for i in range(5)]


def test_a_new_owner_runs_the_pending_entries_first_in_order(world: Any, gateway: Any, make_worker: Any,
                                                             raw: Any) -> None:
    ns = gateway.namespace
    part = partition_of(world.general["publicId"], 8)
    stream = f"service_client:fleet:{ns}:p:{part}"
    # A worker of group g read three events of general and died before acknowledging them.
    raw.xgroup_create(stream, "g", id="$", mkstream=True)
    for i in range(3):
        _say(world, world.general, f"early {i}")
    _wait(lambda: raw.xlen(stream) >= 3, "the early events in the stream")
    raw.xreadgroup("g", f"p{part}", {stream: ">"}, count=3)
    assert raw.xpending(stream, "g")["pending"] == 3
    worker = make_worker()
    handled: list[str] = []
    done = threading.Event()

    @worker.event
    def message_create(message: Message) -> None:
        handled.append(message.content)
        if len(handled) == 5:
            done.set()

    worker.start(timeout=15)
    _say(world, world.general, "late 0")
    _say(world, world.general, "late 1")
    assert done.wait(15)
    assert handled == ["early 0", "early 1", "early 2", "late 0", "late 1"]
    _wait(lambda: raw.xpending(stream, "g")["pending"] == 0, "every entry acknowledged")


def test_a_lease_has_a_growing_fencing_token_and_a_stale_holder_can_neither_read_nor_ack(raw: Any) -> None:
    acquire, renew, ack, read = (raw.register_script(s) for s in (ACQUIRE, RENEW, ACK, READ))
    lease, fence, stream = "t:lease", "t:fence", "t:stream"
    raw.delete(lease, fence, stream)
    raw.xadd(stream, {"d": "x"}, id="1-0")
    raw.xgroup_create(stream, "g", id="0")
    assert acquire(keys=[lease, fence], args=["a/1", 10_000]) == 1
    assert acquire(keys=[lease, fence], args=["b/1", 10_000]) == 0  # held
    got = read(keys=[lease, stream, "t:seqs"], args=["g", "a/1:1", "p0", ">", 10, 0])
    assert got[0][0][0].split(b"\n")[0] == b"1-0"  # "<id>\n<event id>\n<data>"
    raw.delete(lease)  # a's lease expired while it was paused
    assert acquire(keys=[lease, fence], args=["b/1", 10_000]) == 2
    assert renew(keys=[lease], args=[10_000, "a/1:1"]) == [0]
    assert ack(keys=[lease, stream], args=["g", "a/1:1", "1-0"]) == -1  # the zombie cannot ack
    assert read(keys=[lease, stream, "t:seqs"], args=["g", "a/1:1", "p0", "0", 10, 0]) == [0]  # nor read
    assert raw.xpending(stream, "g")["pending"] == 1
    assert ack(keys=[lease, stream], args=["g", "b/1:2", "1-0"]) == 1
    raw.delete(lease, fence, stream)


def test_a_zombie_cannot_reply_for_a_partition_it_lost(world: Any, gateway: Any, make_worker: Any,
                                                       raw: Any) -> None:
    worker = make_worker()
    worker.start(timeout=15)
    state = worker.client.connection_state
    entry = EntryContext(None, 0, b"1-0", "zz:0:1", "message:new", b"", ("no-such-lease", "w/1:1"), 1)
    outcome: list[BaseException] = []

    def reply() -> None:
        try:
            state.send_message(world.general["publicId"], "from a zombie")
        except ServiceError as exc:
            outcome.append(exc)

    run_in(entry, reply)
    assert outcome and "no longer holds the event's partition" in str(outcome[0])
    assert "from a zombie" not in [m["content"] for m in world.emulator.messages(world.general["publicId"])]


def test_a_redelivered_event_posts_its_reply_once(world: Any, gateway: Any, make_worker: Any, raw: Any) -> None:
    worker = make_worker()
    worker.start(timeout=15)
    state = worker.client.connection_state
    replies: list[Message] = []
    lease = (f"service_client:fleet:{gateway.namespace}:lease:test:0", "w/1:1")
    raw.set(*lease, px=60_000)  # the lease the handling worker holds

    def handle() -> None:  # the same event handled twice (a redelivery): two replies each time
        replies.append(state.send_message(world.general["publicId"], "once"))
        replies.append(state.send_message(world.general["publicId"], "twice"))

    for _ in range(2):
        run_in(EntryContext(None, 0, b"1-0", "ev:0:1", "message:new", b"", lease, 1), handle)
    contents = [m["content"] for m in world.emulator.messages(world.general["publicId"])]
    assert contents.count("once") == 1 and contents.count("twice") == 1
    assert replies[0].id == replies[2].id and replies[1].id == replies[3].id
    # Outside an event, each send is its own.
    state.send_message(world.general["publicId"], "free")
    state.send_message(world.general["publicId"], "free")
    assert [m["content"] for m in world.emulator.messages(world.general["publicId"])].count("free") == 2


def test_a_send_error_comes_back_with_its_type(world: Any, gateway: Any, make_worker: Any) -> None:
    worker = make_worker()
    worker.start(timeout=15)
    with pytest.raises(ChannelAccessError) as caught:
        worker.send_message("999999999", "nowhere")
    assert caught.value.channel_id == "999999999" and caught.value.reason == "unknown_channel"
    with pytest.raises(ServiceError, match="holds no socket"):
        worker.client.set_status("idle")


def test_a_poison_event_is_dead_lettered_and_its_lane_goes_on(world: Any, gateway: Any, make_worker: Any,
                                                              raw: Any, caplog: pytest.LogCaptureFixture) -> None:
    worker = make_worker(max_deliveries=2)
    tries: list[str] = []
    done = threading.Event()

    @worker.event
    def message_create(message: Message) -> None:
        tries.append(message.content)
        if message.content == "poison":
            raise RuntimeError("cannot digest this")
        if message.content == "after":
            done.set()

    @worker.event
    def error(exc: Exception) -> None:  # reported, not printed
        pass

    worker.start(timeout=15)
    with caplog.at_level(logging.ERROR, logger="service_client.fleet"):
        _say(world, world.general, "poison")
        _say(world, world.general, "after")
        assert done.wait(15)
    assert tries == ["poison", "poison", "after"]
    dead = raw.xrange(f"service_client:fleet:{gateway.namespace}:dead:g")
    assert len(dead) == 1
    fields = {k.decode(): v.decode() for k, v in dead[0][1].items()}
    assert fields["event"] == "message:new" and "poison" in fields["data"]
    assert fields["error"] == "RuntimeError: cannot digest this" and fields["deliveries"] == "2"
    assert any("dead-letter" in r.getMessage() for r in caplog.records)


def test_a_dead_letter_never_holds_the_bot_token(world: Any, gateway: Any, make_worker: Any, raw: Any) -> None:
    worker = make_worker(max_deliveries=1)
    done = threading.Event()

    @worker.event
    def message_create(message: Message) -> None:
        if message.content == "leak":
            raise RuntimeError(f"bad token {world.bot_token}")
        done.set()

    worker.on("error", lambda exc: None)  # reported, not printed
    worker.start(timeout=15)
    _say(world, world.general, "leak")
    _say(world, world.general, "after")
    assert done.wait(15)
    dead = raw.xrange(f"service_client:fleet:{gateway.namespace}:dead:g")
    fields = {k.decode(): v.decode() for k, v in dead[0][1].items()}
    clean = world.bot_token not in fields["error"] and world.bot_token not in fields["traceback"]
    assert clean, "a dead letter holds the bot token"  # never printed: a failure must not show it
    assert fields["error"] == "RuntimeError: bad token [REDACTED]"


def test_with_hold_a_poison_event_holds_its_channel_until_it_passes(world: Any, gateway: Any,
                                                                     make_worker: Any) -> None:
    worker = make_worker(max_deliveries=2, poison="hold")
    healthy = threading.Event()
    order: list[str] = []
    done = threading.Event()
    failures = [0]

    @worker.event
    def message_create(message: Message) -> None:
        if message.content == "poison" and not healthy.is_set():
            failures[0] += 1
            raise RuntimeError("not yet")
        order.append(message.content)
        if message.content == "after":
            done.set()

    @worker.event
    def error(exc: Exception) -> None:
        pass

    worker.start(timeout=15)
    _say(world, world.general, "poison")
    _say(world, world.general, "after")
    _wait(lambda: failures[0] >= 3, "the poison event held past its deliveries")
    assert order == []  # "after" waits behind it
    healthy.set()
    assert done.wait(40)
    assert order == ["poison", "after"]


def test_shared_state_reaches_the_caches_of_every_worker(world: Any, gateway: Any, make_worker: Any,
                                                         emulator: Any) -> None:
    first, second = make_worker(name="first"), make_worker(name="second")
    first.start(timeout=15)
    second.start(timeout=15)
    server = world.server["publicId"]
    emulator.create_role(server, "Moderators")
    for worker in (first, second):
        _wait(lambda w=worker: any(r.name == "Moderators" for r in w.guilds.cache[server].roles.cache.values()),
              f"the role in {worker.name}'s cache")


def test_stop_hands_the_partitions_over_at_once(world: Any, gateway: Any, make_worker: Any) -> None:
    # Leases of 20 s: only a hand-over (not an expiry) moves partitions within this test.
    first, second = make_worker(name="first", lease_ttl=20_000), make_worker(name="second", lease_ttl=20_000)
    seen: Future[str] = Future()

    @second.event
    def message_create(message: Message) -> None:
        if message.content == "after the hand-over" and not seen.done():
            seen.set_result(message.content)

    first.start(timeout=15)
    second.start(timeout=15)
    _wait(lambda: first.partitions and second.partitions and len(first.partitions + second.partitions) == 8,
          "the partitions spread over both")
    started = time.monotonic()
    first.stop()
    _wait(lambda: len(second.partitions) == 8, "the partitions handed over", timeout=10)
    assert time.monotonic() - started < 5  # far less than a lease's 20 s
    _say(world, world.general, "after the hand-over")
    assert seen.result(15) == "after the hand-over"
    assert first.partitions == [] and first.state.value == "destroyed"


def test_worker_arguments_are_checked(redis_url: str, world: Any) -> None:
    from service_client.fleet import FleetWorker

    with pytest.raises(ValueError, match="group must be 1 to 64"):
        FleetWorker(redis_url, world.bot_token, group="a b")
    with pytest.raises(ValueError, match="poison must be"):
        FleetWorker(redis_url, world.bot_token, group="g", poison="drop")
    with pytest.raises(ServiceError, match="non-empty bot token"):
        FleetWorker(redis_url, "", group="g")
    secret = redis_url.replace("redis://", "redis://:hunter2@")
    with pytest.raises(ValueError) as caught:
        FleetWorker(secret, world.bot_token, group="g", max_in_flight=0)
    tb = caught.value.__traceback__.tb_next  # the library's frames (this test's holds the URL)
    while tb is not None:  # neither the password nor the token in any frame's locals
        shown = repr(tb.tb_frame.f_locals)
        assert "hunter2" not in shown and world.bot_token not in shown
        tb = tb.tb_next
    worker = FleetWorker(secret, world.bot_token, group="g")
    try:
        assert "hunter2" not in repr(worker) and world.bot_token not in repr(worker)
    finally:
        worker.stop()


def test_stop_from_a_listener_returns_and_the_worker_stops(world: Any, gateway: Any, make_worker: Any) -> None:
    worker = make_worker()
    returned: Future[bool] = Future()

    @worker.event
    def message_create(message: Message) -> None:
        worker.stop()
        returned.set_result(True)

    worker.start(timeout=15)
    _say(world, world.general, "stop, please")
    assert returned.result(15)
    _wait(lambda: worker.state.value == "destroyed", "the worker stopped")


def test_the_fleet_goes_on_after_redis_lost_everything(world: Any, make_client: Any, emulator: Any,
                                                      namespace: str) -> None:
    from service_client.fleet import EventPublisher, FleetWorker

    from .redis_server import RedisServer

    server = RedisServer()
    client = make_client()
    publisher = EventPublisher(client, server.url, partitions=4, namespace=namespace)
    worker = FleetWorker(server.url, world.bot_token, group="g", namespace=namespace, base_url=emulator.base_url,
                         lease_ttl=500)
    seen: list[str] = []
    got = {"before": threading.Event(), "after": threading.Event()}

    @worker.event
    def message_create(message: Message) -> None:
        seen.append(message.content)
        if message.content in got:
            got[message.content].set()

    try:
        client.login(world.bot_token, timeout=15)
        assert publisher.flush(10)
        worker.start(timeout=15)
        _say(world, world.general, "before")
        assert got["before"].wait(15)
        port = server.port
        server.stop()  # no persistence: streams, groups, leases and meta are gone
        server = RedisServer(port=port)
        _say(world, world.general, "after")
        assert got["after"].wait(20)  # groups made again, leases taken again
        assert seen.count("before") == 1
    finally:
        worker.stop(timeout=2)
        publisher.close()
        server.stop()


def test_stop_while_start_waits_for_a_publisher_ends_the_start_at_once(make_worker: Any) -> None:
    worker = make_worker()  # no publisher: the namespace's partition count never comes
    outcome: Future[BaseException | None] = Future()

    def starting() -> None:
        try:
            worker.start(timeout=25)
        except BaseException as exc:  # noqa: BLE001 - recorded for the assertions
            outcome.set_result(exc)
        else:
            outcome.set_result(None)

    thread = threading.Thread(target=starting, name="test-starting", daemon=True)
    thread.start()
    _wait(lambda: worker._source.feed is not None, "the start waiting for a publisher")
    worker.stop()
    failure = outcome.result(5)  # at once, not when the wait for a publisher runs out
    assert isinstance(failure, ServiceError) and "stopped" in str(failure)
    thread.join(5)
    assert worker.state.value == "destroyed"
    assert [t.name for t in threading.enumerate() if t.name.startswith("service_client-fleet-")] == []


def test_client_destroy_all_stops_a_worker_and_every_thread_of_it(world: Any, gateway: Any, make_worker: Any) -> None:
    from service_client import Client

    worker = make_worker()
    before = set(threading.enumerate())
    worker.start(timeout=15)
    # The worker's own threads (the socket process's publisher, in this process too, starts its
    # send threads when it first hears of the namespace, and stops them once it sees its client
    # destroyed, which is its own business).
    worker_roles = ("leases", "reader", "acks", "state", "answers", "fetches")
    started = [t for t in threading.enumerate() if t not in before
               and t.name.startswith(tuple(f"service_client-fleet-{role}-" for role in worker_roles))]
    assert started
    assert Client.destroy_all() >= 2  # the worker's client and the socket process's
    assert worker.state.value == "destroyed" and not worker.is_connected
    assert [t.name for t in started if t.is_alive()] == []
    worker.stop()  # idempotent: already stopped, without the hand-off
    with pytest.raises(ServiceError, match="stopped"):
        worker.start(timeout=5)
    with pytest.raises(ServiceError, match="stopped"):  # not "another token": the token is forgotten
        worker.login(world.bot_token)


def test_a_stop_just_before_the_threads_start_starts_none(world: Any, gateway: Any, make_worker: Any,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # stop() lands between the start's last check and the start of the fleet's threads
    worker = make_worker()
    source = worker._source
    original_start = source.start
    started_after_stop: list[str] = []
    stopped = threading.Event()
    real_thread_start = threading.Thread.start

    def recording_start(thread: threading.Thread) -> None:
        if stopped.is_set() and thread.name.startswith("service_client-fleet-"):
            started_after_stop.append(thread.name)
        real_thread_start(thread)

    def start_after_a_stop() -> None:
        stopper = threading.Thread(target=worker.stop, name="test-stopper")
        real_thread_start(stopper)
        stopper.join(10)
        stopped.set()
        original_start()

    monkeypatch.setattr(source, "start", start_after_a_stop)
    monkeypatch.setattr(threading.Thread, "start", recording_start)
    with pytest.raises(ServiceError):
        worker.start(timeout=15)
    assert started_after_stop == []
    assert worker.state.value == "destroyed"
