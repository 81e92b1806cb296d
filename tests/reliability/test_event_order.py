"""Events keep the service's order, reach waiting listeners, and live events beat stale snapshots."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import requests

from .conftest import Recorder, server_the_bot_joined, wait_until

#: ADMINISTRATOR: the bot may edit members.
ADMINISTRATOR = str(2147483648)


def _make_bot_admin(world: Any, emulator: Any) -> None:
    sid = world.server["publicId"]
    role = emulator.create_role(sid, "admin", permissions=ADMINISTRATOR)["role"]
    emulator.update_member(sid, world.bot["publicId"], roles=[role["publicId"]])


@pytest.mark.parametrize("workers", [8, 1])
def test_a_listener_that_edits_a_member_then_waits_gets_the_update(world, emulator, make_client, workers):
    sid = world.server["publicId"]
    _make_bot_admin(world, emulator)
    bot = make_client(workers=workers)
    bot.login(world.bot_token, timeout=15)
    newbie = emulator.create_user("newbie")["user"]["publicId"]
    # The refetch behind guild_member_update answers after a while, so the listener below is
    # surely waiting by then (it registers its wait right after the edit returns).
    emulator.add_fault("GET", f"/servers/{sid}/members/{newbie}", delay_ms=1000)
    result: dict[str, Any] = {}
    done = threading.Event()
    later: list[str] = []
    bot.on("guild_member_update", lambda member: later.append(getattr(member, "nickname", None)))

    @bot.on("guild_member_add")
    def welcome(member: Any) -> None:
        try:
            bot.members.edit(sid, member.id, nickname="Welcome")
            result["update"] = bot.wait_for(
                "guild_member_update", check=lambda m: getattr(m, "id", None) == member.id, timeout=5
            )
        except Exception as exc:  # noqa: BLE001 - the test reports it
            result["error"] = exc
        finally:
            done.set()

    emulator.add_member(sid, newbie)
    assert done.wait(15)
    assert "error" not in result, result
    assert result["update"].nickname == "Welcome"
    assert result["update"] is bot.members.get(sid, newbie)
    wait_until(lambda: later == ["Welcome"])  # listeners get it too, once the add listener returned


def test_a_listener_that_creates_a_channel_then_waits_gets_the_refreshed_listing(world, emulator, make_client):
    sid, cid = world.server["publicId"], world.general["publicId"]
    _make_bot_admin(world, emulator)
    bot = make_client(workers=1)  # the listener below holds the only worker while it waits
    bot.login(world.bot_token, timeout=15)
    bot.channels.fetch_for_guild(sid)  # cached channels: channel events refresh the listing
    emulator.add_fault("GET", f"/servers/{sid}/categories", delay_ms=1000)  # the refresh answers late
    result: dict[str, Any] = {}
    done = threading.Event()

    @bot.on("message_create")
    def make_channel(message: Any) -> None:
        if message.content != "!new":
            return
        try:
            bot.channels.create(sid, "fresh")
            result["update"] = bot.wait_for("guild_channels_update", timeout=5)
        except Exception as exc:  # noqa: BLE001 - the test reports it
            result["error"] = exc
        finally:
            done.set()

    emulator.post_message(cid, world.human["publicId"], "!new")
    assert done.wait(15)
    assert result == {"update": {"serverPublicId": sid}}


def test_member_update_keeps_its_place_before_later_server_events(world, emulator, bot):
    sid, bot_id = world.server["publicId"], world.bot["publicId"]
    emulator.add_fault("GET", f"/servers/{sid}/members/{bot_id}", delay_ms=500)  # a slow refetch
    order: list[tuple[str, Any]] = []
    done = threading.Event()
    bot.on("guild_member_update", lambda member: order.append(("guild_member_update", member.nickname)))
    bot.on("role_create", lambda role: order.append(("role_create", role.name)))

    @bot.on("guild_update")
    def renamed(guild: Any) -> None:
        order.append(("guild_update", guild.name))
        done.set()

    emulator.update_member(sid, bot_id, nickname="Nick")
    emulator.create_role(sid, "later")
    emulator.update_server(sid, name="Renamed")
    assert done.wait(10)
    assert order == [("guild_member_update", "Nick"), ("role_create", "later"), ("guild_update", "Renamed")]


def test_a_reaction_never_overtakes_its_message(world, emulator, bot):
    cid, human_id = world.general["publicId"], world.human["publicId"]
    order: list[tuple[str, str]] = []
    reacted = threading.Event()

    @bot.on("message_create")
    def on_message(message: Any) -> None:
        if message.content == "slow":
            reacted.wait(0.5)  # a reaction that overtook the messages would run meanwhile
        order.append(("message_create", message.content))

    @bot.on("message_reaction_add")
    def on_reaction(info: dict[str, Any], user: Any, message_id: str) -> None:
        order.append(("message_reaction_add", message_id))
        reacted.set()

    emulator.post_message(cid, human_id, "slow")
    target = emulator.post_message(cid, human_id, "target")["message"]["publicId"]
    emulator.react(target, human_id, "👍")
    assert reacted.wait(10)
    wait_until(lambda: len(order) == 3)
    assert order == [("message_create", "slow"), ("message_create", "target"), ("message_reaction_add", target)]


def test_reconnect_reconcile_never_undoes_live_events(world, emulator, bot):
    bot_id, human_id = world.bot["publicId"], world.human["publicId"]
    stay = world.server["publicId"]
    doomed = server_the_bot_joined(emulator, bot, world, "C", "c")  # its guild_create is behind us
    joining = emulator.create_server("B", human_id, channels=[{"name": "b", "type": "TEXT"}])["server"]["publicId"]
    # The list the reconnect's GET /servers will get: taken now, answered late, so it predates
    # the live events below.
    stale = requests.get(emulator.base_url + "/servers", headers={"Authorization": "Bearer " + world.bot_token},
                         timeout=10).text
    recorder = Recorder(bot)
    emulator.add_fault("GET", "/servers", status=200, body=stale, content_type="application/json", delay_ms=2000)
    emulator.clear_requests()
    emulator.drop_transport(bot_id)
    recorder.wait("reconnect")

    def snapshot_request() -> dict[str, Any] | None:
        return next((r for r in emulator.requests() if r["method"] == "GET" and r["path"] == "/servers"), None)

    wait_until(snapshot_request)
    emulator.add_member(joining, bot_id)  # live server:joined B
    emulator.delete_server(doomed)  # live server:deleted C
    wait_until(lambda: joining in bot.guilds.cache and doomed not in bot.guilds.cache)
    assert snapshot_request()["status"] is None, "the live events must land while the list is in flight"

    def announced() -> list[tuple[str, str]]:
        return [(name, args[0].id) for name, args in recorder.events if name in ("guild_create", "guild_delete")]

    wait_until(lambda: ("guild_create", joining) in announced() and ("guild_delete", doomed) in announced())
    assert announced() == [("guild_create", joining), ("guild_delete", doomed)]
    assert set(bot.guilds.cache) == {stay, joining}
    assert (joining, bot_id) in bot.members.cache
