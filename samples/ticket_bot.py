"""A support-ticket bot built only on the public API of service_client.

``!ticket`` (in any channel of a server) opens a private channel ``ticket-<name>`` for the
member who asked: ``@everyone`` is denied ``VIEW_CHANNELS``, while the opener, the "Staff" role
(when the server has one) and the bot itself may view it and post in it. Nobody else gets it in
the channel list, can read it, or receives its messages. ``!close`` inside a ticket deletes it.

The bot needs ``MANAGE_CHANNELS`` on the server. Run it against any service (or
``python -m service_client emulator --seed demo``)::

    SERVICE_TOKEN=... SERVICE_BASE_URL=http://127.0.0.1:PORT/api/v2 \\
    SERVICE_SOCKET_URL=http://127.0.0.1:PORT python samples/ticket_bot.py
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
from typing import Any

from service_client import ChannelOverwriteError, Client, Permissions, ServiceError

#: The role whose members may see every ticket.
STAFF_ROLE = "Staff"
#: Ticket channels are named with this prefix.
TICKET_PREFIX = "ticket-"
#: What the opener, the staff and the bot may do in a ticket.
TICKET_ACCESS = Permissions.VIEW_CHANNELS | Permissions.SEND_MESSAGES

log = logging.getLogger("ticket_bot")


def ticket_name(username: str) -> str:
    """``ticket-<name>``: the opener's name in lower case, other characters as ``-`` (at most 32)."""
    slug = re.sub(r"[^a-z0-9]+", "-", username.lower()).strip("-") or "member"
    return (TICKET_PREFIX + slug)[:32]


def build_client(**options: Any) -> Client:
    """Create the bot's client with its ``!ticket`` / ``!close`` handler.

    Args:
        **options: Keyword options for :class:`service_client.Client` (``base_url``, ...).

    Returns:
        The client, not yet logged in.
    """
    client = Client(**options)
    tickets: dict[str, str] = {}        # ticket channel id -> opener's user id
    lock = threading.Lock()

    def open_ticket(message: Any) -> None:
        guild = client.guilds.get_or_fetch(message.server_id)
        if guild is None or client.user is None:
            return
        roles = guild.roles.fetch_all()
        staff = next((role for role in roles if role.name == STAFF_ROLE), None)
        overwrites: dict[Any, Any] = {
            ("MEMBER", client.user.id): (TICKET_ACCESS, 0),      # first, so the bot never loses it
            ("MEMBER", message.author.id): (TICKET_ACCESS, 0),
        }
        if staff is not None:
            overwrites[staff] = (TICKET_ACCESS, 0)
        everyone = guild.roles.everyone
        if everyone is not None:
            overwrites[everyone] = (0, Permissions.VIEW_CHANNELS)
        try:
            channel = guild.channels.create(ticket_name(message.author.username), private=True,
                                            overwrites=overwrites)
        except ChannelOverwriteError as exc:
            log.warning("ticket for %s not opened: %s", message.author.id, exc)
            exc.channel.delete()                     # half-configured: do not leave it behind
            message.reply("Sorry, I could not open a ticket.")
            return
        except ServiceError as exc:
            log.warning("ticket for %s not opened: %s", message.author.id, exc)
            message.reply("Sorry, I could not open a ticket.")
            return
        with lock:
            tickets[channel.id] = message.author.id
        channel.send(f"<@{message.author.id}> your ticket is open: staff will answer here. "
                     "Type !close to close it.")
        message.reply(f"Ticket opened: <#{channel.id}>")

    def close_ticket(message: Any) -> None:
        with lock:
            known = message.channel_id in tickets
        channel = client.channels.cache.get(message.channel_id)
        if channel is None:
            channel = client.channels.fetch(message.channel_id)
        if not known and not (channel.name.startswith(TICKET_PREFIX) and channel.is_private):
            message.reply("!close only works inside a ticket.")
            return
        channel.delete()
        with lock:
            tickets.pop(channel.id, None)

    @client.on("message_create")
    def on_message(message: Any) -> None:
        if message.author is None or message.author.bot or message.server_id is None:
            return
        command = message.content.strip().lower()
        if command == "!ticket":
            open_ticket(message)
        elif command == "!close":
            close_ticket(message)

    return client


def main() -> int:
    """Run the bot with ``SERVICE_TOKEN`` (and optional ``SERVICE_BASE_URL``, ``SERVICE_SOCKET_URL``)."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    token = os.environ.get("SERVICE_TOKEN")
    if not token:
        print("set SERVICE_TOKEN to the bot's token", file=sys.stderr)
        return 2
    try:
        client = build_client(
            base_url=os.environ.get("SERVICE_BASE_URL") or None,
            socket_url=os.environ.get("SERVICE_SOCKET_URL") or None,
        )
    except ValueError as error:  # one URL set without the other: name both
        print(f"{error}; set SERVICE_BASE_URL and SERVICE_SOCKET_URL together", file=sys.stderr)
        return 2
    client.run(token)
    return 0


if __name__ == "__main__":
    sys.exit(main())
