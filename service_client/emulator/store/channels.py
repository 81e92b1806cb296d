"""The store's channels repository: channels, categories, permission overrides and DM channels, and who may view or send in each."""

from __future__ import annotations

import sqlite3
from typing import Any

from .database import Database
from .members import MemberRepository
from .schema import (
    ALL_PERMISSIONS,
    MAX_OVERRIDES,
    PERM,
    BadRequest,
    NotFound,
    iso_now,
)
from .servers import ServerRepository
from .users import UserRepository


class ChannelRepository:
    """Channels, categories, permission overrides and DM channels, and who may view or send in each.

    The channel-level permission computation (overrides, private channels and categories) is
    here: it makes them take effect for VIEW_CHANNELS and SEND_MESSAGES.

    Not thread-safe: used from the emulator's loop thread, as the whole store is.

    Args:
        db: The database connection and id counter shared by every repository.
        users: The users repository.
        servers: The servers repository.
        members: The members repository.
    """

    def __init__(self, db: Database, users: UserRepository, servers: ServerRepository, members: MemberRepository) -> None:
        self.db = db
        self.users = users
        self.servers = servers
        self.members = members

    def open_dm(self, uid: str, other: str) -> tuple[str, bool]:
        """Return ``(channel id, created)`` of the DM between two users."""
        self.users.user_row(other)
        a, b = sorted((uid, other))
        row = self.db.one("SELECT channel_id FROM dms WHERE user_a=? AND user_b=?", (a, b))
        if row is not None:
            return str(row[0]), False
        cid = self.db.new_id()
        with self.db.conn:
            self.db.conn.execute(
                "INSERT INTO channels(id, server_id, category_id, name, type, position, created_at) "
                "VALUES (?,NULL,NULL,?,?,0,?)", (cid, "DM", "DM", iso_now()))
            self.db.conn.execute("INSERT INTO dms VALUES (?,?,?)", (cid, a, b))
        return cid, True

    def dm_channel_id(self, uid: str, other: str) -> str | None:
        """The id of the DM between two users, or None when it was never opened (opens nothing)."""
        a, b = sorted((uid, other))
        row = self.db.one("SELECT channel_id FROM dms WHERE user_a=? AND user_b=?", (a, b))
        return None if row is None else str(row[0])

    def dm_record(self, cid: str, viewer: str) -> dict[str, Any]:
        """Return the DM record (with ``recipient``) from ``viewer``'s side."""
        row = self.db.one("SELECT * FROM dms WHERE channel_id=?", (cid,))
        if row is None:
            raise NotFound("channels.errors.not_found")
        other = row["user_b"] if row["user_a"] == viewer else row["user_a"]
        recipient = self.users.user(other, viewer=viewer)
        recipient.update({"friendshipStatus": "NONE", "friendshipId": None})
        return {"publicId": cid, "type": "DM", "name": recipient["name"], "serverPublicId": None,
                "recipient": recipient}

    def dm_participants(self, cid: str) -> list[str]:
        """Return the two user ids of a DM channel ([] if not a DM)."""
        row = self.db.one("SELECT user_a, user_b FROM dms WHERE channel_id=?", (cid,))
        return [] if row is None else [row[0], row[1]]

    def create_category(self, sid: str, name: str, *, is_private: bool = False) -> str:
        """Create a category at the next position; return its id."""
        self.servers.server_row(sid)
        cid = self.db.new_id()
        pos = self.db.one("SELECT COUNT(*) FROM categories WHERE server_id=?", (sid,))
        self.db.conn.execute("INSERT INTO categories(id, server_id, name, position, is_private) VALUES (?,?,?,?,?)",
                             (cid, sid, name, int(pos[0]) if pos else 0, int(is_private)))
        return cid

    def category_row(self, sid: str, cid: str) -> sqlite3.Row:
        """Return a category row of a server. Raises NotFound."""
        row = self.db.one("SELECT * FROM categories WHERE id=? AND server_id=?", (cid, sid))
        if row is None:
            raise NotFound("categories.errors.not_found")
        return row

    def category(self, sid: str, cid: str) -> dict[str, Any]:
        """Return a Category record with its channels."""
        row = self.category_row(sid, cid)
        return self._category_rec(row)

    def _category_rec(self, row: sqlite3.Row) -> dict[str, Any]:
        chans = self.db.rows("SELECT * FROM channels WHERE category_id=? ORDER BY position, id", (row["id"],))
        return {"publicId": row["id"], "name": row["name"], "position": row["position"],
                "isPrivate": bool(row["is_private"]), "serverPublicId": row["server_id"],
                "channels": [self._channel_rec(c, listing=True) for c in chans]}

    def create_channel(self, sid: str, name: str, ctype: str, *, category_id: str | None = None,
                       is_private: bool = False, description: str | None = None) -> str:
        """Create a channel in a server (optionally in a category); return its id."""
        self.servers.server_row(sid)
        if category_id is not None:
            self.category_row(sid, category_id)
        cid = self.db.new_id()
        if category_id is None:
            pos = self.db.one("SELECT COUNT(*) FROM channels WHERE server_id=? AND category_id IS NULL", (sid,))
        else:
            pos = self.db.one("SELECT COUNT(*) FROM channels WHERE category_id=?", (category_id,))
        self.db.conn.execute(
            "INSERT INTO channels(id, server_id, category_id, name, type, position, is_private, description, "
            "created_at) VALUES (?,?,?,?,?,?,?,?,?)",
            (cid, sid, category_id, name, ctype, int(pos[0]) if pos else 0, int(is_private), description, iso_now()))
        return cid

    def channel_row(self, cid: str) -> sqlite3.Row:
        """Return a channel row (server channel or DM). Raises NotFound."""
        row = self.db.one("SELECT * FROM channels WHERE id=?", (cid,))
        if row is None:
            raise NotFound("channels.errors.not_found")
        return row

    @staticmethod
    def _channel_rec(row: sqlite3.Row, *, listing: bool = False) -> dict[str, Any]:
        rec: dict[str, Any] = {"publicId": row["id"], "name": row["name"], "type": row["type"]}
        if not listing:
            rec["serverPublicId"] = row["server_id"]
        rec.update({"categoryId": row["category_id"], "isPrivate": bool(row["is_private"]),
                    "description": row["description"], "position": row["position"],
                    "createdAt": row["created_at"]})
        return rec

    def channel(self, cid: str) -> dict[str, Any]:
        """Return a Channel record with ``serverPublicId`` (null for a DM)."""
        return self._channel_rec(self.channel_row(cid))

    def channels_of(self, sid: str) -> list[dict[str, Any]]:
        """Return every channel record of a server (categorised first, then uncategorised)."""
        listing = self.listing(sid)
        out: list[dict[str, Any]] = ([c for cat in listing["categories"] for c in cat["channels"]]
                                     + listing["uncategorizedChannels"])
        for c in out:
            c["serverPublicId"] = sid
        return out

    def channel_ids_of(self, sid: str) -> list[str]:
        """Return the ids of a server's channels."""
        return [r[0] for r in self.db.rows("SELECT id FROM channels WHERE server_id=?", (sid,))]

    def listing(self, sid: str, *, viewer: str | None = None) -> dict[str, Any]:
        """Return the category listing ``{categories, uncategorizedChannels}``, sorted by position.

        With ``viewer``, only the channels that user may view are listed, and a category the
        user may not view is left out when none of its channels is visible.
        """
        self.servers.server_row(sid)
        cats = [self._category_rec(r) for r in
                self.db.rows("SELECT * FROM categories WHERE server_id=? ORDER BY position, id", (sid,))]
        unc = [self._channel_rec(r, listing=True) for r in self.db.rows(
            "SELECT * FROM channels WHERE server_id=? AND category_id IS NULL ORDER BY position, id", (sid,))]
        if viewer is not None:
            visible = set(self.visible_channel_ids_in(sid, viewer))
            unc = [c for c in unc if c["publicId"] in visible]
            kept = []
            for cat in cats:
                cat["channels"] = [c for c in cat["channels"] if c["publicId"] in visible]
                if cat["channels"] or self.category_permissions(sid, cat["publicId"], viewer) & PERM["VIEW_CHANNELS"]:
                    kept.append(cat)
            cats = kept
        return {"categories": cats, "uncategorizedChannels": unc}

    def update_channel(self, cid: str, fields: dict[str, Any]) -> None:
        """Change a channel's ``name`` and/or ``description``."""
        self.channel_row(cid)
        for key, col in (("name", "name"), ("description", "description")):
            if key in fields:
                self.db.conn.execute(f"UPDATE channels SET {col}=? WHERE id=?", (fields[key], cid))

    def delete_channel(self, cid: str) -> None:
        """Delete a channel and its messages."""
        self.channel_row(cid)
        with self.db.conn:
            self.db.delete_channel_rows(cid)

    def can_view(self, cid: str, uid: str) -> bool:
        """Whether the user may see a channel (DM participant, or member with VIEW_CHANNELS once
        the channel's overrides and ``isPrivate`` are applied: :meth:`channel_permissions`)."""
        row = self.db.one("SELECT server_id FROM channels WHERE id=?", (cid,))
        if row is None:
            return False
        if row[0] is None:
            return self.db.one("SELECT 1 FROM dms WHERE channel_id=? AND (user_a=? OR user_b=?)",
                               (cid, uid, uid)) is not None
        return bool(self.channel_permissions(cid, uid) & PERM["VIEW_CHANNELS"])

    def visible_channel_ids(self, uid: str) -> list[str]:
        """Return every channel id (server channels and DMs) the user may view."""
        out = [r[0] for r in self.db.rows("SELECT channel_id FROM dms WHERE user_a=? OR user_b=?", (uid, uid))]
        for sid in self.servers.server_ids_of(uid):
            out.extend(self.visible_channel_ids_in(sid, uid))
        return out

    def _member_context(self, sid: str, uid: str) -> tuple[int, str | None, frozenset[str]] | None:
        """``(server permissions, @everyone role id, the member's other role ids)``, or None when
        ``uid`` is not a member of ``sid``."""
        if not self.members.is_member(sid, uid):
            return None
        everyone = self.db.one("SELECT id FROM roles WHERE server_id=? AND everyone=1", (sid,))
        roles = frozenset(r[0] for r in self.db.rows(
            "SELECT role_id FROM member_roles WHERE server_id=? AND user_id=?", (sid, uid)))
        return self.members.permissions(sid, uid), None if everyone is None else str(everyone[0]), roles

    @staticmethod
    def _apply_overrides(base: int, everyone_id: str | None, role_ids: frozenset[str], uid: str,
                         rows: list[sqlite3.Row], private: bool) -> int:
        """Apply a scope's overrides to a member's server permissions.

        Owner and ``ADMINISTRATOR`` (``base`` with the ADMINISTRATOR bit) keep everything.
        Otherwise, in order: a private scope drops VIEW_CHANNELS; the ``@everyone`` override
        (deny, then allow); the member's role overrides together (every deny, then every allow);
        the member's own override (deny, then allow).
        """
        if base & PERM["ADMINISTRATOR"]:
            return ALL_PERMISSIONS
        if private:
            base &= ~PERM["VIEW_CHANNELS"]
        everyone = member = None
        role_allow = role_deny = 0
        for r in rows:
            if r["type"] == "ROLE":
                if r["target_id"] == everyone_id:
                    everyone = r
                elif r["target_id"] in role_ids:
                    role_allow |= int(r["allow"])
                    role_deny |= int(r["deny"])
            elif r["target_id"] == uid:
                member = r
        if everyone is not None:
            base = (base & ~int(everyone["deny"])) | int(everyone["allow"])
        base = (base & ~role_deny) | role_allow
        if member is not None:
            base = (base & ~int(member["deny"])) | int(member["allow"])
        return base

    def _override_rows(self, scope_id: str) -> list[sqlite3.Row]:
        return self.db.rows("SELECT * FROM overrides WHERE scope_id=? ORDER BY seq", (scope_id,))

    def channel_permissions(self, cid: str, uid: str) -> int:
        """A member's permissions in one server channel, overrides and ``isPrivate`` applied.

        0 for an unknown channel, a DM or a non-member. Only VIEW_CHANNELS and SEND_MESSAGES
        are checked per channel; every other check uses the server permissions.
        """
        row = self.db.one("SELECT server_id, is_private FROM channels WHERE id=?", (cid,))
        if row is None or row[0] is None:
            return 0
        ctx = self._member_context(row[0], uid)
        if ctx is None:
            return 0
        base, everyone_id, roles = ctx
        return self._apply_overrides(base, everyone_id, roles, uid, self._override_rows(cid), bool(row[1]))

    def category_permissions(self, sid: str, cat_id: str, uid: str) -> int:
        """A member's permissions in a category (its overrides and ``isPrivate`` applied); 0 if unknown."""
        row = self.db.one("SELECT is_private FROM categories WHERE id=? AND server_id=?", (cat_id, sid))
        ctx = self._member_context(sid, uid)
        if row is None or ctx is None:
            return 0
        base, everyone_id, roles = ctx
        return self._apply_overrides(base, everyone_id, roles, uid, self._override_rows(cat_id), bool(row[0]))

    def visible_channel_ids_in(self, sid: str, uid: str) -> list[str]:
        """The ids of the channels of one server that a user may view (overrides applied)."""
        ctx = self._member_context(sid, uid)
        if ctx is None:
            return []
        base, everyone_id, roles = ctx
        channels = self.db.rows("SELECT id, is_private FROM channels WHERE server_id=?", (sid,))
        if base & PERM["ADMINISTRATOR"]:
            return [str(c[0]) for c in channels]
        rows: dict[str, list[sqlite3.Row]] = {}
        for r in self.db.rows("SELECT * FROM overrides WHERE server_id=? ORDER BY seq", (sid,)):
            rows.setdefault(r["scope_id"], []).append(r)
        return [str(c[0]) for c in channels
                if self._apply_overrides(base, everyone_id, roles, uid, rows.get(c[0], []), bool(c[1]))
                & PERM["VIEW_CHANNELS"]]

    def may_send(self, cid: str, uid: str) -> bool:
        """Whether a user may post in a channel: a DM participant, or VIEW_CHANNELS and
        SEND_MESSAGES once overrides are applied."""
        row = self.db.one("SELECT server_id FROM channels WHERE id=?", (cid,))
        if row is None:
            return False
        if row[0] is None:
            return uid in self.dm_participants(cid)
        perms = self.channel_permissions(cid, uid)
        return bool(perms & PERM["VIEW_CHANNELS"]) and bool(perms & PERM["SEND_MESSAGES"])

    def override_scope(self, scope_id: str) -> tuple[str, str]:
        """``("channel" | "category", server id)`` of a server channel or category id.

        Raises:
            NotFound: Neither a server channel nor a category (a DM counts as not found).
        """
        row = self.db.one("SELECT server_id FROM channels WHERE id=?", (scope_id,))
        if row is not None and row[0] is not None:
            return "channel", str(row[0])
        row = self.db.one("SELECT server_id FROM categories WHERE id=?", (scope_id,))
        if row is not None:
            return "category", str(row[0])
        raise NotFound("channels.errors.not_found")

    def _override_rec(self, row: sqlite3.Row) -> dict[str, Any]:
        name: str | None = None
        if row["type"] == "ROLE":
            r = self.db.one("SELECT name FROM roles WHERE id=?", (row["target_id"],))
            name = None if r is None else r[0]
        else:
            try:
                name = self.users.user(row["target_id"])["name"]
            except NotFound:
                name = None
        return {"id": row["id"], "type": row["type"], "targetId": row["target_id"], "targetName": name,
                "allow": str(row["allow"]), "deny": str(row["deny"])}

    def overrides(self, scope_id: str) -> list[dict[str, Any]]:
        """The Override records of a channel or category, oldest first."""
        return [self._override_rec(r) for r in self._override_rows(scope_id)]

    def set_override(self, sid: str, scope_id: str, target_id: str, kind: str, allow: int, deny: int) -> bool:
        """Create or replace the override of ``target_id`` on a scope; return True when created.

        Raises:
            BadRequest: The scope already holds :data:`MAX_OVERRIDES` overrides.
        """
        row = self.db.one("SELECT id FROM overrides WHERE scope_id=? AND target_id=?", (scope_id, target_id))
        if row is not None:
            self.db.conn.execute("UPDATE overrides SET type=?, allow=?, deny=? WHERE id=?",
                                 (kind, str(allow), str(deny), row[0]))
            return False
        count = self.db.one("SELECT COUNT(*) FROM overrides WHERE scope_id=?", (scope_id,))
        if count is not None and int(count[0]) >= MAX_OVERRIDES:
            raise BadRequest("channels.errors.too_many_overrides")
        self._insert_override(sid, scope_id, target_id, kind, allow, deny)
        return True

    def _insert_override(self, sid: str, scope_id: str, target_id: str, kind: str, allow: int, deny: int) -> None:
        """Add a new override after every existing one (``seq``)."""
        seq = self.db.one("SELECT COALESCE(MAX(seq), 0) + 1 FROM overrides")
        self.db.conn.execute(
            "INSERT INTO overrides(id, server_id, scope_id, target_id, type, allow, deny, seq) VALUES (?,?,?,?,?,?,?,?)",
            (self.db.new_id(), sid, scope_id, target_id, kind, str(allow), str(deny), int(seq[0]) if seq else 1))

    def grant_creator(self, sid: str, scope_id: str, uid: str) -> None:
        """Give the member who created a private channel or category its own MEMBER override
        allowing VIEW_CHANNELS and SEND_MESSAGES: merged into an override it already has there
        (copied from a category), else a new one, even when the scope is at :data:`MAX_OVERRIDES`
        (the creator never loses what it just made)."""
        bits = PERM["VIEW_CHANNELS"] | PERM["SEND_MESSAGES"]
        row = self.db.one("SELECT id, allow, deny FROM overrides WHERE scope_id=? AND target_id=?", (scope_id, uid))
        if row is not None:
            self.db.conn.execute("UPDATE overrides SET type='MEMBER', allow=?, deny=? WHERE id=?",
                                 (str(int(row["allow"]) | bits), str(int(row["deny"]) & ~bits), row["id"]))
            return
        self._insert_override(sid, scope_id, uid, "MEMBER", bits, 0)

    def delete_override(self, scope_id: str, override_id: str) -> None:
        """Delete one override of a scope. Raises NotFound."""
        if self.db.conn.execute("DELETE FROM overrides WHERE scope_id=? AND id=?", (scope_id, override_id)).rowcount == 0:
            raise NotFound("overrides.errors.not_found")

    def _copy_overrides(self, sid: str, source: str, target: str) -> None:
        """Replace ``target``'s overrides with copies of ``source``'s (new ids)."""
        self.db.conn.execute("DELETE FROM overrides WHERE scope_id=?", (target,))
        for r in self._override_rows(source):
            self.set_override(sid, target, r["target_id"], r["type"], int(r["allow"]), int(r["deny"]))

    def inherit_category(self, cid: str) -> None:
        """Give a new channel its category's overrides, and make it private when the category is."""
        row = self.channel_row(cid)
        if row["category_id"] is None:
            return
        cat = self.category_row(row["server_id"], row["category_id"])
        with self.db.conn:
            self._copy_overrides(row["server_id"], cat["id"], cid)
            if cat["is_private"]:
                self.db.conn.execute("UPDATE channels SET is_private=1 WHERE id=?", (cid,))

    def sync_channel(self, cid: str) -> None:
        """Copy the parent category's overrides and ``isPrivate`` onto a channel.

        Raises:
            NotFound: Unknown channel. BadRequest: The channel has no category.
        """
        row = self.channel_row(cid)
        if row["server_id"] is None or row["category_id"] is None:
            raise BadRequest("channels.errors.no_category")
        cat = self.category_row(row["server_id"], row["category_id"])
        with self.db.conn:
            self._copy_overrides(row["server_id"], cat["id"], cid)
            self.db.conn.execute("UPDATE channels SET is_private=? WHERE id=?", (cat["is_private"], cid))

    def sync_category(self, sid: str, cat_id: str) -> list[str]:
        """Copy a category's overrides and ``isPrivate`` onto each of its channels; return their ids."""
        cat = self.category_row(sid, cat_id)
        ids = [str(r[0]) for r in self.db.rows("SELECT id FROM channels WHERE category_id=?", (cat_id,))]
        with self.db.conn:
            for cid in ids:
                self._copy_overrides(sid, cat_id, cid)
                self.db.conn.execute("UPDATE channels SET is_private=? WHERE id=?", (cat["is_private"], cid))
        return ids

    def update_category(self, sid: str, cat_id: str, fields: dict[str, Any]) -> None:
        """Change a category's ``name`` and/or ``isPrivate``."""
        self.category_row(sid, cat_id)
        if "name" in fields:
            self.db.conn.execute("UPDATE categories SET name=? WHERE id=?", (fields["name"], cat_id))
        if "isPrivate" in fields:
            self.db.conn.execute("UPDATE categories SET is_private=? WHERE id=?", (int(fields["isPrivate"]), cat_id))

    def delete_category(self, sid: str, cat_id: str) -> list[str]:
        """Delete a category (and its overrides); its channels become uncategorised, after the
        existing uncategorised ones. Returns the ids of the channels moved."""
        self.category_row(sid, cat_id)
        moved = [str(r[0]) for r in self.db.rows(
            "SELECT id FROM channels WHERE category_id=? ORDER BY position, id", (cat_id,))]
        count = self.db.one("SELECT COUNT(*) FROM channels WHERE server_id=? AND category_id IS NULL", (sid,))
        start = int(count[0]) if count else 0
        with self.db.conn:
            for offset, cid in enumerate(moved):
                self.db.conn.execute("UPDATE channels SET category_id=NULL, position=? WHERE id=?", (start + offset, cid))
            self.db.conn.execute("DELETE FROM overrides WHERE scope_id=?", (cat_id,))
            self.db.conn.execute("DELETE FROM categories WHERE id=?", (cat_id,))
        return moved

    def duplicate_channel(self, cid: str) -> str:
        """Create a copy of a server channel (name, type, category, ``isPrivate``, description and
        overrides; no messages) at the end of its category; return the new id.

        Raises:
            NotFound: Unknown channel. BadRequest: A DM.
        """
        row = self.channel_row(cid)
        if row["server_id"] is None:
            raise BadRequest("channels.errors.not_a_server_channel")
        new = self.create_channel(row["server_id"], row["name"], row["type"], category_id=row["category_id"],
                                  is_private=bool(row["is_private"]), description=row["description"])
        with self.db.conn:
            self._copy_overrides(row["server_id"], cid, new)
        return new
