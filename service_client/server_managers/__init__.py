"""Per-server managers: what one server holds, and the requests its models share.

A :class:`~service_client.Guild` holds one of each: ``guild.roles``
(:class:`~.roles.RoleManager`), ``guild.emojis`` (:class:`~.emojis.EmojiManager`),
``guild.invites`` (:class:`~.invites.InviteManager`), and the views ``guild.channels`` and
``guild.categories`` (:mod:`.channels`). :class:`~.base.BaseManager` is the base of every
manager, these and the client-wide ones in :mod:`service_client.managers`. The private
:mod:`._moderation` (kick, ban, unban) and :mod:`._overwrites` (permission overwrites) are
the requests a server's models share.

This package sits in the models' layer, beside :mod:`service_client.models`: a server model
holds its managers, and the managers build models. It re-exports nothing (import each name
from its module, or from :mod:`service_client.managers`), so that importing one of its modules
never loads the others in the middle of loading the models.
"""
