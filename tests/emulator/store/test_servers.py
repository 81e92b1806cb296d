"""ServerRepository alone (with the users it reads): servers, settings, vanity codes."""

from __future__ import annotations

import pytest

from service_client.emulator.store import NotFound


def test_a_created_server_lists_for_its_owner_and_is_deleted_with_its_rows(db, users, servers):
    owner = users.create_user("owner")[0]["publicId"]
    sid = servers.create_server("Guild", owner)
    assert servers.server(sid)["name"] == "Guild"
    assert servers.server_ids_of(owner) == [sid]
    servers.update_server(sid, {"name": "Renamed"})
    assert [s["name"] for s in servers.servers_of(owner)] == ["Renamed"]
    servers.delete_server(sid)
    with pytest.raises(NotFound):
        servers.server_row(sid)
    assert db.one("SELECT 1 FROM members WHERE server_id=?", (sid,)) is None


def test_vanity_code_and_notification_settings(users, servers):
    owner = users.create_user("owner")[0]["publicId"]
    sid = servers.create_server("Guild", owner)
    assert servers.vanity_code(sid) is None
    servers.set_vanity_code(sid, "guild")
    assert servers.vanity_code(sid) == "guild"
    servers.set_notifications(sid, owner, {"muted": True})
    assert servers.notifications(sid, owner)["muted"] is True
