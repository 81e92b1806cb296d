"""The emulator's routes for vanity codes, notification settings, the audit log, custom emojis,
webhooks, user profiles and mutual servers, and history paging, over real HTTP and socket.io."""

from __future__ import annotations

import requests


def call(world, method, path, token=None, **kw):
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    return requests.request(method, world.emulator.base_url + path, headers=headers, timeout=5, **kw)


def test_vanity_code_for_members_only(world):
    emu, sid = world.emulator, world.server["publicId"]
    assert call(world, "GET", f"/servers/{sid}/vanity", world.bot_token).json() == {"vanityCode": None}
    emu.set_vanity_code(sid, "test-server")
    assert call(world, "GET", f"/servers/{sid}/vanity", world.bot_token).json() == {"vanityCode": "test-server"}
    eve = emu.create_user("eve")
    assert call(world, "GET", f"/servers/{sid}/vanity", eve["token"]).status_code == 403


def test_notification_settings_are_per_member_and_validated(world):
    emu, sid = world.emulator, world.server["publicId"]
    path = f"/servers/{sid}/notifications"
    assert call(world, "PUT", path, world.bot_token, json={"muted": True}).status_code == 204
    assert call(world, "PUT", path, world.bot_token,
                json={"muteUntil": "2030-01-02T03:04:05+02:00", "mentionsOnly": True}).status_code == 204
    rows = emu.snapshot()["tables"]["notification_settings"]
    assert rows == [[sid, world.bot["publicId"], 1, "2030-01-02T01:04:05.000Z", 1]]
    for bad in ({"muted": "yes"}, {"muteUntil": "tomorrow"}, {"muteUntil": "2030-01-02T03:04:05"}, {},
                {"mentionsOnly": 1}):
        r = call(world, "PUT", path, world.bot_token, json=bad)
        assert r.status_code == 400 and "error" in r.json(), bad
    assert call(world, "PUT", path, world.bot_token, json={"muteUntil": None}).status_code == 204
    assert emu.snapshot()["tables"]["notification_settings"][0][3] is None


def test_audit_log_records_actions_with_executor(world, conns):
    emu, sid, gid = world.emulator, world.server["publicId"], world.general["publicId"]
    human = conns(world.human_token)
    path = f"/servers/{sid}/audit-logs"
    assert call(world, "GET", path, world.bot_token).status_code == 403       # no VIEW_AUDIT_LOG
    assert call(world, "PATCH", f"/servers/{sid}", world.human_token, json={"name": "Renamed"}).status_code == 204
    role = call(world, "POST", f"/servers/{sid}/roles", world.human_token, json={"name": "mod"}).json()["role"]
    msg = emu.post_message(gid, world.human["publicId"], "pin me")["message"]
    assert call(world, "POST", f"/chat/{gid}/pin/{msg['publicId']}", world.human_token).status_code == 204
    assert call(world, "POST", f"/servers/{sid}/roles", world.bot_token, json={"name": "x"}).status_code == 403
    carol = emu.create_user("carol")["user"]["publicId"]
    emu.add_member(sid, carol)
    assert human.call("server:ban", {"serverPublicId": sid, "userPublicId": carol, "reason": "spam"},
                             timeout=5) == {}
    logs = call(world, "GET", path, world.human_token).json()["logs"]
    assert [e["actionType"] for e in logs] == ["MEMBER_BAN", "MESSAGE_PIN", "ROLE_CREATE", "SERVER_UPDATE"]
    ban, pin, created, update = logs
    assert ban["targetType"] == "USER" and ban["targetId"] == carol and ban["details"]["reason"] == "spam"
    assert pin["targetId"] == msg["publicId"] and created["targetId"] == role["publicId"]
    assert update["details"] == {"name": "Renamed"} and update["targetId"] == sid
    assert update["executor"] == {k: world.human[k] for k in ("publicId", "name", "tag", "image")}
    assert all(e["createdAt"].endswith("Z") and e["publicId"] for e in logs)
    one = call(world, "GET", path, world.human_token, params={"limit": "1"}).json()["logs"]
    assert [e["actionType"] for e in one] == ["MEMBER_BAN"]
    only = call(world, "GET", path, world.human_token, params={"action": "ROLE_CREATE"}).json()["logs"]
    assert [e["targetId"] for e in only] == [role["publicId"]]
    assert call(world, "GET", path, world.human_token, params={"action": "NOPE"}).json() == {"logs": []}
    assert call(world, "GET", path, world.human_token, params={"limit": "x"}).status_code == 400


def test_emojis_list_create_delete_and_validation(world):
    emu, sid = world.emulator, world.server["publicId"]
    path = f"/servers/{sid}/emojis"
    r = call(world, "POST", path, world.human_token, json={"name": "party_1", "imageUrl": "http://img/p.gif",
                                                           "isAnimated": True})
    assert r.status_code == 201
    emoji = r.json()["emoji"]
    assert emoji == {"publicId": emoji["publicId"], "name": "party_1", "url": "http://img/p.gif",
                     "serverPublicId": sid, "animated": True}
    assert call(world, "GET", path, world.bot_token).json() == {"emojis": [emoji]}
    assert call(world, "POST", path, world.bot_token, json={"name": "nope", "imageUrl": "u"}).status_code == 403
    before = emu.snapshot()
    for name in ("a", "x" * 33, "has space", "dash-no", "émoji", "", 5, None):
        r = call(world, "POST", path, world.human_token, json={"name": name, "imageUrl": "http://img"})
        assert r.status_code == 400, name
    assert call(world, "POST", path, world.human_token, json={"name": "ok"}).status_code == 400
    assert call(world, "POST", path, world.human_token, json={"name": "party_1", "imageUrl": "u"}).status_code == 409
    assert emu.snapshot() == before
    assert call(world, "POST", path, world.human_token, json={"name": "x" * 32, "imageUrl": "u"}).status_code == 201
    assert call(world, "DELETE", f"{path}/{emoji['publicId']}", world.bot_token).status_code == 403
    assert call(world, "DELETE", f"{path}/{emoji['publicId']}", world.human_token).status_code == 204
    assert call(world, "DELETE", f"{path}/{emoji['publicId']}", world.human_token).status_code == 404
    assert [e["name"] for e in emu.emojis(sid)] == ["x" * 32]
    assert [e["actionType"] for e in emu.audit_log(sid)] == ["EMOJI_DELETE", "EMOJI_CREATE", "EMOJI_CREATE"]


def test_webhooks_crud_and_execute_without_authorization(world, conns):
    emu, sid, gid = world.emulator, world.server["publicId"], world.general["publicId"]
    bot = conns(world.bot_token)
    path = f"/channels/{gid}/webhooks"
    assert call(world, "POST", path, world.bot_token, json={"name": "hook"}).status_code == 403
    r = call(world, "POST", path, world.human_token, json={"name": "Hooky", "avatarUrl": "http://a/1.png"})
    assert r.status_code == 201
    hook = r.json()["webhook"]
    token = hook["token"]
    assert hook["name"] == "Hooky" and hook["channelPublicId"] == gid and hook["avatarUrl"] == "http://a/1.png"
    listed = call(world, "GET", path, world.human_token).json()["webhooks"]
    assert [h["publicId"] for h in listed] == [hook["publicId"]] and "token" not in listed[0]
    wid = hook["publicId"]
    r = call(world, "POST", f"/webhooks/{wid}/{token}", json={"content": "from <hook>", "username": "Alerts"})
    assert r.status_code == 200
    mid = r.json()["id"]
    got = bot.wait("message:new")
    assert got["publicId"] == mid and got["content"] == "from &lt;hook&gt;" and "nonce" not in got
    assert got["author"] == {"publicId": wid, "name": "Alerts", "tag": "0000", "image": "http://a/1.png",
                             "isBot": True}
    assert emu.messages(gid)[-1]["author"]["publicId"] == wid
    journal = [e for e in emu.requests() if e["path"].startswith("/webhooks/")]
    assert [e["path"] for e in journal] == [f"/webhooks/{wid}/***"]
    assert "authorization" not in journal[0]["headers"]
    before = emu.snapshot()
    for method, p, body in (("POST", f"/webhooks/{wid}/wrong", {"content": "x"}),
                            ("POST", f"/webhooks/{wid}/{token}", {}),
                            ("POST", f"/webhooks/{wid}/{token}", {"content": 5}),
                            ("POST", f"/webhooks/{wid}/{token}", {"content": "x", "embeds": "no"}),
                            ("POST", f"/webhooks/{wid}/{token}", {"content": "x", "username": ""})):
        r = call(world, method, p, json=body)
        assert r.status_code in (400, 404) and token not in r.text, (p, body, r.status_code)
    assert emu.snapshot() == before
    assert call(world, "PATCH", f"{path}/{wid}", world.human_token, json={"name": "Renamed", "avatarUrl": None}
                ).status_code == 204
    assert emu.webhooks(gid)[0]["name"] == "Renamed" and emu.webhooks(gid)[0]["avatarUrl"] is None
    other = next(c for c in world.channels if c["name"] == "random")["publicId"]
    assert call(world, "DELETE", f"/channels/{other}/webhooks/{wid}", world.human_token).status_code == 404
    assert call(world, "DELETE", f"{path}/{wid}", world.human_token).status_code == 204
    assert call(world, "POST", f"/webhooks/{wid}/{token}", json={"content": "gone"}).status_code == 404
    assert [e["actionType"] for e in emu.audit_log(sid)] == ["WEBHOOK_DELETE", "WEBHOOK_UPDATE", "WEBHOOK_CREATE"]
    assert emu.audit_log(sid)[2]["targetId"] == wid


def test_webhook_messages_respect_the_channel_room(world, conns):
    """A webhook message reaches the members who see the channel, and nobody else."""
    emu, gid = world.emulator, world.general["publicId"]
    hook = call(world, "POST", f"/channels/{gid}/webhooks", world.human_token, json={"name": "h"}).json()["webhook"]
    stranger = conns(emu.create_user("eve")["token"])
    human = conns(world.human_token)
    call(world, "POST", f"/webhooks/{hook['publicId']}/{hook['token']}", json={"embeds": [{"title": "t"}]})
    assert human.wait("message:new")["embeds"] == [{"title": "t"}]
    assert stranger.none("message:new")


def test_profile_and_mutual_servers(world):
    emu, sid = world.emulator, world.server["publicId"]
    r = call(world, "GET", f"/users/{world.human['publicId']}/profile", world.bot_token)
    profile = r.json()
    assert profile["publicId"] == world.human["publicId"] and profile["name"] == "alice"
    assert {k: profile[k] for k in ("banner", "bannerColor", "bio", "followersCount")} == {
        "banner": None, "bannerColor": None, "bio": None, "followersCount": 0}
    emu.set_profile(world.human["publicId"], bio="hi", followersCount=3)
    profile = call(world, "GET", f"/users/{world.human['publicId']}/profile", world.bot_token).json()
    assert profile["bio"] == "hi" and profile["followersCount"] == 3 and profile["mutualFriendsCount"] == 0
    assert call(world, "GET", "/users/nope/profile", world.bot_token).status_code == 404
    emu.create_server("Other", world.human["publicId"])       # alice's alone: not mutual
    mutual = call(world, "GET", f"/users/{world.human['publicId']}/mutual-servers", world.bot_token).json()
    assert mutual == {"mutualServers": [{"publicId": sid, "name": "Test Server", "imageUrl": None}]}
    eve = emu.create_user("eve")
    assert call(world, "GET", f"/users/{world.human['publicId']}/mutual-servers", eve["token"]).json() == {
        "mutualServers": []}


def test_history_pages_with_before(world):
    emu, gid = world.emulator, world.general["publicId"]
    emu.post_messages(gid, world.human["publicId"], [f"m{i}" for i in range(7)])
    page = call(world, "GET", f"/chat/{gid}", world.bot_token, params={"limit": "3"}).json()["messages"]
    assert [m["content"] for m in page] == ["m4", "m5", "m6"]   # newest `limit`, chronological
    page = call(world, "GET", f"/chat/{gid}", world.bot_token,
                params={"limit": "3", "before": page[0]["publicId"]}).json()["messages"]
    assert [m["content"] for m in page] == ["m1", "m2", "m3"]
