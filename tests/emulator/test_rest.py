"""REST routes of the emulator: auth, access, errors and the record shapes."""

from __future__ import annotations

import re

import pytest
import requests

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def _h(token):
    return {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}


def get(emu, path, token, **kw):
    return requests.get(emu.base_url + path, headers=_h(token), timeout=5, **kw)


def test_missing_or_bad_token_is_401(world):
    emu = world.emulator
    assert requests.get(emu.base_url + "/auth/me", timeout=5).status_code == 401
    r = requests.get(emu.base_url + "/auth/me", headers={"Authorization": "Bearer nope"}, timeout=5)
    assert r.status_code == 401
    assert r.json() == {"error": "Unauthorized"}
    assert r.headers["content-type"].startswith("application/json")


def test_auth_me_shape(world):
    r = get(world.emulator, "/auth/me", world.bot_token)
    assert r.status_code == 200
    user = r.json()["user"]
    assert user["publicId"] == world.bot["publicId"]
    assert re.fullmatch(r"\d{18}", user["publicId"])
    assert user["name"] == "pingbot" and user["isBot"] is True
    assert re.fullmatch(r"\d{4}", user["tag"])
    assert user["status"] == "offline" and "image" in user


def test_servers_list_and_get(world):
    emu = world.emulator
    servers = get(emu, "/servers", world.bot_token).json()["servers"]
    assert [s["publicId"] for s in servers] == [world.server["publicId"]]
    srv = get(emu, f"/servers/{world.server['publicId']}", world.bot_token).json()
    assert srv["memberCount"] == 2 and srv["ownerId"] == world.human["publicId"]
    assert srv["imageUrl"] is None and srv["name"] == "Test Server"


def test_non_member_gets_403_unknown_gets_404(world):
    emu = world.emulator
    stranger = emu.create_user("eve")
    sid = world.server["publicId"]
    assert get(emu, f"/servers/{sid}", stranger["token"]).status_code == 403
    assert get(emu, f"/servers/{sid}/categories", stranger["token"]).status_code == 403
    assert get(emu, f"/channels/{world.general['publicId']}", stranger["token"]).status_code == 403
    assert get(emu, "/servers/123456789012345678", stranger["token"]).status_code == 404
    assert get(emu, "/servers", stranger["token"]).json() == {"servers": []}


def test_post_server_bot_forbidden_human_created(world):
    emu = world.emulator
    r = requests.post(emu.base_url + "/servers", headers=_h(world.bot_token), json={"name": "x"}, timeout=5)
    assert r.status_code == 403 and r.json()["error"] == "Bots cannot create servers."
    r = requests.post(emu.base_url + "/servers", headers=_h(world.human_token), json={"name": "Mine"}, timeout=5)
    assert r.status_code == 201
    server = r.json()["server"]
    assert server["name"] == "Mine" and server["ownerId"] == world.human["publicId"]


@pytest.mark.parametrize("body", [b"{not json", b"[1, 2]", b"", b'"str"'])
def test_bad_json_is_400_never_500(world, body):
    r = requests.post(world.emulator.base_url + "/servers", headers=_h(world.human_token), data=body, timeout=5)
    assert r.status_code == 400
    assert "error" in r.json()


def test_missing_fields_are_400(world):
    emu = world.emulator
    sid = world.server["publicId"]
    r = requests.post(emu.base_url + "/servers", headers=_h(world.human_token), json={"iconUrl": None}, timeout=5)
    assert r.status_code == 400
    r = requests.post(emu.base_url + f"/servers/{sid}/channels", headers=_h(world.human_token),
                      json={"type": "TEXT"}, timeout=5)
    assert r.status_code == 400
    r = requests.post(emu.base_url + f"/servers/{sid}/channels", headers=_h(world.human_token),
                      json={"name": "x", "type": "STAGE"}, timeout=5)
    assert r.status_code == 400


def test_unknown_route_404_and_wrong_method_405(world):
    emu = world.emulator
    sid = world.server["publicId"]
    r = get(emu, "/nothing/here", world.bot_token)
    assert r.status_code == 404 and r.json() == {"error": "Not found"}
    assert get(emu, f"/servers/{sid}/channels", world.bot_token).status_code == 405
    assert requests.get(emu.socket_url + "/elsewhere", timeout=5).status_code == 404
    # the removed REST kick route does not exist
    r = requests.delete(emu.base_url + f"/servers/{sid}/members/{world.human['publicId']}",
                        headers=_h(world.bot_token), timeout=5)
    assert r.status_code == 405


def test_member_nested_shape(world):
    sid = world.server["publicId"]
    m = get(world.emulator, f"/servers/{sid}/members/{world.bot['publicId']}", world.bot_token).json()
    assert m["userId"] == world.bot["publicId"] and m["user"]["publicId"] == world.bot["publicId"]
    assert m["serverPublicId"] == sid and m["nickname"] is None and m["isOwner"] is False
    assert ISO.match(m["joinedAt"])
    assert [r["name"] for r in m["roles"]] == ["@everyone"]
    assert m["roles"][0]["permissions"] == "552448" and m["roles"][0]["position"] == 0
    owner = get(world.emulator, f"/servers/{sid}/members/{world.human['publicId']}", world.bot_token).json()
    assert owner["isOwner"] is True
    stranger = world.emulator.create_user("eve")
    assert get(world.emulator, f"/servers/{sid}/members/{stranger['user']['publicId']}",
               world.bot_token).status_code == 404


def test_categories_listing(world):
    listing = get(world.emulator, f"/servers/{world.server['publicId']}/categories", world.bot_token).json()
    assert [c["name"] for c in listing["categories"]] == ["Text Channels"]
    assert [c["name"] for c in listing["categories"][0]["channels"]] == ["general", "random"]
    assert [c["name"] for c in listing["uncategorizedChannels"]] == ["voice"]
    assert listing["uncategorizedChannels"][0]["type"] == "VOICE"
    assert "serverPublicId" not in listing["categories"][0]["channels"][0]


def test_create_channel_needs_manage_channels(world):
    emu = world.emulator
    sid = world.server["publicId"]
    body = {"name": "new", "type": "TEXT"}
    r = requests.post(emu.base_url + f"/servers/{sid}/channels", headers=_h(world.bot_token), json=body, timeout=5)
    assert r.status_code == 403
    role = emu.create_role(sid, "mods", 4)["role"]
    emu.add_member(sid, world.bot["publicId"], role_ids=[role["publicId"]])
    r = requests.post(emu.base_url + f"/servers/{sid}/channels", headers=_h(world.bot_token), json=body, timeout=5)
    assert r.status_code == 201
    channel = r.json()["channel"]
    assert channel["serverPublicId"] == sid and channel["type"] == "TEXT" and channel["name"] == "new"


def test_administrator_role_grants_all(world):
    emu = world.emulator
    sid = world.server["publicId"]
    role = emu.create_role(sid, "admin", str(2147483648))["role"]
    assert role["permissions"] == "2147483648"
    emu.add_member(sid, world.bot["publicId"], role_ids=[role["publicId"]])
    r = requests.post(emu.base_url + f"/servers/{sid}/channels", headers=_h(world.bot_token),
                      json={"name": "adm", "type": "VOICE"}, timeout=5)
    assert r.status_code == 201


def test_get_channel_and_dm(world):
    emu = world.emulator
    ch = get(emu, f"/channels/{world.general['publicId']}", world.bot_token).json()
    assert ch["serverPublicId"] == world.server["publicId"] and ch["name"] == "general"
    dm = get(emu, f"/channels/dm/{world.human['publicId']}", world.bot_token).json()
    assert dm["type"] == "DM" and dm["recipient"]["publicId"] == world.human["publicId"]
    assert dm["recipient"]["friendshipStatus"] == "NONE"
    again = get(emu, f"/channels/dm/{world.human['publicId']}", world.bot_token).json()
    assert again["publicId"] == dm["publicId"]
    other_side = get(emu, f"/channels/dm/{world.bot['publicId']}", world.human_token).json()
    assert other_side["publicId"] == dm["publicId"]
    assert other_side["recipient"]["publicId"] == world.bot["publicId"]
    dm_channel = get(emu, f"/channels/{dm['publicId']}", world.bot_token).json()
    assert dm_channel["serverPublicId"] is None
    assert get(emu, "/channels/dm/999999999999999999", world.bot_token).status_code == 404


def test_search_escapes_and_limits(world):
    emu = world.emulator
    cid = world.general["publicId"]
    emu.post_message(cid, world.human["publicId"], "a <b> & c hello")
    for i in range(5):
        emu.post_message(cid, world.human["publicId"], f"hello {i}")
    emu.post_message(cid, world.human["publicId"], "unrelated")
    r = get(emu, f"/chat/{cid}/search", world.bot_token, params={"q": "hello", "limit": 3})
    msgs = r.json()["messages"]
    assert [m["content"] for m in msgs] == ["hello 4", "hello 3", "hello 2"]
    msgs = get(emu, f"/chat/{cid}/search", world.bot_token, params={"q": "<b>"}).json()["messages"]
    assert [m["content"] for m in msgs] == ["a &lt;b&gt; &amp; c hello"]
    assert get(emu, f"/chat/{cid}/search", world.bot_token, params={"q": "zzz"}).json() == {"messages": []}
    assert get(emu, f"/chat/{cid}/search", world.bot_token, params={"q": "x", "limit": "ten"}).status_code == 400
    assert get(emu, f"/chat/{cid}/search", world.bot_token).status_code == 400
    hostile = get(emu, f"/chat/{cid}/search", world.bot_token, params={"q": 'he"llo OR NEAR( *'})
    assert hostile.status_code == 200


def test_history_chronological_before(world):
    emu = world.emulator
    cid = world.general["publicId"]
    emu.post_messages(cid, world.human["publicId"], [f"m{i}" for i in range(10)])
    msgs = get(emu, f"/chat/{cid}", world.bot_token, params={"limit": 3}).json()["messages"]
    assert [m["content"] for m in msgs] == ["m7", "m8", "m9"]
    older = get(emu, f"/chat/{cid}", world.bot_token, params={"limit": 3, "before": msgs[0]["publicId"]}).json()
    assert [m["content"] for m in older["messages"]] == ["m4", "m5", "m6"]


def test_patch_settings_only_status(world):
    emu = world.emulator
    url = emu.base_url + "/users/settings"
    r = requests.patch(url, headers=_h(world.bot_token), json={"status": "dnd"}, timeout=5)
    assert r.status_code == 204 and r.content == b""
    assert get(emu, "/auth/me", world.bot_token).json()["user"]["status"] == "dnd"
    assert requests.patch(url, headers=_h(world.bot_token), json={"name": "x"}, timeout=5).status_code == 400
    assert requests.patch(url, headers=_h(world.bot_token), json={"status": "away"}, timeout=5).status_code == 400
    requests.patch(url, headers=_h(world.bot_token), json={"status": "invisible"}, timeout=5)
    other_view = get(emu, f"/servers/{world.server['publicId']}/members/{world.bot['publicId']}", world.human_token)
    assert other_view.json()["user"]["status"] == "offline"


def test_stats(world):
    r = get(world.emulator, f"/servers/{world.server['publicId']}/stats", world.bot_token)
    assert r.json()["memberCount"] == 2


def test_invites_get_and_delete(world):
    emu = world.emulator
    sid = world.server["publicId"]
    inv = emu.create_invite(sid, world.general["publicId"], world.human["publicId"])["invite"]
    assert re.fullmatch(r"[A-Za-z0-9]{8}", inv["code"])
    stranger = emu.create_user("eve")
    resolved = get(emu, f"/invites/{inv['code']}", stranger["token"]).json()
    assert resolved["code"] == inv["code"] and resolved["uses"] == 0
    assert resolved["server"]["publicId"] == sid and resolved["server"]["isMember"] is False
    assert resolved["server"]["channelPublicId"] == world.general["publicId"]
    url = emu.base_url + f"/invites/{inv['code']}"
    assert requests.delete(url, headers=_h(world.bot_token), timeout=5).status_code == 403
    assert requests.delete(url, headers=_h(world.human_token), timeout=5).status_code == 204
    assert get(emu, f"/invites/{inv['code']}", world.bot_token).status_code == 404


def test_encoded_segments_stay_one_segment(world):
    emu = world.emulator
    r = get(emu, "/servers/..%2Fauth%2Fme", world.bot_token)
    assert r.status_code == 404
    assert emu.requests()[-1]["path"] == "/servers/..%2Fauth%2Fme"


def test_request_log_has_no_token(world):
    emu = world.emulator
    emu.clear_requests()
    get(emu, "/servers", world.bot_token, params={"a": "b c"})
    (entry,) = emu.requests()
    assert entry["method"] == "GET" and entry["path"] == "/servers" and entry["query"] == "a=b+c"
    assert entry["status"] == 200 and entry["endedAt"] >= entry["startedAt"]
    assert world.bot_token not in repr(entry)
