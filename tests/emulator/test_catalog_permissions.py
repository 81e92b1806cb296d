"""The emulator enforces each endpoint's permission as the catalog declares it, and checks bodies by its shapes.

Generated from :data:`service_client.endpoints.ENDPOINTS`: an endpoint added to the catalog with
a permission is tested here with no list to update.
"""

from __future__ import annotations

from typing import Any

import pytest
import requests

from service_client.endpoints import ENDPOINTS, Endpoint
from service_client.permissions import Permissions

MISSING = "servers.errors.missing_permission"
GUARDED = [ep for ep in ENDPOINTS if ep.permission is not None]


@pytest.fixture
def ids(world) -> dict[str, str]:
    """A real id for each path parameter of the catalog, in the world's server."""
    emu, sid, gid = world.emulator, world.server["publicId"], world.general["publicId"]
    owner = {"Authorization": f"Bearer {world.human_token}"}
    role = emu.create_role(sid, "plain", 0)["role"]
    message = emu.post_message(gid, world.human["publicId"], "hello")["message"]
    invite = emu.create_invite(sid, gid, world.human["publicId"])["invite"]
    emu.set_override(gid, role["publicId"], "ROLE", allow=512)
    emoji = requests.post(f"{emu.base_url}/servers/{sid}/emojis", json={"name": "wave", "imageUrl": "http://i/w"},
                          headers=owner, timeout=5).json()["emoji"]
    hook = requests.post(f"{emu.base_url}/channels/{gid}/webhooks", json={"name": "hook"}, headers=owner,
                         timeout=5).json()["webhook"]
    return {"server_id": sid, "channel_id": gid, "user_id": world.bot["publicId"], "role_id": role["publicId"],
            "code": invite["code"], "message_id": message["publicId"], "category_id": world.general["categoryId"],
            "override_id": emu.overrides(gid)[0]["id"], "emoji_id": emoji["publicId"],
            "webhook_id": hook["publicId"], "token": hook["token"]}


def _call(world: Any, ep: Endpoint, ids: dict[str, str]) -> requests.Response:
    path = ep.path.format(**{name: ids[name] for name in ep.params})
    query = "?all=true" if "all" in ep.query else ""   # LIST_INVITES asks for the permission with all=true
    return requests.request(ep.method, f"{world.emulator.base_url}{path}{query}", json={} if ep.body else None,
                            headers={"Authorization": f"Bearer {world.bot_token}"}, timeout=5)


@pytest.mark.parametrize("ep", GUARDED, ids=lambda ep: ep.name)
def test_a_member_without_the_catalogs_permission_is_refused_and_one_with_it_is_not(world, ids, ep):
    """The bot (a member with the default permissions) is refused with 403 ``missing_permission``;
    given a role holding exactly the endpoint's permission, it is no longer refused for that."""
    assert ep.permission is not None and not ep.permission & Permissions.DEFAULT, "the bot holds it already"
    refused = _call(world, ep, ids)
    assert (refused.status_code, refused.json()) == (403, {"error": MISSING}), refused.text
    emu, sid = world.emulator, world.server["publicId"]
    granted = emu.create_role(sid, "granted", int(ep.permission))["role"]
    emu.change_member_role(sid, world.bot["publicId"], granted["publicId"], add=True)
    allowed = _call(world, ep, ids)
    assert allowed.status_code < 500, allowed.text
    if allowed.status_code >= 400:
        assert allowed.json()["error"] != MISSING, allowed.text


@pytest.mark.parametrize("ep", [ep for ep in ENDPOINTS if ep.body is not None], ids=lambda ep: ep.name)
def test_a_body_field_of_the_wrong_type_is_a_400_naming_it(world, ids, ep):
    """The owner (every permission) sends each declared field as a JSON array: 400 naming the field."""
    for field in ep.body.__annotations__:   # type: ignore[union-attr]
        path = ep.path.format(**{name: ids[name] for name in ep.params})
        headers = {"Authorization": f"Bearer {world.human_token}"} if ep.authorized else {}
        answer = requests.request(ep.method, f"{world.emulator.base_url}{path}", json={field: [[1]]},
                                  headers=headers, timeout=5)
        assert answer.status_code == 400, (field, answer.status_code, answer.text)
        assert f"$.{field}" in answer.json()["error"], (field, answer.text)


def test_null_stays_accepted_where_the_service_reads_it_as_none(world, ids):
    """A webhook post with ``content`` and ``embeds`` null is read as none of either: the
    declared body allows null there, as the operation always did."""
    url = f"{world.emulator.base_url}/webhooks/{ids['webhook_id']}/{ids['token']}"
    posted = requests.post(url, json={"content": None, "embeds": [{"title": "t"}]}, timeout=5)
    assert posted.status_code == 200, posted.text
    only_text = requests.post(url, json={"content": "hello", "embeds": None}, timeout=5)
    assert only_text.status_code == 200, only_text.text
