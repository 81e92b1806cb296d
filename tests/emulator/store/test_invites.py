"""InviteRepository alone (with users, servers, members): codes, listing, revocation."""

from __future__ import annotations

import pytest

from service_client.emulator.store import NotFound
from service_client.emulator.store.invites import InviteRepository


def test_an_invite_is_listed_per_inviter_and_gone_once_deleted(db, users, servers, members):
    invites = InviteRepository(db, users=users, servers=servers, members=members)
    owner = users.create_user("owner")[0]["publicId"]
    sid = servers.create_server("Guild", owner)
    code = invites.create_invite(sid, None, owner, max_uses=3)
    assert len(code) == 8 and code.isalnum()
    assert [i["code"] for i in invites.invites(sid)] == [code]
    assert [i["code"] for i in invites.invites(sid, inviter=owner)] == [code]
    assert invites.server_invite(code)["maxUses"] == 3
    invites.delete_invite(code)
    with pytest.raises(NotFound):
        invites.invite_row(code)
