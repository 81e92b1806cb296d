"""Extended routes (roles, members, server and channel changes) with their socket fan-out, and voice signalling."""

from __future__ import annotations

import requests


def _h(token):
    return {"Authorization": f"Bearer {token}"}


def call(world, method, path, token, **kw):
    return requests.request(method, world.emulator.base_url + path, headers=_h(token), timeout=5, **kw)


def test_roles_crud_with_events(world, conns):
    sid = world.server["publicId"]
    bot = conns(world.bot_token)
    assert call(world, "POST", f"/servers/{sid}/roles", world.bot_token, json={"name": "x"}).status_code == 403
    r = call(world, "POST", f"/servers/{sid}/roles", world.human_token,
             json={"name": "mod", "color": "#ff0000", "hoist": True, "permissions": "2"})
    assert r.status_code == 201
    role = r.json()["role"]
    assert role["color"] == "#ff0000" and role["hoist"] is True and role["permissions"] == "2"
    assert role["serverPublicId"] == sid and role["position"] == 1
    assert bot.wait("server:role_create")["role"]["publicId"] == role["publicId"]
    r = call(world, "PATCH", f"/servers/{sid}/roles/{role['publicId']}", world.human_token,
             json={"name": "mods", "color": None})
    assert r.json()["role"]["name"] == "mods" and r.json()["role"]["color"] is None
    assert bot.wait("server:role_update")["role"]["name"] == "mods"
    roles = call(world, "GET", f"/servers/{sid}/roles", world.bot_token).json()["roles"]
    assert [x["name"] for x in roles] == ["@everyone", "mods"]
    assert call(world, "PATCH", f"/servers/{sid}/roles/{role['publicId']}", world.human_token,
                json={"permissions": "abc"}).status_code == 400
    assert call(world, "DELETE", f"/servers/{sid}/roles/{role['publicId']}", world.human_token).status_code == 204
    assert bot.wait("server:role_delete") == {"serverPublicId": sid, "rolePublicId": role["publicId"]}
    assert call(world, "DELETE", f"/servers/{sid}/roles/{role['publicId']}", world.human_token).status_code == 404


def test_members_list_and_patch(world, conns):
    sid = world.server["publicId"]
    bot = conns(world.bot_token)
    assert call(world, "GET", f"/servers/{sid}/members", world.bot_token).status_code == 403  # no VIEW_MEMBERS
    members = call(world, "GET", f"/servers/{sid}/members", world.human_token).json()
    assert isinstance(members, list)  # a bare array without search, as the service answers
    assert {m["userId"] for m in members} == {world.bot["publicId"], world.human["publicId"]}
    found = call(world, "GET", f"/servers/{sid}/members", world.human_token, params={"search": "ali"}).json()
    assert [m["publicId"] for m in found["members"]] == [world.human["publicId"]]
    role = world.emulator.create_role(sid, "helper", 16)["role"]
    bot.wait("server:role_create")
    r = call(world, "PATCH", f"/servers/{sid}/members/{world.bot['publicId']}", world.human_token,
             json={"roles": [role["publicId"]], "nickname": "robo"})
    assert r.status_code == 204
    assert bot.wait("server:member_update") == {"serverPublicId": sid, "memberPublicId": world.bot["publicId"]}
    member = call(world, "GET", f"/servers/{sid}/members/{world.bot['publicId']}", world.bot_token).json()
    assert member["nickname"] == "robo" and [x["name"] for x in member["roles"]] == ["@everyone", "helper"]
    assert call(world, "PATCH", f"/servers/{sid}/members/{world.bot['publicId']}", world.human_token,
                json={"roles": ["nope"]}).status_code == 400
    assert call(world, "PATCH", f"/servers/{sid}/members/{world.human['publicId']}", world.bot_token,
                json={"nickname": "x"}).status_code == 403


def test_server_patch_delete_and_leave(world, conns):
    sid = world.server["publicId"]
    bot = conns(world.bot_token)
    human = conns(world.human_token)
    assert call(world, "PATCH", f"/servers/{sid}", world.bot_token, json={"name": "no"}).status_code == 403
    assert call(world, "PATCH", f"/servers/{sid}", world.human_token,
                json={"name": "Renamed", "imageUrl": None}).status_code == 204
    assert bot.wait("server:updated") == {"serverPublicId": sid, "name": "Renamed", "imageUrl": None}
    assert call(world, "POST", f"/servers/{sid}/leave", world.bot_token).status_code == 204
    assert bot.wait("server:you_left") == {"serverPublicId": sid}
    assert human.wait("server:member_remove") == {"serverPublicId": sid, "memberPublicId": world.bot["publicId"]}
    assert call(world, "GET", f"/servers/{sid}", world.bot_token).status_code == 403
    world.emulator.add_member(sid, world.bot["publicId"])
    assert bot.wait("server:joined")["name"] == "Renamed"
    assert call(world, "DELETE", f"/servers/{sid}", world.bot_token).status_code == 403
    assert call(world, "DELETE", f"/servers/{sid}", world.human_token).status_code == 204
    assert bot.wait("server:deleted") == {"serverPublicId": sid}
    assert call(world, "GET", f"/servers/{sid}", world.bot_token).status_code == 404


def test_control_rename_and_delete_server(world, conns):
    sid = world.server["publicId"]
    bot = conns(world.bot_token)
    assert world.emulator.update_server(sid, name="New")["name"] == "New"
    assert bot.wait("server:updated")["name"] == "New"
    world.emulator.delete_server(sid)
    assert bot.wait("server:deleted") == {"serverPublicId": sid}


def test_channel_patch_delete(world, conns):
    bot = conns(world.bot_token)
    cid = world.general["publicId"]
    assert call(world, "DELETE", f"/channels/{cid}", world.bot_token).status_code == 403
    assert call(world, "PATCH", f"/channels/{cid}", world.human_token, json={"description": "d"}).status_code == 204
    assert call(world, "GET", f"/channels/{cid}", world.bot_token).json()["description"] == "d"
    assert call(world, "DELETE", f"/channels/{cid}", world.human_token).status_code == 204
    assert bot.wait("server:channels_updated")
    assert call(world, "GET", f"/channels/{cid}", world.bot_token).status_code == 404


def test_invites_list_and_create(world):
    sid = world.server["publicId"]
    r = call(world, "POST", f"/servers/{sid}/invites", world.bot_token,
             json={"channelPublicId": world.general["publicId"], "maxUses": 5})
    assert r.status_code == 201
    inv = r.json()["invite"]
    assert inv["maxUses"] == 5 and inv["uses"] == 0 and inv["inviter"]["publicId"] == world.bot["publicId"]
    assert inv["channel"] == {"publicId": world.general["publicId"], "name": "general"}
    assert call(world, "GET", f"/servers/{sid}/invites", world.bot_token).json()["invite"]["code"] == inv["code"]
    assert call(world, "GET", f"/servers/{sid}/invites", world.bot_token, params={"all": "true"}).status_code == 403
    listed = call(world, "GET", f"/servers/{sid}/invites", world.human_token, params={"all": "true"}).json()
    assert [i["code"] for i in listed["invites"]] == [inv["code"]]
    assert call(world, "POST", f"/servers/{sid}/invites", world.bot_token,
                json={"channelPublicId": world.general["publicId"], "maxAge": -1}).status_code == 400


def test_get_user(world):
    r = call(world, "GET", f"/users/{world.human['publicId']}", world.bot_token)
    assert r.json()["publicId"] == world.human["publicId"] and r.json()["name"] == "alice"
    assert call(world, "GET", "/users/404", world.bot_token).status_code == 404


def test_voice_signalling(world, conns):
    voice = next(c for c in world.channels if c["type"] == "VOICE")
    bot, human = conns(world.bot_token), conns(world.human_token)
    bot.emit("voice:join", {"channelPublicId": voice["publicId"]})
    creds = bot.wait("voice:livekit-token")
    assert creds["channelPublicId"] == voice["publicId"] and creds["token"] and creds["e2eeKey"] is None
    joined = human.wait("voice:user-joined")
    assert joined["user"]["userPublicId"] == world.bot["publicId"]
    assert [u["userPublicId"] for u in joined["users"]] == [world.bot["publicId"]]
    bot.emit("voice:state", {"muted": True, "bogus": 1})
    assert human.wait("voice:user-state") == {"channelPublicId": voice["publicId"],
                                              "userPublicId": world.bot["publicId"], "muted": True}
    assert world.emulator.voice_users(voice["publicId"])[0]["muted"] is True
    # a text channel refuses silently
    bot.emit("voice:join", {"channelPublicId": world.general["publicId"]})
    assert bot.none("voice:livekit-token")
    # the human joins from its socket; a new connection gets a snapshot
    human.emit("voice:join", {"channelPublicId": voice["publicId"]})
    assert len(bot.wait("voice:user-joined")["users"]) == 2
    late = conns(world.bot_token)
    snap = late.wait("voice:state-update")
    assert snap["channelPublicId"] == voice["publicId"] and len(snap["users"]) == 2
    bot.emit("voice:leave")
    left = human.wait("voice:user-left")
    assert left["userPublicId"] == world.bot["publicId"] and len(left["users"]) == 1
    # dropping the human's only socket takes it out of voice
    human_sockets = world.emulator.drop_transport(world.human["publicId"])
    assert human_sockets == 1
    assert bot.wait("voice:user-left", check=lambda d: d["userPublicId"] == world.human["publicId"])
    assert world.emulator.voice_users(voice["publicId"]) == []
    # control-plane voice: join, state, leave as a user with no socket
    assert world.emulator.voice_join(world.human["publicId"], voice["publicId"]) is True
    assert bot.wait("voice:user-joined")["user"]["socketId"] is None
    assert world.emulator.voice_state(world.human["publicId"], deafened=True) is True
    assert bot.wait("voice:user-state")["deafened"] is True
    assert world.emulator.voice_leave(world.human["publicId"]) is True
    assert world.emulator.voice_leave(world.human["publicId"]) is False
