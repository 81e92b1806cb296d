"""A role bot built only on the public API of service_client.

- ``!role add <member> <role>`` and ``!role remove <member> <role>`` give or take a role (the
  member as a mention, an id or a name; the role's name may hold spaces). Only members with
  MANAGE_ROLES may use it.
- ``!rolemenu`` posts a menu: a member who reacts to it with one of the emojis of
  :data:`MENU` gets that role, and loses it again when the reaction goes.

The bot needs MANAGE_ROLES on the server. Run it against any service (or
``python -m service_client emulator --seed demo``)::

    SERVICE_TOKEN=... SERVICE_BASE_URL=http://127.0.0.1:PORT/api/v2 \\
    SERVICE_SOCKET_URL=http://127.0.0.1:PORT python samples/role_bot.py
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any, Literal

from service_client import (
    Client,
    CommandContext,
    CommandDispatcher,
    Member,
    Permissions,
    ReactionEvent,
    Role,
    ServiceError,
    User,
)

#: The menu's emojis and the name of the role each one gives.
MENU = {"🔴": "Red", "🔵": "Blue"}

log = logging.getLogger("role_bot")


def build_client(**options: Any) -> Client:
    """Create the bot's client with its commands and its reaction listeners.

    Args:
        **options: Keyword options for :class:`service_client.Client` (``base_url``, ...).

    Returns:
        The client, not yet logged in.
    """
    client = Client(**options)
    commands = CommandDispatcher(client, prefix="!")
    menus: set[str] = set()                  # ids of the menus this bot posted
    menus_lock = threading.Lock()

    @commands.command(requires=Permissions.MANAGE_ROLES)
    def role(ctx: CommandContext, action: Literal["add", "remove"], member: Member, *, role: Role) -> None:
        """Give a member a role, or take it: !role add @carol Red."""
        if action == "add":
            member.add_roles(role, reason=f"asked by {ctx.author.tag_string}")
            ctx.reply(f"{member.display_name} now has {role.name}.")
        else:
            member.remove_roles(role, reason=f"asked by {ctx.author.tag_string}")
            ctx.reply(f"{member.display_name} no longer has {role.name}.")

    @commands.command()
    def rolemenu(ctx: CommandContext) -> None:
        """Post the menu of self-assigned roles."""
        lines = [f"{emoji} {name}" for emoji, name in MENU.items()]
        menu = ctx.send("React to get a role:\n" + "\n".join(lines))
        with menus_lock:
            menus.add(menu.id)
        for emoji in MENU:
            menu.add_reaction(emoji)

    def on_reaction(info: ReactionEvent, user: User, message_id: str) -> None:
        with menus_lock:
            if message_id not in menus:
                return
        me = client.user
        guild = info.guild
        name = MENU.get(info.emoji)
        if name is None or guild is None or me is None or user.id == me.id:
            return
        chosen = guild.roles.cache.find(lambda r: r.name == name) or next(
            (r for r in guild.roles.fetch_all() if r.name == name), None)
        if chosen is None:
            log.warning("the menu names a role %r that %s does not have", name, guild.name)
            return
        member = info.member or guild.fetch_member(user.id)
        try:
            if info.added:
                member.add_roles(chosen, reason="role menu")
            else:
                member.remove_roles(chosen, reason="role menu")
        except ServiceError as exc:
            log.warning("could not change %s's roles: %s", user.tag_string, exc)

    client.on("message_reaction_add", on_reaction)
    client.on("message_reaction_remove", on_reaction)
    return client


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    bot = build_client(
        **{key: value for key, value in (("base_url", os.environ.get("SERVICE_BASE_URL")),
                                         ("socket_url", os.environ.get("SERVICE_SOCKET_URL"))) if value}
    )
    bot.run(os.environ["SERVICE_TOKEN"])
