"""Socket side of the emulator: auth, message:send echo, fan-out, presence and activity.

Every connection here is an ordered reader (:class:`fuzzkit.RawSocket`: one websocket-client thread
that queues packets in wire order), so a test may assert the order of events, and "nothing arrived"
is proven with a marker event sent after the action instead of a quiet period.
"""

from __future__ import annotations

import json

import requests
import websocket


def test_bad_token_refused(world):
    url = world.emulator.socket_url.replace("http://", "ws://") + "/socket.io/?EIO=4&transport=websocket"
    ws = websocket.create_connection(url, timeout=10)
    try:
        assert ws.recv().startswith("0")
        ws.send("40" + json.dumps({"token": "bad"}))
        assert ws.recv() == '44{"message":"Authentication failed"}'
    finally:
        ws.close()
    assert world.emulator.connection_count() == 0


def test_send_echo_with_nonce_and_delivery(world, conns):
    bot, human = conns(world.bot_token, world.bot["publicId"]), conns(world.human_token, world.human["publicId"])
    assert world.emulator.connection_count() == 2
    bot.emit("message:send", {"channelPublicId": world.general["publicId"], "content": "hi <you>",
                                     "embeds": [], "nonce": "abc"})
    echo = bot.wait("message:new")
    assert echo["nonce"] == "abc" and echo["content"] == "hi &lt;you&gt;"
    assert echo["author"]["publicId"] == world.bot["publicId"]
    assert echo["channelPublicId"] == world.general["publicId"]
    assert echo["serverPublicId"] == world.server["publicId"]
    seen = human.wait("message:new")
    assert seen["publicId"] == echo["publicId"]
    stored = world.emulator.messages(world.general["publicId"])
    assert [m["publicId"] for m in stored] == [echo["publicId"]] and "nonce" not in stored[0]


def test_refused_sends_produce_nothing(world, conns):
    emu = world.emulator
    bot = conns(world.bot_token, world.bot["publicId"])
    cid = world.general["publicId"]
    bot.emit("message:send", {"channelPublicId": cid, "content": "   ", "embeds": [], "nonce": "1"})
    bot.emit("message:send", {"channelPublicId": "404", "content": "x", "embeds": [], "nonce": "2"})
    bot.emit("message:send", "not a dict")
    emu.update_role(world.server["publicId"],
                    emu.member(world.server["publicId"], world.bot["publicId"])["roles"][0]["publicId"],
                    permissions=str(552448 & ~1024))
    bot.emit("message:send", {"channelPublicId": cid, "content": "no perm", "embeds": [], "nonce": "3"})
    assert bot.none("message:new")
    assert emu.messages(cid) == []


def test_embeds_only_message(world, conns):
    bot = conns(world.bot_token, world.bot["publicId"])
    bot.emit("message:send", {"channelPublicId": world.general["publicId"], "content": "",
                              "embeds": [{"title": "<t>"}], "nonce": "e"})
    echo = bot.wait("message:new")
    assert echo["embeds"] == [{"title": "<t>"}] and echo["content"] == ""


def test_control_post_message_reaches_bot(world, conns):
    bot = conns(world.bot_token, world.bot["publicId"])
    msg = world.emulator.post_message(world.general["publicId"], world.human["publicId"], "!ping")["message"]
    got = bot.wait("message:new")
    assert got["publicId"] == msg["publicId"] and got["content"] == "!ping"


def test_presence_and_activity_fanout(world, conns):
    bot, human = conns(world.bot_token, world.bot["publicId"]), conns(world.human_token, world.human["publicId"])
    bot.emit("presence:update", {"status": "idle"})
    # (the bot's socket may have shown it online to the human first: a status it did not choose)
    chosen = human.wait("presence:update", check=lambda data: data["status"] != "online")
    assert chosen == {"userPublicId": world.bot["publicId"], "status": "idle"}
    bot.emit("presence:update", {"status": "invisible"})
    assert human.wait("presence:update")["status"] == "offline"
    bot.emit("activity:update", {"type": "playing", "name": "chess", "startedAt": 5})
    got = human.wait("activity:update")
    assert got == {"userPublicId": world.bot["publicId"],
                   "activity": {"type": "playing", "name": "chess", "startedAt": 5}}
    bot.emit("activity:update", {"type": "none", "name": ""})
    assert human.wait("activity:update") == {"userPublicId": world.bot["publicId"], "activity": None}
    assert world.emulator.presence(world.bot["publicId"]) == {"status": "invisible", "activity": None}


def test_presence_not_sent_to_strangers(world, conns):
    stranger = world.emulator.create_user("eve")
    other = conns(stranger["token"], stranger["user"]["publicId"])
    bot = conns(world.bot_token, world.bot["publicId"])
    bot.emit("presence:update", {"status": "dnd"})
    bot.wait("presence:update")
    assert other.none("presence:update")


def test_add_member_joins_rooms_immediately(world, conns):
    emu = world.emulator
    newbie = emu.create_user("bob")
    bob = conns(newbie["token"], newbie["user"]["publicId"])
    human = conns(world.human_token, world.human["publicId"])
    emu.add_member(world.server["publicId"], newbie["user"]["publicId"])
    joined = bob.wait("server:joined")
    assert joined["publicId"] == world.server["publicId"] and joined["memberCount"] == 3
    added = human.wait("server:member_add")
    assert added["serverPublicId"] == world.server["publicId"]
    assert added["member"]["userId"] == newbie["user"]["publicId"]
    emu.post_message(world.general["publicId"], world.human["publicId"], "welcome")
    assert bob.wait("message:new")["content"] == "welcome"
    emu.remove_member(world.server["publicId"], newbie["user"]["publicId"])
    assert bob.wait("server:you_removed") == {"serverPublicId": world.server["publicId"]}
    emu.post_message(world.general["publicId"], world.human["publicId"], "gone")
    assert bob.none("message:new")


def test_channel_created_joins_room(world, conns):
    emu = world.emulator
    bot = conns(world.bot_token, world.bot["publicId"])
    ch = emu.create_channel(world.server["publicId"], "fresh")
    assert bot.wait("server:channels_updated") == {"serverPublicId": world.server["publicId"]}
    emu.post_message(ch["publicId"], world.human["publicId"], "in fresh")
    assert bot.wait("message:new")["channelPublicId"] == ch["publicId"]


def test_dm_open_and_message(world, conns):
    emu = world.emulator
    bot, human = conns(world.bot_token, world.bot["publicId"]), conns(world.human_token, world.human["publicId"])
    r = requests.get(emu.base_url + f"/channels/dm/{world.bot['publicId']}",
                     headers={"Authorization": f"Bearer {world.human_token}"}, timeout=5)
    dm = r.json()
    new = bot.wait("dm:new")
    assert new["publicId"] == dm["publicId"] and new["recipient"]["publicId"] == world.human["publicId"]
    bot.emit("message:send", {"channelPublicId": dm["publicId"], "content": "psst", "embeds": [],
                              "nonce": "d"})
    assert bot.wait("message:new")["nonce"] == "d"
    got = human.wait("message:new")
    assert got["content"] == "psst" and got["serverPublicId"] is None


def test_server_disconnect_and_drop(world, conns):
    emu = world.emulator
    bot = conns(world.bot_token, world.bot["publicId"])
    assert emu.server_disconnect(world.bot["publicId"]) == 1
    assert bot.closed.wait(10)
    assert bot.frames[-1] == "1", "a socket.io DISCONNECT packet ends the connection"
    other = conns(world.human_token, world.human["publicId"])
    assert emu.drop_transport(world.human["publicId"]) == 1
    assert other.closed.wait(10)


def test_raw_emit(world, conns):
    bot = conns(world.bot_token, world.bot["publicId"])
    world.emulator.emit("custom:thing", {"x": 1}, to_user=world.bot["publicId"])
    assert bot.wait("custom:thing") == {"x": 1}
    world.emulator.emit("server:member_add", {"serverPublicId": "s", "member": {"publicId": "u", "name": "n"}},
                        to_server=world.server["publicId"])
    assert bot.wait("server:member_add")["member"] == {"publicId": "u", "name": "n"}


def test_reset_disconnects_sockets(world, conns):
    bot = conns(world.bot_token, world.bot["publicId"])
    world.emulator.reset()
    assert bot.closed.wait(10)
    assert world.emulator.connection_count() == 0


def test_bulk_post_in_order_to_every_member_and_searchable(world, conns):
    emu = world.emulator
    bot, human = conns(world.bot_token, world.bot["publicId"]), conns(world.human_token, world.human["publicId"])
    cid = world.general["publicId"]
    emu.post_message(cid, world.human["publicId"], "before")
    n = 2000
    assert emu.post_messages(cid, world.human["publicId"], [f"bulk <{i}>" for i in range(n)]) == n
    emu.post_message(cid, world.human["publicId"], "after")
    for conn in (bot, human):
        got = [conn.wait("message:new")["content"] for _ in range(n + 2)]
        assert got == ["before"] + [f"bulk &lt;{i}&gt;" for i in range(n)] + ["after"]
    sample = emu.messages(cid)[5]
    assert sample["author"]["publicId"] == world.human["publicId"] and sample["serverPublicId"] == \
        world.server["publicId"]
    r = requests.get(emu.base_url + f"/chat/{cid}/search", params={"q": "<1999>"},
                     headers={"Authorization": f"Bearer {world.bot_token}"}, timeout=5)
    assert [m["content"] for m in r.json()["messages"]] == ["bulk &lt;1999&gt;"]
