"""The demo seed shared by ``python -m service_client emulator --seed demo`` and the demo command."""

from __future__ import annotations

from typing import Any

from ..permissions import Permissions
from .emulator import Emulator


def seed_demo(emu: Emulator) -> dict[str, Any]:
    """Seed a running emulator with the demo world.

    A human user ``alice``, a bot user ``pingbot``, and server ``Demo Server`` (owned by alice)
    with categories ``Text Channels`` (``general``, ``random``) and ``Projects`` (``dev``) plus
    one uncategorised channel ``lounge``; both users are members. The bot has the role ``Bot``,
    which grants VIEW_MEMBERS, so it can list the server's members
    (``guild.fetch_members()``).

    Args:
        emu: A started :class:`Emulator`.

    Returns:
        ``{"bot_token", "human_token", "bot": User, "human": User, "server": Server,
        "channels": {name: Channel}}``.

    Raises:
        RuntimeError: The emulator is not running.
    """
    human = emu.create_user("alice")
    bot = emu.create_user("pingbot", bot=True)
    created = emu.create_server(
        "Demo Server", human["user"]["publicId"],
        categories=[
            {"name": "Text Channels", "channels": [{"name": "general", "type": "TEXT"},
                                                   {"name": "random", "type": "TEXT"}]},
            {"name": "Projects", "channels": [{"name": "dev", "type": "TEXT"}]},
        ],
        channels=[{"name": "lounge", "type": "TEXT"}],
    )
    server = created["server"]
    role = emu.create_role(server["publicId"], "Bot", int(Permissions.VIEW_MEMBERS))["role"]
    emu.add_member(server["publicId"], bot["user"]["publicId"], role_ids=[role["publicId"]])
    return {
        "bot_token": bot["token"],
        "human_token": human["token"],
        "bot": bot["user"],
        "human": human["user"],
        "server": emu.server(server["publicId"]),
        "channels": {c["name"]: c for c in created["channels"]},
    }

