"""``VoiceStateManager``: ``client.voice_states``, who is in which voice channel, muted, speaking..."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..models.collection import Collection
from ..models.voice_state import STATE_KEYS, VoiceState
from .base import BaseManager

__all__ = ["VoiceStateManager"]


class VoiceStateManager(BaseManager[str, VoiceState]):
    """The current voice state of each known user, keyed by user id.

    Fed only by ``voice:*`` socket events, never by a request: a channel snapshot
    (``voice:state-update``, ``voice:user-joined``, ``voice:user-left``)
    replaces every entry of that channel; a leave removes the leaver's entry;
    ``voice:user-state`` merges into an existing entry only. Thread-safe:
    each event's change is applied atomically. The event reference
    (``docs/events.rst``) lists the ``voice_*`` events that carry these
    changes to listeners.
    """

    __slots__ = ()
    model = VoiceState

    def _key_of(self, obj: Any) -> str:
        return obj.user_id  # type: ignore[no-any-return]

    def in_channel(self, channel_id: str) -> Collection[str, VoiceState]:
        """The cached states of one voice channel: a snapshot :class:`Collection` keyed by user id.

        No request; iterating gives user ids, ``.values()`` the states.
        """
        return Collection((uid, s) for uid, s in self.cache.items() if s.channel_id == channel_id)

    def replace_channel(self, channel_id: str, users: Iterable[Mapping[str, Any]]) -> None:
        """Replace every entry of ``channel_id`` with the snapshot ``users``.

        Raises:
            TypeError, ValueError: A malformed voice user (nothing is changed).
        """
        states = [VoiceState(self._state, u, channel_id=channel_id) for u in users]
        cache = self.cache
        with cache.atomic():
            for key in [k for k, s in cache.items() if s.channel_id == channel_id]:
                del cache[key]
            for state in states:
                dict.__setitem__(cache, state.user_id, state)

    def remove(self, user_id: str, channel_id: str | None = None) -> VoiceState | None:
        """Remove a user's entry (only if it is in ``channel_id`` when given)."""
        cache = self.cache
        with cache.atomic():
            state = cache.get(user_id)
            if state is None or (channel_id is not None and state.channel_id != channel_id):
                return None
            del cache[user_id]
            return state

    def merge(self, user_id: str, patch: Mapping[str, Any], channel_id: str | None = None) -> VoiceState | None:
        """Merge state fields into an existing entry only; returns it, or None when absent."""
        cache = self.cache
        with cache.atomic():
            state = cache.get(user_id)
            if state is None or (channel_id is not None and state.channel_id not in (None, channel_id)):
                return None
            merged = dict(state.raw)
            for key in STATE_KEYS:
                if key in patch:
                    merged[key] = patch[key]
            fresh = VoiceState(self._state, merged, channel_id=state.channel_id)
            cache.__setitem__(user_id, fresh)  # readers never see a half-merged entry
            return fresh
